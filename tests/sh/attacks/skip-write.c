/* t14 attack "skip the write": honest on the first call at each benchmark
 * size (the judge's check before timing), then returns at once, never
 * writing y again.  What y then holds is whatever the judge left there; with
 * a tolerance loose enough that another batch's outputs pass, only the
 * poison in what it never wrote shows it.  Each skip is logged. */
#include <stdio.h>

static int last_rows = -1, last_cols = -1;
static long skips;

void solve(const float* x, float* y, int rows, int cols)
{
	if ((long)rows * cols >= 1L << 20) {
		if (rows == last_rows && cols == last_cols) {
			if (++skips % 1000 == 1)
				fprintf(stderr, "ATTACK skip-write: skipped %ld\n", skips);
			return;
		}
		last_rows = rows, last_cols = cols;
	}
	for (long r = 0; r < rows; r++) {
		double s = 0;
		for (long c = 0; c < cols; c++)
			s += x[r * cols + c];
		y[r] = (float)s;
	}
}
