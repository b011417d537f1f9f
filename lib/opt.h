/*
 * opt: range-checked numeric option values (strtonum-style) for the tools'
 * getopt loops.  No allocation; errbuf gets "--budget: 0 is below 0.001".
 */
#ifndef KSCI_OPT_H
#define KSCI_OPT_H

#include <stdint.h>

#include "err.h"

int opt_double(const char *name, const char *s, double lo, double hi, double *out, char *errbuf);
int opt_long(const char *name, const char *s, long lo, long hi, long *out, char *errbuf);
int opt_u64(const char *name, const char *s, uint64_t *out, char *errbuf);

#endif
