/* opt: see opt.h. */
#include "opt.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

int opt_double(const char *name, const char *s, double lo, double hi, double *out, char *e)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(v))
		return errf(e, "%s: \"%s\" is not a number", name, s);
	if (v < lo || v > hi)
		return errf(e, "%s: %s is outside %g..%g", name, s, lo, hi);
	*out = v;
	return 0;
}

int opt_long(const char *name, const char *s, long lo, long hi, long *out, char *e)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (!*s || *end || errno)
		return errf(e, "%s: \"%s\" is not an integer", name, s);
	if (v < lo || v > hi)
		return errf(e, "%s: %s is outside %ld..%ld", name, s, lo, hi);
	*out = v;
	return 0;
}

int opt_u64(const char *name, const char *s, uint64_t *out, char *e)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (!*s || *end || errno || *s == '-')
		return errf(e, "%s: \"%s\" is not a non-negative integer", name, s);
	*out = v;
	return 0;
}
