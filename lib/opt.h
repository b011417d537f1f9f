/*
 * opt: the one parser of numeric option values (sbase's estrtonum) for the
 * tools' getopt loops.  A value is the whole argument, decimal, without
 * leading space, and inside lo..hi; otherwise errbuf (ERRBUF bytes) gets one
 * of the two messages every tool prints, and -1 is returned:
 *
 *   --budget: "1x" is not a number        (opt_double)
 *   --children: "x" is not an integer     (opt_long, opt_u64)
 *   --budget: 0 is outside 0.001..3600    (out of range, overflow included)
 *   --retime: "x" is not one of full, confirm   (opt_choice)
 *
 * *out is written only on success.  No allocation.
 */
#ifndef KSCI_OPT_H
#define KSCI_OPT_H

#include <stdint.h>

#include "err.h"

int opt_double(const char *name, const char *s, double lo, double hi, double *out, char *errbuf);
int opt_long(const char *name, const char *s, long lo, long hi, long *out, char *errbuf);
/* 0..UINT64_MAX. */
int opt_u64(const char *name, const char *s, uint64_t *out, char *errbuf);
/* One of the NULL-terminated words in choices: *out its index. */
int opt_choice(const char *name, const char *s, const char *const *choices, int *out, char *errbuf);

#endif
