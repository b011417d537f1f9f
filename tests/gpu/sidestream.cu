/* sidestream: does the work on its own non-blocking stream and returns
 * without waiting.  The harness's full device sync makes the results right;
 * events on the default stream would see almost nothing; the host-time
 * cross-check catches it -> wrong in ktime (timing cross-check). */
#include <cuda_runtime.h>

__global__ void k(const float* x, const float* y, float* z, int n, float a)
{
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		/* ~0.2 ms of extra work so the hidden time is unmistakable. */
		long long t0 = clock64();
		while (i == 0 && clock64() - t0 < 400000)
			;
		z[i] = a * x[i] + y[i];
	}
}

extern "C" void solve(const float* x, const float* y, float* z, int n, float a)
{
	static cudaStream_t s;
	if (!s)
		cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
	if (n > 0)
		k<<<(n + 255) / 256, 256, 0, s>>>(x, y, z, n, a);
}
