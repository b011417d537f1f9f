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

/* The timing cross-check of a device call: host_s is the host time from a
 * full device sync to a full device sync around the call, dev_s the time
 * between events on the default stream, ovh_s the host-minus-event time of
 * an empty call.  1 when the host saw clearly more work than the events
 * (work left on another stream): more than twice the overhead plus 20 us
 * plus a quarter of the event time. */
int stats_xcheck_disagree(double host_s, double dev_s, double ovh_s);
/* Coefficient of variation (stddev / mean) of n values; NAN if n < 2. */
double stats_cv(const double *x, size_t n);

#endif
