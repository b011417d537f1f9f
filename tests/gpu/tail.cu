/* tail: float4 loads with no scalar tail: the last n % 4 elements are never
 * written -> wrong (poisoned elements stay NaN). */
__global__ void k(const float4* x, const float4* y, float4* z, int n4, float a)
{
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n4) {
		float4 u = x[i], v = y[i];
		z[i] = make_float4(a * u.x + v.x, a * u.y + v.y, a * u.z + v.z, a * u.w + v.w);
	}
}

extern "C" void solve(const float* x, const float* y, float* z, int n, float a)
{
	int n4 = n / 4;
	if (n4 > 0)
		k<<<(n4 + 255) / 256, 256>>>((const float4*)x, (const float4*)y, (float4*)z, n4, a);
}
