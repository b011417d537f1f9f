/* attacks.sh 13, "skip the write": honest on the first call at each
 * benchmark n (the judge's check before timing), then returns without
 * launching, never writing z again.  Run on axpy_loose (axpy with a
 * tolerance so loose that any finite z passes), so the other calls' outputs
 * left in z would pass; only the poison the judge puts in one 32-byte sector
 * of every KiB of z (lib/gen_value.h) shows the skip (expected: wrong). */
#include <stdio.h>

__global__ void axpy_k(const float* x, const float* y, float* z, int n, float a)
{
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
		z[i] = a * x[i] + y[i];
}

static int last_n = -1;
static long skips;

extern "C" void solve(const float* x, const float* y, float* z, int n, float a)
{
	if (n >= 1000000) { /* the benchmark sizes; the test sizes stop at 65539 */
		if (n == last_n) {
			if (++skips % 1000 == 1)
				fprintf(stderr, "ATTACK skipwrite: skipped %ld at n=%d\n", skips, n);
			return;
		}
		last_n = n;
	}
	if (n > 0)
		axpy_k<<<(n + 255) / 256 < 4096 ? (n + 255) / 256 : 4096, 256>>>(x, y, z, n, a);
}
