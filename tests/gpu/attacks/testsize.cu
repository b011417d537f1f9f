/* attacks.sh 11, "right only at the test sizes": correct while n < 2^20
 * (every test size, and the benchmark size 1000003), garbage (a*x - y) from
 * n = 2^20 on (the benchmark size 16777216).  Expected: verified by kverify
 * (it checks the test sizes), wrong in ktime, which checks the candidate at
 * every benchmark size. */
__global__ void axpy_k(const float* x, const float* y, float* z, int n, float a)
{
	float sy = n >= (1 << 20) ? -1.f : 1.f;
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
		z[i] = a * x[i] + sy * y[i];
}

extern "C" void solve(const float* x, const float* y, float* z, int n, float a)
{
	if (n > 0)
		axpy_k<<<(n + 255) / 256 < 4096 ? (n + 255) / 256 : 4096, 256>>>(x, y, z, n, a);
}
