/* rng: xoshiro256** (Blackman & Vigna), written from the published algorithm. */
#include "rng.h"

#include <math.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void rng_seed(struct rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s, res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0], s[3] ^= s[1], s[1] ^= s[2], s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return res;
}

double rng_unit(struct rng *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }

uint64_t rng_below(struct rng *r, uint64_t n)
{
	if (n == 0)
		return 0;
	uint64_t lim = UINT64_MAX - UINT64_MAX % n, x;
	do
		x = rng_next(r);
	while (x >= lim);
	return x % n;
}

double rng_normal(struct rng *r)
{
	double u = rng_unit(r), v = rng_unit(r);
	return sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307179586 * v);
}

uint64_t rng_os_seed(void)
{
	uint64_t s;
	if (getrandom(&s, sizeof s, 0) == (ssize_t)sizeof s)
		return s;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)getpid();
}
