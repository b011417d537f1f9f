/* hang: spins on a device flag nothing ever sets -> timeout.  (A spin on a
 * local variable would be optimised away: an infinite loop without side
 * effects is undefined in C++.) */
__device__ int ksci_never_set;

__global__ void k(const float* x, const float* y, float* z, int n, float a)
{
	while (*(volatile int*)&ksci_never_set == 0)
		;
	if (n > 0)
		z[0] = a * x[0] + y[0];
}

extern "C" void solve(const float* x, const float* y, float* z, int n, float a)
{
	k<<<1, 32>>>(x, y, z, n, a);
}
