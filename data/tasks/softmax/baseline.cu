/* softmax baseline (cuda): the straightforward correct kernel —
 * one 256-thread block per row, warp-shuffle reductions, three passes. */
__device__ static float warp_max(float v)
{
	for (int o = 16; o > 0; o /= 2)
		v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
	return v;
}

__device__ static float warp_sum(float v)
{
	for (int o = 16; o > 0; o /= 2)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

__global__ void softmax_plain(const float* x, float* y, int cols)
{
	__shared__ float red[8];
	const float* xr = x + (long)blockIdx.x * cols;
	float* yr = y + (long)blockIdx.x * cols;
	int lane = threadIdx.x % 32, wid = threadIdx.x / 32;
	float m = -INFINITY;
	for (int c = threadIdx.x; c < cols; c += 256)
		m = fmaxf(m, xr[c]);
	m = warp_max(m);
	if (lane == 0)
		red[wid] = m;
	__syncthreads();
	m = warp_max(lane < 8 ? red[lane] : -INFINITY);
	__syncthreads();
	float s = 0.f;
	for (int c = threadIdx.x; c < cols; c += 256)
		s += expf(xr[c] - m);
	s = warp_sum(s);
	if (lane == 0)
		red[wid] = s;
	__syncthreads();
	s = warp_sum(lane < 8 ? red[lane] : 0.f);
	for (int c = threadIdx.x; c < cols; c += 256)
		yr[c] = expf(xr[c] - m) / s;
}

extern "C" void solve(const float* x, float* y, int rows, int cols)
{
	if (rows > 0 && cols > 0)
		softmax_plain<<<rows, 256>>>(x, y, cols);
}
