/* gemm_fp8_blockscale baseline: decode each element as it is used, float
 * block sums, single thread — the loop a user writes first. */
#include <math.h>
#include <stdint.h>
#include <string.h>

static float e4m3(uint8_t b)
{
	int s = b >> 7, e = (b >> 3) & 15, m = b & 7;
	if (e == 15 && m == 7)
		return NAN;
	float v = e == 0 ? ldexpf((float)m, -9) : ldexpf((float)(8 + m), e - 10);
	return s ? -v : v;
}

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
	long KB = (K + 127) / 128;
	for (long i = 0; i < M; i++)
		for (long j = 0; j < N; j++) {
			float c = 0;
			for (long kb = 0; kb < KB; kb++) {
				float s = 0;
				for (long k = kb * 128; k < K && k < kb * 128 + 128; k++)
					s += e4m3(A[i * K + k]) * e4m3(B[j * K + k]);
				c += As[i * KB + kb] * Bs[(j / 128) * KB + kb] * s;
			}
			C[i * N + j] = f2bf(c);
		}
}
