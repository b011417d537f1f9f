/* bias_gelu seed: rows split over THREADS workers, columns in chunks of
 * CHUNK so the bias slice stays in L1.  ktune comments list what mutate may
 * try. */
#include <math.h>

#define THREADS 1   // ktune: 1 2 4
#define CHUNK 1024  // ktune: 256 512 1024 2048 4096

void solve(const float* x, const float* bias, float* y, int rows, int cols)
{
	#pragma omp parallel for num_threads(THREADS) schedule(static)
	for (long r = 0; r < rows; r++)
		for (long c0 = 0; c0 < cols; c0 += CHUNK) {
			long c1 = c0 + CHUNK < cols ? c0 + CHUNK : cols;
			const float *xr = x + r * cols;
			float *yr = y + r * cols;
			for (long c = c0; c < c1; c++) {
				float v = xr[c] + bias[c];
				yr[c] = 0.5f * v * (1.0f + erff(v * 0.70710678f));
			}
		}
}
