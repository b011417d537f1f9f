/* softmax reference: max-subtracted, double precision. */
#include <math.h>

void solve(const float* x, float* y, int rows, int cols)
{
	for (long r = 0; r < rows; r++) {
		const float *xr = x + r * cols;
		float *yr = y + r * cols;
		double m = -INFINITY, s = 0;
		for (int c = 0; c < cols; c++)
			m = xr[c] > m ? xr[c] : m;
		for (int c = 0; c < cols; c++)
			s += exp((double)xr[c] - m);
		for (int c = 0; c < cols; c++)
			yr[c] = (float)(exp((double)xr[c] - m) / s);
	}
}
