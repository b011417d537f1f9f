/* histogram seed: COPIES private sub-histograms per worker (consecutive
 * bytes go to different copies, breaking the store-to-load dependency when
 * equal bytes repeat), merged at the end; THREADS workers. */
#include <stdint.h>
#include <string.h>

#define COPIES 4   // ktune: 1 2 4 8
#define THREADS 1  // ktune: 1 2 4

void solve(const uint8_t* x, int* hist, int n)
{
	memset(hist, 0, 256 * sizeof(int));
	#pragma omp parallel num_threads(THREADS)
	{
		int h[COPIES][256];
		memset(h, 0, sizeof h);
		#pragma omp for schedule(static)
		for (long i0 = 0; i0 < n; i0 += 4096) {
			long i1 = i0 + 4096 < n ? i0 + 4096 : n, i = i0;
			for (; i + COPIES <= i1; i += COPIES)
				for (int c = 0; c < COPIES; c++)
					h[c][x[i + c]]++;
			for (; i < i1; i++)
				h[0][x[i]]++;
		}
		#pragma omp critical
		for (int b = 0; b < 256; b++)
			for (int c = 0; c < COPIES; c++)
				hist[b] += h[c][b];
	}
}
