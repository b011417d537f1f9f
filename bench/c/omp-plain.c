/* bench/c/omp-plain.c — the c A/A with no judge: one process calls the
 * 2-thread softmax of bench/aa/softmax_mt.c as "A" and again as "B" (the same
 * code, its own buffers), interleaved call by call with the order swapped
 * every round, fresh inputs before every call, and prints per size the median
 * and fastest call of each and the ratio of the medians.  If this plain loop
 * cannot hold the judge's A/A criterion (|ratio - 1| <= 1 %, CV of the
 * medians <= 0.3 % across processes) on a machine, no judge can there: it is
 * the floor the machine sets (bench/c/omp-plain.sh runs it, docs/gpu.md).
 *   usage: omp-plain ROWS COLS CALLS */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void solve(const float *x, float *y, int rows, int cols);

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: omp-plain ROWS COLS CALLS\n");
		return 2;
	}
	int rows = atoi(argv[1]), cols = atoi(argv[2]), calls = atoi(argv[3]);
	if (rows < 1 || cols < 1 || calls < 2) {
		fprintf(stderr, "omp-plain: ROWS, COLS >= 1, CALLS >= 2\n");
		return 2;
	}
	size_t n = (size_t)rows * (size_t)cols;
	float *x = malloc(n * sizeof *x), *y[2] = {malloc(n * sizeof(float)), malloc(n * sizeof(float))};
	double *t[2] = {malloc((size_t)calls * sizeof(double)), malloc((size_t)calls * sizeof(double))};
	if (!x || !y[0] || !y[1] || !t[0] || !t[1])
		return 1;
	unsigned s = 12345;
	for (int w = 0; w < 2; w++) /* warm-up: one call each */
		solve(x, y[w], rows, cols);
	for (int c = 0; c < calls; c++)
		for (int k = 0; k < 2; k++) {
			int who = (c + k) & 1; /* A B, then B A */
			for (size_t i = 0; i < n; i++) {
				s = s * 1664525u + 1013904223u;
				x[i] = (float)(s >> 8) * (1.0f / 16777216.0f) * 8.0f - 4.0f;
			}
			double t0 = now();
			solve(x, y[who], rows, cols);
			t[who][c] = now() - t0;
		}
	double med[2], min[2];
	for (int w = 0; w < 2; w++) {
		qsort(t[w], (size_t)calls, sizeof(double), cmp);
		med[w] = calls % 2 ? t[w][calls / 2] : (t[w][calls / 2 - 1] + t[w][calls / 2]) / 2;
		min[w] = t[w][0];
	}
	printf("%dx%d A %.1f B %.1f minA %.1f minB %.1f ratio %.4f\n", rows, cols, med[0] * 1e6, med[1] * 1e6,
	       min[0] * 1e6, min[1] * 1e6, med[1] / med[0]);
	return 0;
}
