/* softmax baseline: the straightforward three passes, single thread. */
#include <math.h>

void solve(const float* x, float* y, int rows, int cols)
{
	for (long r = 0; r < rows; r++) {
		const float *xr = x + r * cols;
		float *yr = y + r * cols;
		float m = -INFINITY, s = 0;
		for (int c = 0; c < cols; c++)
			m = fmaxf(m, xr[c]);
		for (int c = 0; c < cols; c++) {
			yr[c] = expf(xr[c] - m);
			s += yr[c];
		}
		for (int c = 0; c < cols; c++)
			yr[c] /= s;
	}
}
