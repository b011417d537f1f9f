// transpose seed: TILE x TILE tiles staged through shared memory (padded by
// one column against bank conflicts); a block of TILE x BLOCK_ROWS threads,
// each moving TILE/BLOCK_ROWS elements, so reads and writes are both
// coalesced.  Grid x walks columns (no 65535 limit), y walks rows.
#define TILE 32       // ktune: 16 32 64
#define BLOCK_ROWS 8  // ktune: 2 4 8 16

__global__ void transpose_seed(const float* __restrict__ x, float* __restrict__ y, int rows, int cols)
{
	__shared__ float t[TILE][TILE + 1];
	for (long rb = blockIdx.y; rb * TILE < rows; rb += gridDim.y) {
		long c0 = (long)blockIdx.x * TILE, r0 = rb * TILE;
		for (int k = threadIdx.y; k < TILE; k += BLOCK_ROWS) {
			long r = r0 + k, c = c0 + threadIdx.x;
			if (r < rows && c < cols)
				t[k][threadIdx.x] = x[r * cols + c];
		}
		__syncthreads();
		for (int k = threadIdx.y; k < TILE; k += BLOCK_ROWS) {
			long c = c0 + k, r = r0 + threadIdx.x;
			if (r < rows && c < cols)
				y[c * rows + r] = t[threadIdx.x][k];
		}
		__syncthreads();
	}
}

extern "C" void solve(const float* x, float* y, int rows, int cols)
{
	if (rows <= 0 || cols <= 0)
		return;
	long rb = (rows + TILE - 1) / TILE;
	dim3 grid((cols + TILE - 1) / TILE, rb < 65535 ? rb : 65535);
	transpose_seed<<<grid, dim3(TILE, BLOCK_ROWS)>>>(x, y, rows, cols);
}
