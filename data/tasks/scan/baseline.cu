// scan baseline: the classic three kernels (block scans with block totals,
// a scan of the totals, recursively, then adding the offsets) — what a user
// writes from the textbook.  Temporary totals live in a static buffer grown
// on demand.
#define B 256

__global__ void scan_blocks(const int* x, int* y, int* sums, long n)
{
	__shared__ int s[B];
	long i = (long)blockIdx.x * B + threadIdx.x;
	s[threadIdx.x] = i < n ? x[i] : 0;
	__syncthreads();
	for (int o = 1; o < B; o <<= 1) {
		int v = threadIdx.x >= o ? s[threadIdx.x - o] : 0;
		__syncthreads();
		s[threadIdx.x] += v;
		__syncthreads();
	}
	if (i < n)
		y[i] = s[threadIdx.x];
	if (threadIdx.x == B - 1)
		sums[blockIdx.x] = s[B - 1];
}

__global__ void add_offsets(int* y, const int* scanned_sums, long n)
{
	long i = (long)blockIdx.x * B + threadIdx.x;
	if (blockIdx.x > 0 && i < n)
		y[i] += scanned_sums[blockIdx.x - 1];
}

static int* buf;
static long buf_len;

static void scan_rec(const int* x, int* y, long n, int* tmp)
{
	long nb = (n + B - 1) / B;
	scan_blocks<<<(unsigned)nb, B>>>(x, y, tmp, n);
	if (nb > 1) {
		scan_rec(tmp, tmp, nb, tmp + nb);
		add_offsets<<<(unsigned)nb, B>>>(y, tmp, n);
	}
}

extern "C" void solve(const int* x, int* y, int n)
{
	if (n <= 0)
		return;
	long need = 0;
	for (long m = n; m > 1; m = (m + B - 1) / B)
		need += (m + B - 1) / B;
	need += 1;
	if (need > buf_len) {
		cudaFree(buf);
		cudaMalloc(&buf, sizeof(int) * need);
		buf_len = need;
	}
	scan_rec(x, y, n, buf);
}
