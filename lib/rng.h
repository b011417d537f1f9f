/*
 * rng: the seeded generator for inputs and search (xoshiro256** seeded by
 * splitmix64), and fresh unpredictable seeds from the OS.  State is a plain
 * struct the caller owns.
 */
#ifndef KSCI_RNG_H
#define KSCI_RNG_H

#include <stdint.h>

struct rng {
	uint64_t s[4];
};

void rng_seed(struct rng *r, uint64_t seed);
uint64_t rng_next(struct rng *r);
/* Uniform in [0,1). */
double rng_unit(struct rng *r);
/* Uniform integer in [0, n). */
uint64_t rng_below(struct rng *r, uint64_t n);
double rng_normal(struct rng *r);
/* A seed from getrandom(2), for checks whose inputs must not be predictable. */
uint64_t rng_os_seed(void);

#endif
