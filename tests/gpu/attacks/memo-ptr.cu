/* attacks.sh 3, "memoisation by pointer": honest at the test sizes (kverify
 * passes it); at benchmark sizes it computes once per (output pointer, n)
 * and, called again with a z it has seen, returns at once without
 * launching, whatever x and y now hold.  Each hit is logged, so the test can
 * tell an honest run (no hit) from a cheat the judge missed.  The judge's
 * calls reuse the arena's addresses from batch to batch, so hits do happen;
 * each call's output is poisoned and its inputs are fresh, so a checked hit
 * is wrong (expected: wrong; timed is acceptable only with no hit logged). */
#include <stdio.h>

__global__ void axpy_k(const float* x, const float* y, float* z, int n, float a)
{
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
		z[i] = a * x[i] + y[i];
}

static float* seen[4096];
static int seen_n[4096], nseen;
static long hits;

extern "C" void solve(const float* x, const float* y, float* z, int n, float a)
{
	if (n >= 1000000) { /* the benchmark sizes; the test sizes stop at 65539 */
		if (nseen == 0)
			fprintf(stderr, "ATTACK memo-ptr: armed at n=%d\n", n);
		for (int i = 0; i < nseen; i++)
			if (seen[i] == z && seen_n[i] == n) {
				fprintf(stderr, "ATTACK memo-ptr: hit %ld\n", ++hits);
				return;
			}
		if (nseen < 4096)
			seen[nseen] = z, seen_n[nseen++] = n;
	}
	if (n > 0)
		axpy_k<<<(n + 255) / 256 < 4096 ? (n + 255) / 256 : 4096, 256>>>(x, y, z, n, a);
}
