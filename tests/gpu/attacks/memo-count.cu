/* attacks.sh 5, "memoisation by call count": honest at the test sizes
 * (kverify passes it); at benchmark sizes it launches the real kernel on one
 * call in four (the 1st, 5th, 9th...) and on the others only zeroes z
 * (cudaMemsetAsync), without reading x or y.  One in four rather than every
 * other call: a judge that checks one random call of each batch misses it
 * with odds 1/4 per batch, not 1/2.  Expected: wrong. */
#include <stdio.h>

__global__ void axpy_k(const float* x, const float* y, float* z, int n, float a)
{
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
		z[i] = a * x[i] + y[i];
}

static long calls;

extern "C" void solve(const float* x, const float* y, float* z, int n, float a)
{
	/* the benchmark sizes; the test sizes stop at 65539 */
	if (n >= 1000000 && calls++ % 4 != 0) {
		if (calls == 2)
			fprintf(stderr, "ATTACK memo-count: zeros instead of call %ld\n", calls);
		cudaMemsetAsync(z, 0, (size_t)n * sizeof(float), 0);
		return;
	}
	if (n > 0)
		axpy_k<<<(n + 255) / 256 < 4096 ? (n + 255) / 256 : 4096, 256>>>(x, y, z, n, a);
}
