/* softmax seed: per row, max and sum with ACC independent accumulators (so
 * the reductions can vectorise without -ffast-math), then one scaling pass;
 * rows split over THREADS.  ktune comments list what mutate may try. */
#include <math.h>

#define ACC 1      // ktune: 1 2 4 8 16
#define THREADS 1  // ktune: 1 2 4
#define RECIP 0    // ktune: 0 1

void solve(const float* x, float* y, int rows, int cols)
{
	#pragma omp parallel for num_threads(THREADS) schedule(static)
	for (long r = 0; r < rows; r++) {
		const float *xr = x + r * cols;
		float *yr = y + r * cols;
		float mv[ACC], sv[ACC];
		for (int a = 0; a < ACC; a++)
			mv[a] = -INFINITY, sv[a] = 0;
		int c = 0;
		for (; c + ACC <= cols; c += ACC)
			for (int a = 0; a < ACC; a++)
				mv[a] = xr[c + a] > mv[a] ? xr[c + a] : mv[a];
		float m = -INFINITY;
		for (int a = 0; a < ACC; a++)
			m = mv[a] > m ? mv[a] : m;
		for (; c < cols; c++)
			m = xr[c] > m ? xr[c] : m;
		for (c = 0; c + ACC <= cols; c += ACC)
			for (int a = 0; a < ACC; a++) {
				float e = expf(xr[c + a] - m);
				yr[c + a] = e;
				sv[a] += e;
			}
		float s = 0;
		for (int a = 0; a < ACC; a++)
			s += sv[a];
		for (; c < cols; c++) {
			yr[c] = expf(xr[c] - m);
			s += yr[c];
		}
		if (RECIP) {
			float inv = 1.0f / s;
			for (c = 0; c < cols; c++)
				yr[c] *= inv;
		} else {
			for (c = 0; c < cols; c++)
				yr[c] /= s;
		}
	}
}
