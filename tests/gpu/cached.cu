/* cached: remembers its result keyed by (x, n) and replays it when called
 * again with the same pointer -> wrong (fresh inputs at the same address). */
#include <cuda_runtime.h>

__global__ void k(const float* x, const float* y, float* z, int n, float a)
{
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		z[i] = a * x[i] + y[i];
}

extern "C" void solve(const float* x, const float* y, float* z, int n, float a)
{
	static const float* last_x;
	static int last_n;
	static float* saved;
	static size_t cap;
	if (n <= 0)
		return;
	size_t bytes = (size_t)n * sizeof(float);
	if (x == last_x && n == last_n && saved) {
		cudaMemcpy(z, saved, bytes, cudaMemcpyDeviceToDevice);
		return;
	}
	k<<<(n + 255) / 256, 256>>>(x, y, z, n, a);
	if (cap < bytes) {
		cudaFree(saved);
		cudaMalloc((void**)&saved, bytes);
		cap = bytes;
	}
	cudaMemcpy(saved, z, bytes, cudaMemcpyDeviceToDevice);
	last_x = x, last_n = n;
}
