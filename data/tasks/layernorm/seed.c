/* layernorm seed: per row, a sum and a centred sum of squares with ACC
 * independent float accumulators (vectorisable), then one scaling pass;
 * rows over THREADS workers. */
#include <math.h>

#define ACC 8      // ktune: 1 4 8 16
#define THREADS 1  // ktune: 1 2 4

void solve(const float* x, const float* gamma, const float* beta, float* y, int rows, int cols)
{
	#pragma omp parallel for num_threads(THREADS) schedule(static)
	for (long r = 0; r < rows; r++) {
		const float *xr = x + r * cols;
		float *yr = y + r * cols;
		float a[ACC] = {0}, q[ACC] = {0};
		long c = 0;
		for (; c + ACC <= cols; c += ACC)
			for (int k = 0; k < ACC; k++)
				a[k] += xr[c + k];
		double s = 0;
		for (int k = 0; k < ACC; k++)
			s += a[k];
		for (; c < cols; c++)
			s += xr[c];
		float m = (float)(s / cols);
		for (c = 0; c + ACC <= cols; c += ACC)
			for (int k = 0; k < ACC; k++)
				q[k] += (xr[c + k] - m) * (xr[c + k] - m);
		double v = 0;
		for (int k = 0; k < ACC; k++)
			v += q[k];
		for (; c < cols; c++)
			v += (xr[c] - m) * (xr[c] - m);
		float inv = (float)(1.0 / sqrt(v / cols + 1e-5));
		for (c = 0; c < cols; c++)
			yr[c] = (xr[c] - m) * inv * gamma[c] + beta[c];
	}
}
