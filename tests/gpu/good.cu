/* good: a correct kernel (the seed); must pass verify and time. */
#define BLOCK 256 // ktune: 128 256 512 1024

__global__ void axpy(const float* x, const float* y, float* z, int n, float a)
{
	for (long i = (long)blockIdx.x * BLOCK + threadIdx.x; i < n; i += (long)gridDim.x * BLOCK)
		z[i] = a * x[i] + y[i];
}

extern "C" void solve(const float* x, const float* y, float* z, int n, float a)
{
	if (n > 0)
		axpy<<<(n + BLOCK - 1) / BLOCK < 4096 ? (n + BLOCK - 1) / BLOCK : 4096, BLOCK>>>(x, y, z, n, a);
}
