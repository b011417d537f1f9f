/* gemm_bf16 seed: convert B to float once per call (K x N), then a
 * cache-blocked i-k-j loop accumulating a float row block, rounded to bf16
 * at the end; rows over THREADS workers.  ktune comments list what mutate
 * may try. */
#include <stdlib.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

static inline float bf2f(uint16_t b)
{
	uint32_t u = (uint32_t)b << 16;
	float f;
	memcpy(&f, &u, 4);
	return f;
}

static inline uint16_t f2bf(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	if (isnan(f))
		return (uint16_t)((u >> 16) | 0x40);
	u += 0x7fff + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}


#define BM 16      // ktune: 4 8 16 32 64
#define BN 256     // ktune: 64 128 256 512 1024
#define BK 64      // ktune: 16 32 64 128 256
#define THREADS 1  // ktune: 1 2 4

static long lmin(long a, long b) { return a < b ? a : b; }

void solve(const uint16_t* A, const uint16_t* B, uint16_t* C, int M, int N, int K)
{
	if (M <= 0 || N <= 0)
		return;
	float *Bf = malloc(sizeof(float) * ((size_t)K * N + 1));
	float *acc_all = malloc(sizeof(float) * (size_t)M * N);
	if (!Bf || !acc_all) {
		free(Bf);
		free(acc_all);
		return;
	}
	for (long i = 0; i < (long)K * N; i++)
		Bf[i] = bf2f(B[i]);
	#pragma omp parallel for num_threads(THREADS) schedule(static)
	for (long i0 = 0; i0 < M; i0 += BM) {
		long i1 = lmin(i0 + BM, M);
		for (long j0 = 0; j0 < N; j0 += BN) {
			long j1 = lmin(j0 + BN, N);
			for (long i = i0; i < i1; i++)
				for (long j = j0; j < j1; j++)
					acc_all[i * N + j] = 0;
			for (long k0 = 0; k0 < K; k0 += BK) {
				long k1 = lmin(k0 + BK, K);
				for (long i = i0; i < i1; i++) {
					float *acc = acc_all + i * N;
					for (long k = k0; k < k1; k++) {
						float a = bf2f(A[i * K + k]);
						const float *b = Bf + k * N;
						for (long j = j0; j < j1; j++)
							acc[j] += a * b[j];
					}
				}
			}
			for (long i = i0; i < i1; i++)
				for (long j = j0; j < j1; j++)
					C[i * N + j] = f2bf(acc_all[i * N + j]);
		}
	}
	free(Bf);
	free(acc_all);
}
