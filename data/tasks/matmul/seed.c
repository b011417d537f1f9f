/* matmul seed: cache-blocked i-k-j loop with register blocking over RM rows
 * of A.  The ktune comments list the values kgen's mutate may try. */
#include <string.h>

#define BM 16      // ktune: 8 16 32 64 128
#define BN 32      // ktune: 16 32 64 128 256 512
#define BK 16      // ktune: 8 16 32 64 128 256
#define RM 1       // ktune: 1 2 4 8
#define THREADS 1  // ktune: 1 2 4

static int imin(int a, int b) { return a < b ? a : b; }

void solve(const float* A, const float* B, float* C, int M, int N, int K)
{
	memset(C, 0, sizeof(float) * (size_t)M * (size_t)N);
	#pragma omp parallel for num_threads(THREADS) schedule(static)
	for (int i0 = 0; i0 < M; i0 += BM) {
		int i1 = imin(i0 + BM, M);
		for (int k0 = 0; k0 < K; k0 += BK) {
			int k1 = imin(k0 + BK, K);
			for (int j0 = 0; j0 < N; j0 += BN) {
				int j1 = imin(j0 + BN, N);
				int i = i0;
				for (; i + RM <= i1; i += RM)
					for (int k = k0; k < k1; k++) {
						float a[RM];
						for (int r = 0; r < RM; r++)
							a[r] = A[(long)(i + r) * K + k];
						const float *b = B + (long)k * N;
						for (int j = j0; j < j1; j++)
							for (int r = 0; r < RM; r++)
								C[(long)(i + r) * N + j] += a[r] * b[j];
					}
				for (; i < i1; i++)
					for (int k = k0; k < k1; k++) {
						float a = A[(long)i * K + k];
						const float *b = B + (long)k * N;
						for (int j = j0; j < j1; j++)
							C[(long)i * N + j] += a * b[j];
					}
			}
		}
	}
}
