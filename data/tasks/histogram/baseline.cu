// histogram baseline: one global atomicAdd per byte — the kernel a user
// writes first.
__global__ void hist_naive(const uint8_t* x, int* hist, long n)
{
	for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
		atomicAdd(&hist[x[i]], 1);
}

extern "C" void solve(const uint8_t* x, int* hist, int n)
{
	cudaMemsetAsync(hist, 0, 256 * sizeof(int), 0);
	if (n <= 0)
		return;
	long blocks = ((long)n + 255) / 256;
	hist_naive<<<(unsigned)(blocks < 8192 ? blocks : 8192), 256>>>(x, hist, n);
}
