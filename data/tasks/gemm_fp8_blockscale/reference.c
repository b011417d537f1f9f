/* gemm_fp8_blockscale reference: exact E4M3 decoding, block sums and scaled
 * accumulation in double, one rounding to bf16. */
#include <math.h>
#include <stdint.h>
#include <string.h>

static double e4m3(uint8_t b)
{
	int s = b >> 7, e = (b >> 3) & 15, m = b & 7;
	double v;
	if (e == 15 && m == 7)
		return NAN;
	v = e == 0 ? ldexp(m, -9) : ldexp(8 + m, e - 10);
	return s ? -v : v;
}

static uint16_t d2bf(double d)
{
	float f = (float)d;
	uint32_t u;
	memcpy(&u, &f, 4);
	if (isnan(f))
		return (uint16_t)((u >> 16) | 0x40);
	u += 0x7fff + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}

void solve(const uint8_t* A, const uint8_t* B, const float* As, const float* Bs, uint16_t* C, int M, int N, int K)
{
	long KB = (K + 127) / 128;
	#pragma omp parallel for schedule(static)
	for (long i = 0; i < M; i++)
		for (long j = 0; j < N; j++) {
			double c = 0;
			for (long kb = 0; kb < KB; kb++) {
				double s = 0;
				for (long k = kb * 128; k < K && k < kb * 128 + 128; k++)
					s += e4m3(A[i * K + k]) * e4m3(B[j * K + k]);
				c += (double)As[i * KB + kb] * (double)Bs[(j / 128) * KB + kb] * s;
			}
			C[i * N + j] = d2bf(c);
		}
}
