/* attacks.sh 10, "async work left running past done": honest at the test
 * sizes (kverify passes it); at its first benchmark-size call it launches,
 * once, a persistent one-thread kernel on a non-blocking stream of its own,
 * spinning on a flag in device memory that nothing ever sets, then returns
 * correct results on the default stream, call after call.  The spinner
 * would steal time from every role timed after it, and would not show in
 * the candidate's own default-stream events.
 *
 * Expected: timeout.  The child ends every batch with cudaDeviceSynchronize,
 * which waits for all of its streams, the spinner's too, so the child never
 * says "done" for the first benchmark batch; the judge's deadline passes,
 * it kills the child (which ends its context, and the spinner with it) and
 * reports the candidate timed out.  `wrong` (the busy probe) would be the
 * outcome only for a judge whose child did not wait for other streams.
 * The spinner gives up by itself after 300 s (far past any --timeout the
 * suite uses), in case its process outlived the judge's kill. */
#include <stdio.h>

__device__ int atk_stop;

__global__ void axpy_k(const float* x, const float* y, float* z, int n, float a)
{
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
		z[i] = a * x[i] + y[i];
}

__device__ unsigned long long now_ns(void)
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

__global__ void spinner_k(void)
{
	unsigned long long t0 = now_ns();
	while (*(volatile int*)&atk_stop == 0 && now_ns() - t0 < 300ULL * 1000000000ULL)
		__nanosleep(1000);
}

extern "C" void solve(const float* x, const float* y, float* z, int n, float a)
{
	static cudaStream_t s;
	if (n >= 1000000 && !s) { /* the benchmark sizes; the test sizes stop at 65539 */
		cudaError_t r = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
		if (r == cudaSuccess) {
			spinner_k<<<1, 1, 0, s>>>();
			r = cudaGetLastError();
		}
		fprintf(stderr, "ATTACK persist: spinner launched at n=%d: %s\n", n, cudaGetErrorString(r));
	}
	if (n > 0)
		axpy_k<<<(n + 255) / 256 < 4096 ? (n + 255) / 256 : 4096, 256>>>(x, y, z, n, a);
}
