/* edge: right everywhere except when n % 4096 == 1 (the test size 4097),
 * where the last element gets y instead of a*x + y -> wrong. */
__global__ void k(const float* x, const float* y, float* z, int n, float a)
{
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		z[i] = (n % 4096 == 1 && n > 1 && i == n - 1) ? y[i] : a * x[i] + y[i];
}

extern "C" void solve(const float* x, const float* y, float* z, int n, float a)
{
	if (n > 0)
		k<<<(n + 255) / 256, 256>>>(x, y, z, n, a);
}
