/* Unit tests for the timing statistics the CUDA back end relies on: SEM and
 * the stop rule's inputs on fixed samples, the coefficient of variation used
 * for repeatability, geometric means of speedups, and the host/event timing
 * cross-check (the regression guard for work hidden on a side stream). */
#include <math.h>

#include "stats.h"
#include "t.h"

static int near(double a, double b, double tol) { return fabs(a - b) <= tol * fabs(b); }

int main(void)
{
	/* 10 samples: mean 10.35, sample sd 0.7472, sem = sd / sqrt(10). */
	const double x[] = {10, 11, 9, 10.5, 11.5, 10, 9.5, 11, 10.5, 10.5};
	struct stats s;
	T_OK(stats_summarize(x, 10, &s) == 0, "summarize 10 samples");
	T_OK(near(s.mean, 10.35, 1e-12), "mean");
	T_OK(near(s.median, 10.5, 1e-12), "median of an even count is the mean of the middle two");
	T_OK(near(s.stddev, 0.74722, 1e-4), "sample standard deviation (n-1)");
	T_OK(near(s.sem, s.stddev / sqrt(10), 1e-12), "sem = sd / sqrt(n)");
	T_OK(s.min == 9 && s.max == 11.5 && s.n == 10, "min, max, n");
	/* The stop rule: sem <= 0.1% of the mean. 1000 samples alternating
	 * 1.00 and 1.02: sd ~0.01, sem ~3.2e-4, 0.031% of the mean. */
	static double y[1000];
	for (int i = 0; i < 1000; i++)
		y[i] = i % 2 ? 1.02 : 1.00;
	stats_summarize(y, 1000, &s);
	T_OK(s.sem <= 0.001 * s.mean, "1000 samples with 1%% spread meet the 0.1%% SEM rule");
	stats_summarize(y, 10, &s);
	T_OK(!(s.sem <= 0.001 * s.mean), "10 of them do not");
	T_OK(near(stats_cv(y, 1000), 0.01 / 1.01, 1e-2), "coefficient of variation");
	T_OK(isnan(stats_cv(y, 1)), "cv of one value is NaN");
	/* The warm-up's clock check (harness.c, CLOCK_TOL 0.02). */
	T_OK(stats_clock_back(1980, 1980, 0.02), "clock check: the same clock is back");
	T_OK(stats_clock_back(1941, 1980, 0.02), "clock check: 1.97 %% below is within 2 %%");
	T_OK(stats_clock_back(2010, 1980, 0.02), "clock check: above the last loop's is back");
	T_OK(!stats_clock_back(1935, 1980, 0.02), "clock check: 2.3 %% below is not");
	T_OK(!stats_clock_back(345, 1980, 0.02), "clock check: an idle H100's 345 MHz is not");
	T_OK(!stats_clock_back(NAN, 1980, 0.02) && !stats_clock_back(1980, NAN, 0.02),
	     "clock check: no reading, or no last loop, is no shortcut");
	T_OK(!stats_clock_back(0, 0, 0.02) && !stats_clock_back(INFINITY, 1980, 0.02),
	     "clock check: zero or infinite readings are no shortcut");
	const double sp[] = {2, 0.5, 4};
	T_OK(near(stats_geomean(sp, 3), cbrt(4), 1e-12), "geomean of speedups");
	/* Cross-check, medians over a size's batches (H100 figures). */
	T_OK(!stats_xcheck_disagree(4e-6, 5e-3), "a 5 ms batch, 4 us the events did not see: agrees");
	T_OK(!stats_xcheck_disagree(25e-6, 150e-6), "a tiny kernel's batch with 25 us of host jitter agrees");
	T_OK(stats_xcheck_disagree(4.7e-3, 5e-3), "a side-stream kernel (events saw only their own records) disagrees");
	T_OK(stats_xcheck_disagree(1e-3, 2e-3), "half the work hidden disagrees");
	/* hog-attempt-ends-early: the cross-check beyond doubt after two batches
	 * (tests/gpu/attacks.sh's hog: 6.39 s of each 6.40 s batch beyond the
	 * events), and never on what an honest batch has shown. */
	const double hx[] = {6.39, 6.40}, hb[] = {6.40, 6.41};
	T_OK(stats_xcheck_far(hx, hb), "xcheck far: the hog's two batches, nearly all beyond the events");
	const double tx[] = {0.35, 0.35}, tb[] = {0.37, 0.37};
	T_OK(!stats_xcheck_far(tx, tb), "xcheck far: a context's start twice (0.35 s) is not beyond doubt");
	const double ox[] = {6.39, 0.003}, ob[] = {6.40, 0.022};
	T_OK(!stats_xcheck_far(ox, ob), "xcheck far: one batch of two is not");
	const double lx[] = {1.5, 1.5}, lb[] = {20, 20};
	T_OK(!stats_xcheck_far(lx, lb), "xcheck far: 1.5 s of a 20 s batch is not (under half)");
	T_OK(stats_xcheck_disagree((hx[0] + hx[1]) / 2, (hb[0] + hb[1]) / 2),
	     "xcheck far: where it holds, the medians of the two disagree");
	const double nx[] = {NAN, 6.39};
	T_OK(!stats_xcheck_far(nx, hb), "xcheck far: NaN is not beyond doubt");
	/* exchange-dominated-speedup: the exchange's share of a batch, and the
	 * calls a batch needs for it to be a tenth (t81's size under load: 5.9
	 * ms of exchange; the candidate's median after it was clamped to 1e-12 s). */
	T_OK(near(stats_exchange_share(30e-6, 1e-3, 10), 30e-6 / (10e-3 + 30e-6), 1e-12), "30 us against 10 ms of calls");
	T_OK(stats_exchange_share(5.9e-3, 1e-12, 2) > 0.999, "a median clamped to 1e-12 s: the batch is all exchange");
	T_OK(stats_exchange_share(5.9e-3, -1, 2) == 1, "a negative time a call counts as none");
	T_OK(stats_exchange_share(0, 1e-3, 2) == 0 && stats_exchange_share(-1e-6, 1e-3, 2) == 0, "no exchange: 0");
	T_OK(near(stats_exchange_calls(5.9e-3, 4e-3, 0.1), 9 * 5.9e-3 / 4e-3, 1e-12),
	     "5.9 ms of exchange, 4 ms a call: 13.3 calls for a tenth");
	T_OK(near(stats_exchange_share(5.9e-3, 4e-3, stats_exchange_calls(5.9e-3, 4e-3, 0.1)), 0.1, 1e-12),
	     "…and at that many calls the share is a tenth");
	T_OK(stats_exchange_calls(0, 4e-3, 0.1) == 1 && isinf(stats_exchange_calls(1e-3, 0, 0.1)),
	     "no exchange: 1 call; a call of no time: no batch is enough");
	/* slow-candidate-timed-six-batches-before-its-stop: beyond doubt after two
	 * batches a role — the candidate's fastest against the seed's slowest. */
	const double c32[] = {32e-3, 33e-3}, s1[] = {1e-3, 1.1e-3};
	T_OK(stats_far_below(c32, 2, s1, 2, 0, 0.18, 4), "32x slower, bound 0.18: 1.1/32 = 0.034 < 0.045, stopped");
	T_OK(!stats_far_below(c32, 2, s1, 2, 0, 0.1, 4), "…bound 0.1: 0.034 is not below 0.025, not yet");
	const double c32slowed[] = {32e-3, 128e-3}, s1slowed[] = {1e-3, 2e-3};
	T_OK(stats_far_below(c32slowed, 2, s1, 2, 0, 0.18, 4), "one candidate batch slowed 4x: its fastest decides");
	T_OK(!stats_far_below(c32, 2, s1slowed, 2, 0, 0.18, 4), "one seed batch slowed 2x: its slowest decides, 2/32 = 0.0625, not");
	const double c2[] = {2e-3, 2e-3};
	T_OK(!stats_far_below(c2, 2, s1, 2, 0, 1, 4), "2x slower against a bound of 1: 0.55, not below 0.25");
	T_OK(stats_far_below(c32, 2, NULL, 0, 1e-3, 0.18, 4) && !stats_far_below(c32, 2, NULL, 0, 2e-3, 0.18, 4),
	     "no seed batches: the anchor's seed median stands in");
	T_OK(!stats_far_below(c32, 0, s1, 2, 0, 0.18, 4) && !stats_far_below(c32, 2, s1, 2, 0, 0, 4) &&
	     !stats_far_below((const double[]){0, 32e-3}, 2, s1, 2, 0, 0.18, 4) && !stats_far_below(c32, 2, NULL, 0, 0, 0.18, 4),
	     "no batches, no bound, a time of 0, no seed: never");
	/* The median's interval from order statistics (speedup intervals). */
	const double six[] = {1.02, 0.98, 1.0, 1.01, 0.99, 1.0};
	T_OK(near(stats_median_log_se(six, 6), (log(1.02) - log(0.98)) / 3.92, 1e-12),
	     "6 batches: min and max bound the median, /(2 x 1.96) on the log scale");
	double hundred[100];
	for (int i = 0; i < 100; i++)
		hundred[i] = 1 + 0.001 * i;
	/* k = floor((100 - 19.6) / 2) = 40: x(40) and x(59). */
	T_OK(near(stats_median_log_se(hundred, 100), (log(1.059) - log(1.040)) / 3.92, 1e-12),
	     "100 batches: the 41st and 60th values");
	double outlier[] = {1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 50.0};
	T_OK(stats_median_log_se(outlier, 20) == 0, "one descheduled batch in 20 does not widen it (the mean's SEM would)");
	T_OK(isnan(stats_median_log_se(six, 1)) && isnan(stats_median_log_se((const double[]){0, 1}, 2)),
	     "one sample, or a value not > 0: NaN");
	/* The median's standard error from the MAD (ktime --stop-stat median). */
	const double five[] = {5, 1, 4, 2, 3};
	T_OK(near(stats_median_se(five, 5), 1.2533141373155 * 1.482602218505602 * 1.0 / sqrt(5), 1e-12),
	     "median 3, absolute deviations 2 1 0 1 2: MAD 1, x 1.2533 x 1.4826 / sqrt(5)");
	/* Four batches, one of them 0.4 % slow (a seed batch of matmul's on an
	 * H200 kept its size timing to 8-12 batches, docs/gpu.md): the mean's SEM
	 * is 0.131 % of the mean, over ktime's 0.1 %; the median's 0.093 %. */
	const double slow1[] = {1.000, 1.001, 1.002, 1.006};
	struct stats s1st;
	T_OK(stats_summarize(slow1, 4, &s1st) == 0 && s1st.sem > 0.001 * s1st.mean, "one slow batch in 4: the mean's SEM over 0.1 %%");
	T_OK(near(stats_median_se(slow1, 4), 1.2533141373155 * 1.482602218505602 * 0.001 / 2, 1e-9) &&
		     stats_median_se(slow1, 4) < 0.001 * s1st.median,
	     "...the median's under it: MAD 0.001 (deviations 0.0005 0.0005 0.0015 0.0045)");
	T_OK(isnan(stats_median_se(five, 1)), "one sample: NaN");
	/* The paired ratio's standard error (ktime --stop-stat paired).  Two
	 * roles that drift together by 0.2 % a round (a device warming after an
	 * idle compile): each role's mean has a SEM far over 0.1 %, their ratio
	 * none at all. */
	const double drift_a[] = {1.000, 1.002, 1.004, 1.006}, drift_b[] = {2.000, 2.004, 2.008, 2.012};
	struct stats dst;
	T_OK(stats_summarize(drift_a, 4, &dst) == 0 && dst.sem > 0.001 * dst.mean, "shared drift: the mean's SEM over 0.1 %%");
	T_OK(stats_paired_log_se(drift_a, drift_b, 4) < 1e-12, "...the paired ratio's nothing (every ratio 1/2)");
	/* Noise of each role's own: differences of logs d = -0.001 0.001 -0.001
	 * 0.001 (b steady): mean 0, sd 0.0011547, over sqrt(4). */
	const double own_a[] = {0.999, 1.001, 0.999, 1.001}, steady[] = {1, 1, 1, 1};
	double d[4], dm = 0, dv = 0;
	for (int i = 0; i < 4; i++)
		d[i] = log(own_a[i]), dm += d[i] / 4;
	for (int i = 0; i < 4; i++)
		dv += (d[i] - dm) * (d[i] - dm) / 3;
	T_OK(near(stats_paired_log_se(own_a, steady, 4), sqrt(dv) / 2, 1e-15), "noise of its own: sd of the log differences / sqrt(n)");
	T_OK(near(stats_paired_log_se(steady, own_a, 4), stats_paired_log_se(own_a, steady, 4), 1e-15), "...the same either way round");
	T_OK(isnan(stats_paired_log_se(own_a, steady, 1)) && isnan(stats_paired_log_se((const double[]){1, 0}, steady, 2)),
	     "one pair, or a value not > 0: NaN");
	double lo, hi, se2[2] = {0.01, 0.01};
	stats_geomean_ci(2.0, se2, 2, 0.0, &lo, &hi);
	T_OK(near(lo, 2.0 * exp(-1.96 * 0.01 / sqrt(2)), 1e-12) && near(hi, 2.0 * exp(1.96 * 0.01 / sqrt(2)), 1e-12),
	     "geomean of two sizes: sampling errors average down by sqrt(2)");
	double se3[2] = {0.005, 0.005};
	stats_geomean_ci(1.0, se3, 2, 0.004, &lo, &hi);
	T_OK(near(log(hi), 1.96 * sqrt(0.000009 / 2 + 0.000016), 1e-12), "…the noise floor does not");
	return T_DONE();
}
