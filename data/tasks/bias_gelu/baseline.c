/* bias_gelu baseline: the loop a user writes first, single thread. */
#include <math.h>

void solve(const float* x, const float* bias, float* y, int rows, int cols)
{
	for (long r = 0; r < rows; r++)
		for (long c = 0; c < cols; c++) {
			float v = x[r * cols + c] + bias[c];
			y[r * cols + c] = 0.5f * v * (1.0f + erff(v * 0.70710678f));
		}
}
