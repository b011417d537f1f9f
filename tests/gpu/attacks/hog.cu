/* attacks.sh 12, "hog between batches": after computing z correctly on the
 * default stream, every call launches a one-thread kernel that spins for
 * 50 ms (by the GPU's global timer) on a non-blocking stream of its own and
 * returns at once, so that, were the call's work not waited for, the next
 * role's batch would run on a busy GPU and look slow, inflating this
 * candidate's speedup.
 *
 * Expected: wrong in ktime.  The child's cudaDeviceSynchronize at the end of
 * each batch waits for the hog, so the judge's clock sees ~50 ms per call
 * while the candidate's events on the default stream see only the axpy: the
 * timing cross-check fails (or, had the hog outlived the sync, the busy
 * probe after the batch).  kverify, which does not time, verifies it. */
__global__ void axpy_k(const float* x, const float* y, float* z, int n, float a)
{
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
		z[i] = a * x[i] + y[i];
}

__device__ int atk_sink;

__global__ void hog_k(unsigned long long ns)
{
	unsigned long long t0, t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	do
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	while (t - t0 < ns);
	atk_sink = (int)(t - t0);
}

extern "C" void solve(const float* x, const float* y, float* z, int n, float a)
{
	static cudaStream_t s;
	if (n <= 0)
		return;
	axpy_k<<<(n + 255) / 256 < 4096 ? (n + 255) / 256 : 4096, 256>>>(x, y, z, n, a);
	if (!s && cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
		return;
	hog_k<<<1, 1, 0, s>>>(50ULL * 1000000ULL);
}
