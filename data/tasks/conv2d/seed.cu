// conv2d seed: direct convolution with shared-memory tiling.  A block owns a
// TP x TQ tile of output pixels of one image for KT output channels; for
// each input channel it stages the (TP+R-1) x (TQ+S-1) input patch (zero
// padded) and the KT x R x S weights in shared memory, and each thread
// accumulates KT outputs for its pixel in registers.  Grid: x = pixel
// tiles, y = channel blocks, z = images.
#define TP 16  // ktune: 8 16 32
#define TQ 16  // ktune: 8 16 32
#define KT 8   // ktune: 4 8 16 32

__global__ void __launch_bounds__(TP * TQ) conv_seed(const float* __restrict__ x, const float* __restrict__ w,
		float* __restrict__ y, int C, int H, int W, int K, int R, int S, int pad, int P, int Q, int tiles_q)
{
	extern __shared__ float sm[];
	int PH = TP + R - 1, PW = TQ + S - 1;
	float* patch = sm;
	float* wt = sm + PH * PW;
	int n = blockIdx.z, k0 = blockIdx.y * KT;
	int p0 = blockIdx.x / tiles_q * TP, q0 = blockIdx.x % tiles_q * TQ;
	int tp = threadIdx.x / TQ, tq = threadIdx.x % TQ;
	float acc[KT];
#pragma unroll
	for (int j = 0; j < KT; j++)
		acc[j] = 0.f;
	for (int c = 0; c < C; c++) {
		const float* xc = x + ((long)n * C + c) * H * W;
		for (int i = threadIdx.x; i < PH * PW; i += TP * TQ) {
			int h = p0 + i / PW - pad, v = q0 + i % PW - pad;
			patch[i] = h >= 0 && h < H && v >= 0 && v < W ? xc[(long)h * W + v] : 0.f;
		}
		for (int i = threadIdx.x; i < KT * R * S; i += TP * TQ) {
			int j = i / (R * S), rs = i % (R * S);
			wt[i] = k0 + j < K ? w[((long)(k0 + j) * C + c) * R * S + rs] : 0.f;
		}
		__syncthreads();
		for (int r = 0; r < R; r++)
			for (int s = 0; s < S; s++) {
				float xv = patch[(tp + r) * PW + tq + s];
#pragma unroll
				for (int j = 0; j < KT; j++)
					acc[j] += xv * wt[(j * R + r) * S + s];
			}
		__syncthreads();
	}
	int p = p0 + tp, q = q0 + tq;
	if (p < P && q < Q)
		for (int j = 0; j < KT; j++)
			if (k0 + j < K)
				y[(((long)n * K + k0 + j) * P + p) * Q + q] = acc[j];
}

extern "C" void solve(const float* x, const float* w, float* y, int N, int C, int H, int W, int K, int R, int S,
		      int pad)
{
	int P = H + 2 * pad - R + 1, Q = W + 2 * pad - S + 1;
	if (N <= 0 || K <= 0 || P <= 0 || Q <= 0)
		return;
	int tiles_q = (Q + TQ - 1) / TQ, tiles = (P + TP - 1) / TP * tiles_q;
	size_t smem = sizeof(float) * ((size_t)(TP + R - 1) * (TQ + S - 1) + (size_t)KT * R * S);
	if (smem > 48 * 1024)
		cudaFuncSetAttribute(conv_seed, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
	conv_seed<<<dim3(tiles, (K + KT - 1) / KT, N), TP * TQ, smem>>>(x, w, y, C, H, W, K, R, S, pad, P, Q, tiles_q);
}
