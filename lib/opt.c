/* opt: see opt.h. */
#include "opt.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* strto* skip leading space and accept an empty tail; a value must be all digits. */
static int whole(const char *s, const char *end)
{
	return *s && !isspace((unsigned char)*s) && end != s && !*end;
}

int opt_double(const char *name, const char *s, double lo, double hi, double *out, char *e)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (!whole(s, end) || isnan(v))
		return errf(e, "%s: \"%s\" is not a number", name, s);
	if (errno == ERANGE || !isfinite(v) || v < lo || v > hi)
		return errf(e, "%s: %s is outside %g..%g", name, s, lo, hi);
	*out = v;
	return 0;
}

int opt_long(const char *name, const char *s, long lo, long hi, long *out, char *e)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (!whole(s, end))
		return errf(e, "%s: \"%s\" is not an integer", name, s);
	if (errno == ERANGE || v < lo || v > hi)
		return errf(e, "%s: %s is outside %ld..%ld", name, s, lo, hi);
	*out = v;
	return 0;
}

int opt_u64(const char *name, const char *s, uint64_t *out, char *e)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (!whole(s, end))
		return errf(e, "%s: \"%s\" is not an integer", name, s);
	/* strtoull takes "-1" as ULLONG_MAX: a sign is out of range, not a number. */
	if (errno == ERANGE || *s == '-')
		return errf(e, "%s: %s is outside 0..%llu", name, s, (unsigned long long)UINT64_MAX);
	*out = v;
	return 0;
}

int opt_choice(const char *name, const char *s, const char *const *choices, int *out, char *e)
{
	char list[256] = "";
	size_t len = 0;
	for (int i = 0; choices[i]; i++) {
		if (strcmp(s, choices[i]) == 0) {
			*out = i;
			return 0;
		}
		int w = snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", choices[i]);
		len = w > 0 && (size_t)w < sizeof list - len ? len + (size_t)w : len;
	}
	return errf(e, "%s: \"%s\" is not one of %s", name, s, list);
}
