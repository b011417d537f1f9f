/* stats: see stats.h.  SEM uses the sample standard deviation (n-1). */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* A sorted copy of x[0..n) for the caller to free; NULL when out of memory. */
static double *sorted_copy(const double *x, size_t n)
{
	double *v = malloc((n ? n : 1) * sizeof *v);
	if (v) {
		memcpy(v, x, n * sizeof *v);
		qsort(v, n, sizeof *v, cmp);
	}
	return v;
}

static double median_sorted(const double *s, size_t n)
{
	return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

int stats_summarize(const double *x, size_t n, struct stats *o)
{
	memset(o, 0, sizeof *o);
	if (n == 0)
		return -1;
	double *s = sorted_copy(x, n);
	if (!s)
		return -1;
	o->n = n;
	o->min = s[0];
	o->max = s[n - 1];
	o->median = median_sorted(s, n);
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += s[i];
	o->mean = sum / (double)n;
	double ss = 0;
	for (size_t i = 0; i < n; i++)
		ss += (s[i] - o->mean) * (s[i] - o->mean);
	o->stddev = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
	o->sem = o->stddev / sqrt((double)n);
	free(s);
	return 0;
}

double stats_geomean(const double *x, size_t n)
{
	if (n == 0)
		return NAN;
	double l = 0;
	for (size_t i = 0; i < n; i++) {
		if (!(x[i] > 0))
			return NAN;
		l += log(x[i]);
	}
	return exp(l / (double)n);
}

double stats_median_log_se(const double *x, size_t n)
{
	double *v = n < 2 ? NULL : sorted_copy(x, n); /* one value has no error */
	if (!v)
		return NAN;
	double kf = floor(((double)n - 1.96 * sqrt((double)n)) / 2);
	size_t k = kf > 0 ? (size_t)kf : 0;
	double lo = v[k], hi = v[n - 1 - k];
	free(v);
	if (!(lo > 0) || !(hi > 0))
		return NAN;
	return (log(hi) - log(lo)) / (2 * 1.96);
}

double stats_median_se(const double *x, size_t n)
{
	double *v = n < 2 ? NULL : sorted_copy(x, n); /* one value has no error */
	if (!v)
		return NAN;
	double m = median_sorted(v, n);
	for (size_t i = 0; i < n; i++)
		v[i] = fabs(v[i] - m);
	qsort(v, n, sizeof *v, cmp);
	double mad = median_sorted(v, n);
	free(v);
	return 1.2533141373155 * 1.482602218505602 * mad / sqrt((double)n);
}

double stats_paired_log_se(const double *a, const double *b, size_t n)
{
	if (n < 2)
		return NAN;
	double mean = 0, m2 = 0; /* Welford's, over the differences of logs */
	for (size_t i = 0; i < n; i++) {
		if (!(a[i] > 0) || !(b[i] > 0))
			return NAN;
		double d = log(a[i]) - log(b[i]), delta = d - mean;
		mean += delta / (double)(i + 1);
		m2 += delta * (d - mean);
	}
	return sqrt(m2 / (double)(n - 1)) / sqrt((double)n);
}

void stats_geomean_ci(double g, const double *se, size_t k, double floor, double *lo, double *hi)
{
	double v = 0;
	for (size_t i = 0; i < k; i++) {
		double sampling = se[i] * se[i] - floor * floor;
		v += sampling > 0 ? sampling : 0;
	}
	double s = sqrt((k ? v / ((double)k * (double)k) : 0) + floor * floor);
	*lo = g * exp(-1.96 * s);
	*hi = g * exp(1.96 * s);
}

int stats_xcheck_disagree(double excess_s, double batch_s)
{
	return excess_s > 0.1 * batch_s + 30e-6;
}

int stats_xcheck_far(const double excess_s[2], const double batch_s[2])
{
	for (int i = 0; i < 2; i++)
		if (!(excess_s[i] > XCHECK_FAR_S && excess_s[i] > 0.5 * batch_s[i]))
			return 0;
	return 1;
}

double stats_exchange_share(double exch_s, double per_call_s, double n)
{
	if (!(exch_s > 0))
		return 0;
	double batch = n * per_call_s;
	return exch_s / ((batch > 0 ? batch : 0) + exch_s);
}

double stats_exchange_calls(double exch_s, double per_call_s, double share)
{
	if (!(exch_s > 0))
		return 1;
	if (!(per_call_s > 0))
		return HUGE_VAL;
	return exch_s * (1 - share) / (share * per_call_s);
}

int stats_far_below(const double *cand, size_t nc, const double *seed, size_t ns, double seed_ref, double bound,
		    double factor)
{
	if (nc == 0 || !(bound > 0) || !(factor > 0))
		return 0;
	double cmin = HUGE_VAL, smax = ns ? 0 : seed_ref;
	for (size_t i = 0; i < nc; i++) {
		if (!(cand[i] > 0))
			return 0;
		cmin = cand[i] < cmin ? cand[i] : cmin;
	}
	for (size_t i = 0; i < ns; i++) {
		if (!(seed[i] > 0))
			return 0;
		smax = seed[i] > smax ? seed[i] : smax;
	}
	return smax > 0 && smax / cmin < bound / factor;
}

double stats_cv(const double *x, size_t n)
{
	struct stats s;
	if (n < 2 || stats_summarize(x, n, &s) < 0 || s.mean == 0)
		return NAN;
	return s.stddev / s.mean;
}

int stats_clock_back(double now_mhz, double ref_mhz, double tol)
{
	return isfinite(now_mhz) && isfinite(ref_mhz) && now_mhz > 0 && ref_mhz > 0 && now_mhz >= (1 - tol) * ref_mhz;
}
