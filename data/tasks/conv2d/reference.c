/* conv2d reference: direct, double accumulation in (c, r, s) order. */
void solve(const float* x, const float* w, float* y, int N, int C, int H, int W, int K, int R, int S, int pad)
{
	long P = H + 2 * pad - R + 1, Q = W + 2 * pad - S + 1;
	#pragma omp parallel for collapse(2) schedule(static)
	for (long n = 0; n < N; n++)
		for (long k = 0; k < K; k++)
			for (long p = 0; p < P; p++)
				for (long q = 0; q < Q; q++) {
					double s = 0;
					for (long c = 0; c < C; c++)
						for (long r = 0; r < R; r++) {
							long h = p + r - pad;
							if (h < 0 || h >= H)
								continue;
							for (long t = 0; t < S; t++) {
								long v = q + t - pad;
								if (v >= 0 && v < W)
									s += (double)x[((n * C + c) * H + h) * W + v] *
									     w[((k * C + c) * R + r) * S + t];
							}
						}
					y[((n * K + k) * P + p) * Q + q] = (float)s;
				}
}
