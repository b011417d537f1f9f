/* conv2d seed: per (image, output channel), accumulate whole output rows:
 * for each (c, r, s) the weight is a scalar and the valid span of q is
 * computed once, so the inner loop is an axpy over q (vectorisable).  KB
 * output channels share each input row load; (n, k-block) over THREADS. */
#include <string.h>

#define KB 4       // ktune: 1 2 4 8
#define THREADS 1  // ktune: 1 2 4

void solve(const float* x, const float* w, float* y, int N, int C, int H, int W, int K, int R, int S, int pad)
{
	long P = H + 2 * pad - R + 1, Q = W + 2 * pad - S + 1;
	long nkb = (K + KB - 1) / KB;
	#pragma omp parallel for num_threads(THREADS) schedule(static)
	for (long job = 0; job < (long)N * nkb; job++) {
		long n = job / nkb, k0 = job % nkb * KB, k1 = k0 + KB < K ? k0 + KB : K;
		for (long k = k0; k < k1; k++)
			memset(y + (n * K + k) * P * Q, 0, sizeof(float) * (size_t)(P * Q));
		for (long c = 0; c < C; c++)
			for (long p = 0; p < P; p++)
				for (long r = 0; r < R; r++) {
					long h = p + r - pad;
					if (h < 0 || h >= H)
						continue;
					const float *xr = x + ((n * C + c) * H + h) * W;
					for (long t = 0; t < S; t++) {
						long qlo = pad - t > 0 ? pad - t : 0;
						long qhi = W + pad - t < Q ? W + pad - t : Q;
						for (long k = k0; k < k1; k++) {
							float wv = w[((k * C + c) * R + r) * S + t];
							float *yr = y + ((n * K + k) * P + p) * Q;
							for (long q = qlo; q < qhi; q++)
								yr[q] += wv * xr[q + t - pad];
						}
					}
				}
	}
}
