/* opt: see opt.h. */
#include "opt.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

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
