/* transpose device reference: reference.c's copy, y[c][r] = x[r][c], through
 * 32 x 32 tiles of shared memory (exact: it only moves floats).  Used for
 * the benchmark sizes, where the host reference and the copies to the host
 * dominate the cost of a timed candidate; tests/gpu checks it against
 * reference.c at the test sizes. */
__global__ void ref_transpose(const float* x, float* y, int rows, int cols)
{
	__shared__ float t[32][33];
	for (long rb = blockIdx.y; rb * 32 < rows; rb += gridDim.y) {
		long c0 = (long)blockIdx.x * 32, r0 = rb * 32;
		for (int k = threadIdx.y; k < 32; k += 8)
			if (r0 + k < rows && c0 + threadIdx.x < cols)
				t[k][threadIdx.x] = x[(r0 + k) * cols + c0 + threadIdx.x];
		__syncthreads();
		for (int k = threadIdx.y; k < 32; k += 8)
			if (c0 + k < cols && r0 + threadIdx.x < rows)
				y[(c0 + k) * rows + r0 + threadIdx.x] = t[threadIdx.x][k];
		__syncthreads();
	}
}

extern "C" void solve(const float* x, float* y, int rows, int cols)
{
	if (rows <= 0 || cols <= 0)
		return;
	long rb = (rows + 31) / 32;
	ref_transpose<<<dim3((unsigned)((cols + 31) / 32), (unsigned)(rb < 65535 ? rb : 65535)), dim3(32, 8)>>>(x, y, rows, cols);
}
