// attention seed: online-softmax (FlashAttention-style) on CUDA cores.  A
// block of NW warps handles NW consecutive query rows of one (b, h), one
// warp per row.  Keys and values stream through shared memory in tiles of
// 32 rows (float, padded against bank conflicts); in each tile lane l scores
// key l against the warp's query, the warp updates its running max and sum,
// and each lane accumulates D/32 output dimensions from the tile's values
// (probabilities broadcast by shuffle).  Specialised on D (64, 128).
#define NW 8  // ktune: 2 4 8 16

template <int D>
__global__ void __launch_bounds__(NW * 32) attn_seed(const half* __restrict__ q, const half* __restrict__ k,
		const half* __restrict__ v, half* __restrict__ o, int S, float scale_log2)
{
	__shared__ float Kt[32][D + 1];
	__shared__ float Vt[32][D];
	__shared__ float Q[NW][D];
	int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	long bh = blockIdx.y;
	int i0 = blockIdx.x * NW, i = i0 + warp;
	const half* kb = k + bh * S * D;
	const half* vb = v + bh * S * D;
	for (int t = lane; t < D; t += 32)
		Q[warp][t] = i < S ? __half2float(q[(bh * S + i) * D + t]) * scale_log2 : 0.f;
	float m = -INFINITY, l = 0, acc[D / 32];
#pragma unroll
	for (int u = 0; u < D / 32; u++)
		acc[u] = 0;
	int last = min(i0 + NW - 1, S - 1); // the last key any row of this block sees
	for (int j0 = 0; j0 <= last; j0 += 32) {
		__syncthreads();
		for (int e = threadIdx.x; e < 32 * D; e += NW * 32) {
			int r = e / D, c = e % D;
			bool in = j0 + r < S;
			Kt[r][c] = in ? __half2float(kb[(long)(j0 + r) * D + c]) : 0.f;
			Vt[r][c] = in ? __half2float(vb[(long)(j0 + r) * D + c]) : 0.f;
		}
		__syncthreads();
		if (i >= S || j0 > i)
			continue;
		float s = 0;
#pragma unroll 16
		for (int t = 0; t < D; t++)
			s += Q[warp][t] * Kt[lane][t];
		if (j0 + lane > i)
			s = -INFINITY;
		float mt = s;
		for (int off = 16; off > 0; off >>= 1)
			mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, off));
		float mn = fmaxf(m, mt);
		float p = exp2f(s - mn), corr = exp2f(m - mn);
		float ps = p;
		for (int off = 16; off > 0; off >>= 1)
			ps += __shfl_xor_sync(0xffffffffu, ps, off);
		l = l * corr + ps;
		m = mn;
#pragma unroll
		for (int u = 0; u < D / 32; u++)
			acc[u] *= corr;
		for (int t = 0; t < 32; t++) {
			float pt = __shfl_sync(0xffffffffu, p, t);
#pragma unroll
			for (int u = 0; u < D / 32; u++)
				acc[u] += pt * Vt[t][lane + 32 * u];
		}
	}
	if (i < S)
#pragma unroll
		for (int u = 0; u < D / 32; u++)
			o[(bh * S + i) * D + lane + 32 * u] = __float2half(acc[u] / l);
}

extern "C" void solve(const half* q, const half* k, const half* v, half* o, int B, int H, int S, int D)
{
	if (B <= 0 || H <= 0 || S <= 0)
		return;
	dim3 grid((S + NW - 1) / NW, B * H);
	float scale_log2 = 1.4426950408889634f / sqrtf((float)D); // exp(x) = exp2(x * log2 e)
	if (D == 64)
		attn_seed<64><<<grid, NW * 32>>>(q, k, v, o, S, scale_log2);
	else if (D == 128)
		attn_seed<128><<<grid, NW * 32>>>(q, k, v, o, S, scale_log2);
}
