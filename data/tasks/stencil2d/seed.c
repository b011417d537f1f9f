/* stencil2d seed: boundary handled outside the hot loop, rows processed in
 * blocks of BI rows by BJ columns (cache blocking), THREADS workers. */
#include <string.h>

#define BI 4       // ktune: 1 2 4 8 16 32 64
#define BJ 64      // ktune: 32 64 128 256 512 1024 4096
#define THREADS 1  // ktune: 1 2 4

static long lmin(long a, long b) { return a < b ? a : b; }

void solve(const float* x, float* y, int n, int m)
{
	if (n <= 0 || m <= 0)
		return;
	memcpy(y, x, sizeof(float) * (size_t)m);
	memcpy(y + (long)(n - 1) * m, x + (long)(n - 1) * m, sizeof(float) * (size_t)m);
	#pragma omp parallel for num_threads(THREADS) schedule(static)
	for (long i0 = 1; i0 < n - 1; i0 += BI) {
		long i1 = lmin(i0 + BI, n - 1);
		for (long i = i0; i < i1; i++) {
			y[i * m] = x[i * m];
			y[i * m + m - 1] = x[i * m + m - 1];
		}
		for (long j0 = 1; j0 < m - 1; j0 += BJ) {
			long j1 = lmin(j0 + BJ, m - 1);
			for (long i = i0; i < i1; i++)
				for (long j = j0; j < j1; j++)
					y[i * m + j] = 0.25f * (x[(i - 1) * m + j] + x[(i + 1) * m + j] + x[i * m + j - 1] + x[i * m + j + 1]);
		}
	}
}
