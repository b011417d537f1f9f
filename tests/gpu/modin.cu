/* modin: right answer, but uses y as scratch and leaves it changed -> wrong
 * (input argument was modified). */
__global__ void k(const float* x, float* y, float* z, int n, float a)
{
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		float v = y[i];
		y[i] = 0.f;
		z[i] = a * x[i] + v;
	}
}

extern "C" void solve(const float* x, const float* y, float* z, int n, float a)
{
	if (n > 0)
		k<<<(n + 255) / 256, 256>>>(x, (float*)y, z, n, a);
}
