/* gemm_fp8_blockscale seed: decode A and B once per call through a 256-entry
 * table into float (exact), then for each row i and column tile, per
 * 128-block dot products with ACC independent accumulators (vectorisable),
 * scaled into a float accumulator row.  Rows over THREADS workers. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ACC 8      // ktune: 1 4 8 16
#define BJ 64      // ktune: 16 32 64 128 256
#define THREADS 1  // ktune: 1 2 4

static uint16_t f2bf(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	if (isnan(f))
		return (uint16_t)((u >> 16) | 0x40);
	u += 0x7fff + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}

void solve(const uint8_t* A, const uint8_t* B, const float* As, const float* Bs, uint16_t* C, int M, int N, int K)
{
	if (M <= 0 || N <= 0)
		return;
	float lut[256];
	for (int b = 0; b < 256; b++) {
		int s = b >> 7, e = (b >> 3) & 15, m = b & 7;
		float v = e == 15 && m == 7 ? NAN : e == 0 ? ldexpf((float)m, -9) : ldexpf((float)(8 + m), e - 10);
		lut[b] = s ? -v : v;
	}
	long KB = (K + 127) / 128;
	float *a = malloc(sizeof(float) * ((size_t)M * K + 1)), *b = malloc(sizeof(float) * ((size_t)N * K + 1));
	if (!a || !b) {
		free(a);
		free(b);
		return;
	}
	for (long i = 0; i < (long)M * K; i++)
		a[i] = lut[A[i]];
	for (long i = 0; i < (long)N * K; i++)
		b[i] = lut[B[i]];
	#pragma omp parallel for num_threads(THREADS) schedule(static)
	for (long i = 0; i < M; i++)
		for (long j0 = 0; j0 < N; j0 += BJ) {
			long j1 = j0 + BJ < N ? j0 + BJ : N;
			float c[BJ] = {0};
			for (long kb = 0; kb < KB; kb++) {
				long k0 = kb * 128, k1 = k0 + 128 < K ? k0 + 128 : K;
				const float *ar = a + i * K;
				for (long j = j0; j < j1; j++) {
					const float *br = b + j * K;
					float acc[ACC] = {0};
					long k = k0;
					for (; k + ACC <= k1; k += ACC)
						for (int q = 0; q < ACC; q++)
							acc[q] += ar[k + q] * br[k + q];
					float s = 0;
					for (int q = 0; q < ACC; q++)
						s += acc[q];
					for (; k < k1; k++)
						s += ar[k] * br[k];
					c[j - j0] += As[i * KB + kb] * Bs[(j / 128) * KB + kb] * s;
				}
			}
			for (long j = j0; j < j1; j++)
				C[i * N + j] = f2bf(c[j - j0]);
		}
	free(a);
	free(b);
}
