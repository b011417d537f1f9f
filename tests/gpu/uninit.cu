/* uninit: "forgets" to launch for large n (the benchmark sizes) and relies
 * on whatever z holds.  The device reference has just written the right
 * answer into memory that the allocator hands straight back for z, so
 * without poisoning this would pass; with poisoning -> wrong. */
__global__ void k(const float* x, const float* y, float* z, int n, float a)
{
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		z[i] = a * x[i] + y[i];
}

extern "C" void solve(const float* x, const float* y, float* z, int n, float a)
{
	if (n > 0 && n < 1000000)
		k<<<(n + 255) / 256, 256>>>(x, y, z, n, a);
}
