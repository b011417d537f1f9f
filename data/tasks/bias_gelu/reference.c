/* bias_gelu reference: double precision erf GELU, rows split over threads. */
#include <math.h>

void solve(const float* x, const float* bias, float* y, int rows, int cols)
{
	#pragma omp parallel for schedule(static)
	for (long r = 0; r < rows; r++)
		for (long c = 0; c < cols; c++) {
			double v = (double)x[r * cols + c] + (double)bias[c];
			y[r * cols + c] = (float)(0.5 * v * (1.0 + erf(v * 0.70710678118654752440)));
		}
}
