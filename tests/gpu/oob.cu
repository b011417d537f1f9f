/* oob: writes far past the end of z -> crashed (CUDA illegal address). */
__global__ void k(const float* x, const float* y, float* z, int n, float a)
{
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		z[i + (1L << 34)] = a * x[i] + y[i];
}

extern "C" void solve(const float* x, const float* y, float* z, int n, float a)
{
	if (n > 0)
		k<<<(n + 255) / 256, 256>>>(x, y, z, n, a);
}
