/* attacks.sh 6, "input mutation": a correct axpy that, at benchmark sizes
 * only (so kverify, at the test sizes, passes it), then writes into its
 * input x (const cast away): x[0] += 1.  Expected: wrong in ktime, "input
 * argument was modified", naming x. */
__global__ void axpy_k(const float* x, const float* y, float* z, int n, float a)
{
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
		z[i] = a * x[i] + y[i];
}

__global__ void bump_k(float* x) { x[0] += 1.f; }

extern "C" void solve(const float* x, const float* y, float* z, int n, float a)
{
	if (n > 0)
		axpy_k<<<(n + 255) / 256 < 4096 ? (n + 255) / 256 : 4096, 256>>>(x, y, z, n, a);
	if (n >= 1000000) /* the benchmark sizes; the test sizes stop at 65539 */
		bump_k<<<1, 1>>>((float*)x);
}
