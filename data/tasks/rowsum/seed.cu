// rowsum seed: one warp per row for short rows (WARP_COLS_MAX or fewer
// columns), otherwise a block of THREADS per row with float4 loads when the
// row is aligned; warp shuffles for the reduction.  Rows longer than
// SPLIT_COLS are split over several blocks that finish with atomicAdd into
// y, which the launch zeroes first.
#define THREADS 256          // ktune: 128 256 512 1024
#define WARP_COLS_MAX 256    // ktune: 0 64 256 1024
#define SPLIT_COLS 262144    // ktune: 65536 262144 1048576 1073741824

__device__ __forceinline__ float warp_sum(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

__global__ void rowsum_warp(const float* __restrict__ x, float* __restrict__ y, int rows, int cols)
{
	long r = ((long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
	int lane = threadIdx.x & 31;
	if (r >= rows)
		return;
	const float* xr = x + r * cols;
	float acc = 0;
	for (int c = lane; c < cols; c += 32)
		acc += xr[c];
	acc = warp_sum(acc);
	if (lane == 0)
		y[r] = acc;
}

// grid: (parts, rows).  Each block sums columns [part*span, (part+1)*span).
__global__ void rowsum_block(const float* __restrict__ x, float* __restrict__ y, int cols, long span, int atomic)
{
	__shared__ float part[32];
	const float* xr = x + (long)blockIdx.y * cols;
	long c0 = (long)blockIdx.x * span, c1 = c0 + span < cols ? c0 + span : cols;
	float acc = 0;
	if ((cols & 3) == 0 && (c0 & 3) == 0) {
		for (long c = c0 + 4L * threadIdx.x; c + 3 < c1; c += 4L * THREADS) {
			float4 v = *(const float4*)(xr + c);
			acc += (v.x + v.y) + (v.z + v.w);
		}
	} else {
		for (long c = c0 + threadIdx.x; c < c1; c += THREADS)
			acc += xr[c];
	}
	acc = warp_sum(acc);
	if ((threadIdx.x & 31) == 0)
		part[threadIdx.x / 32] = acc;
	__syncthreads();
	if (threadIdx.x < 32) {
		acc = threadIdx.x < THREADS / 32 ? part[threadIdx.x] : 0;
		acc = warp_sum(acc);
		if (threadIdx.x == 0) {
			if (atomic)
				atomicAdd(&y[blockIdx.y], acc);
			else
				y[blockIdx.y] = acc;
		}
	}
}

extern "C" void solve(const float* x, float* y, int rows, int cols)
{
	if (rows <= 0)
		return;
	if (cols <= WARP_COLS_MAX) {
		long threads = (long)rows * 32;
		rowsum_warp<<<(unsigned)((threads + 255) / 256), 256>>>(x, y, rows, cols);
		return;
	}
	long parts = ((long)cols + SPLIT_COLS - 1) / SPLIT_COLS;
	long span = ((long)cols + parts - 1) / parts;
	span = (span + 3) & ~3L;
	if (parts > 1)
		cudaMemsetAsync(y, 0, sizeof(float) * (size_t)rows, 0);
	// gridDim.y is limited to 65535 rows per launch.
	for (long r0 = 0; r0 < rows; r0 += 65535) {
		long nr = rows - r0 < 65535 ? rows - r0 : 65535;
		rowsum_block<<<dim3((unsigned)parts, (unsigned)nr), THREADS>>>(x + r0 * cols, y + r0, cols, span, parts > 1);
	}
}
