// conv2d device reference: the arithmetic of reference.c (direct, double
// accumulation in (c, r, s) order), one thread per output element.  Used
// for the cuda benchmark sizes only.
__global__ void ref_conv(const float* x, const float* w, float* y, int N, int C, int H, int W, int K, int R, int S,
			 int pad, long total)
{
	long P = H + 2 * pad - R + 1, Q = W + 2 * pad - S + 1;
	for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < total; i += (long)gridDim.x * blockDim.x) {
		long q = i % Q, p = i / Q % P, k = i / (P * Q) % K, n = i / (P * Q * K);
		double s = 0;
		for (long c = 0; c < C; c++)
			for (long r = 0; r < R; r++) {
				long h = p + r - pad;
				if (h < 0 || h >= H)
					continue;
				for (long t = 0; t < S; t++) {
					long v = q + t - pad;
					if (v >= 0 && v < W)
						s += (double)x[((n * C + c) * H + h) * W + v] * w[((k * C + c) * R + r) * S + t];
				}
			}
		y[i] = (float)s;
	}
}

extern "C" void solve(const float* x, const float* w, float* y, int N, int C, int H, int W, int K, int R, int S,
		      int pad)
{
	long total = (long)N * K * (H + 2 * pad - R + 1) * (W + 2 * pad - S + 1);
	if (total <= 0)
		return;
	long blocks = (total + 255) / 256;
	ref_conv<<<(unsigned)(blocks < 1048576 ? blocks : 1048576), 256>>>(x, w, y, N, C, H, W, K, R, S, pad, total);
}
