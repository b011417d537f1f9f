/*
 * stats: summary statistics of timing samples (median, mean, standard error
 * of the mean, min) and the geometric mean used for speedups.  Works on
 * caller-owned arrays; stats_summarize sorts a private copy.
 */
#ifndef KSCI_STATS_H
#define KSCI_STATS_H

#include <stddef.h>

struct stats {
	double median, mean, sem, min, max, stddev;
	size_t n;
};

/* -1 only if n == 0 or out of memory. */
int stats_summarize(const double *x, size_t n, struct stats *out);
/* Geometric mean of positive values; NAN if any is not positive or n == 0. */
double stats_geomean(const double *x, size_t n);

/* The timing cross-check of GPU batches, on medians over a size's batches
 * (one batch jitters by a context switch): excess_s is what the judge's
 * clock saw beyond the device's events on the default stream, less the
 * exchange's own cost; batch_s the batch's time.  1 when the events clearly
 * missed work (left on another stream): more than a tenth of the batch
 * plus 30 us. */
int stats_xcheck_disagree(double excess_s, double batch_s);
/* The cross-check beyond doubt, after an attempt's first two batches of a
 * role: 1 when each saw more than XCHECK_FAR_S and more than half of its
 * batch (batch_s[i], the batch less the exchange) beyond the events
 * (excess_s[i]) — no honest transient does that twice (the largest seen:
 * 3 ms of a 22 ms batch, a pipeline's contexts starting; a context's own
 * start 0.14-0.35 s) — and then stats_xcheck_disagree holds on their
 * medians, so an attempt can end there (the hog: 6.4 s batches). */
#define XCHECK_FAR_S 1.0
int stats_xcheck_far(const double excess_s[2], const double batch_s[2]);

/* The judge's exchange with a child (the wall it adds to every batch,
 * measured with empty calls and subtracted) as a share of one batch of n
 * calls of per_call_s each: exch_s / (n per_call_s + exch_s); 0 where
 * exch_s <= 0.  Where it is large, the batch's (wall - exchange) is the
 * exchange's noise more than the kernel (under a CPU load a c size whose
 * exchange cost 5.9 ms gave a candidate 1e-6 us a call and a speed-up of
 * 2.5e9). */
double stats_exchange_share(double exch_s, double per_call_s, double n);
/* The fewest calls a batch needs for the exchange to be at most share of
 * it (0 < share < 1): exch_s (1 - share) / (share per_call_s); 1 where
 * exch_s <= 0, HUGE_VAL where per_call_s <= 0. */
double stats_exchange_calls(double exch_s, double per_call_s, double share);

/* The standard error of the log of the median of x[0..n), from order
 * statistics: the interval [x(k), x(n-1-k)] that holds the median with
 * about 95 % (the binomial's normal approximation; min and max below 10
 * samples), divided by 2 x 1.96 on the log scale.  Distribution-free: a
 * batch descheduled by the OS moves the mean's SEM, not this.  NAN when
 * n < 2 or a value is not > 0. */
double stats_median_log_se(const double *x, size_t n);
/* The standard error of the median of x[0..n), from the median absolute
 * deviation: 1.2533 x 1.4826 x MAD / sqrt(n) (the median's asymptotic
 * error, sqrt(pi/2) sd / sqrt(n), with the MAD's consistent estimate of sd).
 * ktime --stop-stat median stops on it: a batch or two slowed by the system
 * widen the mean's SEM, not this, and the median is what a record reports.
 * NAN when n < 2. */
double stats_median_se(const double *x, size_t n);
/* The standard error of the mean log-ratio of paired samples a[i] / b[i],
 * i < n (sd of the n differences of logs / sqrt(n)): how well the ratio of
 * two roles timed in the same rounds is known.  Noise the two share (the
 * device warming or cooling across a size's rounds) cancels in each pair;
 * noise of their own adds (independent noise of relative sd s in each: about
 * sqrt(2) s / sqrt(n)).  ktime --stop-stat paired stops on it.  NAN when
 * n < 2 or a value is not > 0. */
double stats_paired_log_se(const double *a, const double *b, size_t n);
/* The 95 % interval of a geometric mean of k ratios whose log standard
 * errors are se[0..k) and share the floor (one judge's offset moves every
 * size alike, so the floor is not averaged down): lo and hi around g. */
void stats_geomean_ci(double g, const double *se, size_t k, double floor, double *lo, double *hi);

/* Early rejection beyond doubt: 1 when even the candidate's fastest batch
 * against the seed's slowest (seed_ref, the seed's median from an anchor,
 * where ns == 0) gives a speed-up over the seed below bound / factor.
 * Noise only lengthens batches, so this can call a candidate slow only if
 * every one of its batches was slowed by factor or more.  0 where nc == 0,
 * a time is not > 0 or bound, factor are not > 0. */
int stats_far_below(const double *cand, size_t nc, const double *seed, size_t ns, double seed_ref, double bound,
		    double factor);

/* Coefficient of variation (stddev / mean) of n values; NAN if n < 2. */
double stats_cv(const double *x, size_t n);

/* The GPU warm-up's clock check: 1 when the SM clock read now is at least
 * (1 - tol) of ref (the median of the judge's last timed loop), 0 where
 * either is not finite and positive — no reading means no shortcut. */
int stats_clock_back(double now_mhz, double ref_mhz, double tol);

#endif
