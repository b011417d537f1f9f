/* badlaunch: 2048 threads per block is an invalid configuration: the kernel
 * never runs -> crashed (launch error seen by cudaGetLastError). */
__global__ void k(const float* x, const float* y, float* z, int n, float a)
{
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		z[i] = a * x[i] + y[i];
}

extern "C" void solve(const float* x, const float* y, float* z, int n, float a)
{
	if (n > 0)
		k<<<(n + 2047) / 2048, 2048>>>(x, y, z, n, a);
}
