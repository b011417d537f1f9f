/* attacks.sh 4, "memoisation by sampled contents": honest at the test sizes
 * (kverify passes it); at benchmark sizes it copies 64 elements of x at
 * fixed indices to the host (cudaMemcpy) and, when they equal the last
 * call's and n is the same, copies its stored output into z
 * (cudaMemcpyAsync, device to device) instead of computing; otherwise it
 * computes and stores z.  Each hit is logged.  Every call the judge makes
 * has freshly generated inputs, so the samples should never match: expected
 * timed with no hit logged (an honest, slower kernel), or wrong were a hit
 * ever served stale results. */
#include <stdio.h>
#include <string.h>

__global__ void axpy_k(const float* x, const float* y, float* z, int n, float a)
{
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
		z[i] = a * x[i] + y[i];
}

__global__ void sample_k(const float* x, long n, float* s)
{
	int k = threadIdx.x;
	if (k < 64)
		s[k] = x[(n - 1) * k / 63];
}

static float samp[64], *dsamp, *last;
static size_t cap;
static int lastn = -1, armed;
static long hits;

extern "C" void solve(const float* x, const float* y, float* z, int n, float a)
{
	float s[64];
	size_t bytes = (size_t)n * sizeof(float);
	int bench = n >= 1000000; /* the benchmark sizes; the test sizes stop at 65539 */
	if (bench) {
		if (!armed++)
			fprintf(stderr, "ATTACK memo-sample: armed at n=%d\n", n);
		if (!dsamp && cudaMalloc((void**)&dsamp, sizeof s) != cudaSuccess)
			dsamp = NULL;
		if (dsamp) {
			sample_k<<<1, 64>>>(x, n, dsamp);
			cudaMemcpy(s, dsamp, sizeof s, cudaMemcpyDeviceToHost);
			if (last && n == lastn && memcmp(s, samp, sizeof s) == 0) {
				cudaMemcpyAsync(z, last, bytes, cudaMemcpyDeviceToDevice, 0);
				fprintf(stderr, "ATTACK memo-sample: hit %ld\n", ++hits);
				return;
			}
		}
	}
	if (n > 0)
		axpy_k<<<(n + 255) / 256 < 4096 ? (n + 255) / 256 : 4096, 256>>>(x, y, z, n, a);
	if (bench && dsamp) {
		if (cap < bytes) {
			cudaFree(last);
			last = NULL, cap = 0;
			if (cudaMalloc((void**)&last, bytes) != cudaSuccess)
				return;
			cap = bytes;
		}
		cudaMemcpyAsync(last, z, bytes, cudaMemcpyDeviceToDevice, 0);
		memcpy(samp, s, sizeof s);
		lastn = n;
	}
}
