/*
 * par: run fn(ctx, k) for k in [0, n) on all cores (at most 32 threads),
 * each k exactly once; the calling thread works too, and alone where
 * threads cannot be made.  The judge fills and compares large arrays with
 * it.  Nothing is allocated that outlives the call.
 */
#ifndef KSCI_PAR_H
#define KSCI_PAR_H

#include <stdint.h>

void par_chunks(int64_t n, void (*fn)(void *ctx, int64_t k), void *ctx);

#endif
