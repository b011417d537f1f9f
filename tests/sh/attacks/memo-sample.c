/* t14 attack "memoisation by sampled contents": honest at the test sizes
 * (kverify passes it); at benchmark sizes it keeps 64 elements of x at fixed
 * indices and its last y, and when the next call's samples are the same it
 * copies the stored y instead of reading x.  Each hit is logged, so the test
 * can tell an honest run (fresh inputs every call: no hit) from a cheat the
 * judge missed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static float samp[64], *last;
static int lrows = -1, lcols = -1;
static long hits;

void solve(const float* x, float* y, int rows, int cols)
{
	long n = (long)rows * cols;
	float s[64];
	if (n >= 1L << 20) {
		for (int k = 0; k < 64; k++)
			s[k] = x[(n - 1) * k / 63];
		if (last && rows == lrows && cols == lcols && memcmp(s, samp, sizeof s) == 0) {
			memcpy(y, last, sizeof *y * (size_t)rows);
			fprintf(stderr, "ATTACK memo-sample: hit %ld\n", ++hits);
			return;
		}
	}
	for (long r = 0; r < rows; r++) {
		double t = 0;
		for (long c = 0; c < cols; c++)
			t += x[r * cols + c];
		y[r] = (float)t;
	}
	if (n >= 1L << 20) {
		float *p = realloc(last, sizeof *y * (size_t)rows);
		if (!p)
			return;
		last = p;
		memcpy(last, y, sizeof *y * (size_t)rows);
		memcpy(samp, s, sizeof s);
		lrows = rows, lcols = cols;
	}
}
