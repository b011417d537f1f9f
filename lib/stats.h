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

#endif
