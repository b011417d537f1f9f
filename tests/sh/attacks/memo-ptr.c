/* t14 attack "memoisation by pointer": honest at the test sizes (kverify
 * passes it); at benchmark sizes it computes once per output pointer and
 * returns at once when called again with a y it has seen, whatever x holds.
 * Each hit is logged, so the test can tell an honest run (no hit) from a
 * cheat the judge missed. */
#include <stdio.h>

static float *seen[4096];
static int nseen;
static long hits;

void solve(const float* x, float* y, int rows, int cols)
{
	if ((long)rows * cols >= 1L << 20) {
		for (int i = 0; i < nseen; i++)
			if (seen[i] == y) {
				fprintf(stderr, "ATTACK memo-ptr: hit %ld\n", ++hits);
				return;
			}
		if (nseen < 4096)
			seen[nseen++] = y;
	}
	for (long r = 0; r < rows; r++) {
		double s = 0;
		for (long c = 0; c < cols; c++)
			s += x[r * cols + c];
		y[r] = (float)s;
	}
}
