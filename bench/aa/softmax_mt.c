/* softmax for the c back end, rows split over two threads: the kernel
 * bench/aa.sh times against an identical copy of itself, so that the A/A
 * calibration covers the multi-threaded case (kernels are built -fopenmp).
 * Numerically stable: each row is shifted by its maximum before exp. */
#include <math.h>

void solve(const float* x, float* y, int rows, int cols)
{
	#pragma omp parallel for num_threads(2) schedule(static)
	for (long r = 0; r < rows; r++) {
		const float *xr = x + r * cols;
		float *yr = y + r * cols;
		float m = -INFINITY;
		for (int c = 0; c < cols; c++)
			m = xr[c] > m ? xr[c] : m;
		float s = 0;
		for (int c = 0; c < cols; c++) {
			yr[c] = expf(xr[c] - m);
			s += yr[c];
		}
		for (int c = 0; c < cols; c++)
			yr[c] /= s;
	}
}
