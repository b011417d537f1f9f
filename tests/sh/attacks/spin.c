/* t14 attack "spin threads left behind": on its first call the kernel starts
 * two threads named @MARK@ (filled in by the test) that spin forever, then
 * returns correct results. */
/* The generated wrapper has included <stdint.h> before this file, so
 * _GNU_SOURCE takes effect only if <features.h> is read again. */
#undef _FEATURES_H
#define _GNU_SOURCE
#include <features.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/prctl.h>

static void *spin(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "@MARK@");
	for (volatile unsigned long i = 0;; i++)
		;
	return NULL;
}

void solve(const float* x, float* y, int rows, int cols)
{
	static int done;
	if (!done) {
		pthread_t t;
		int started = 0;
		done = 1;
		for (int i = 0; i < 2; i++)
			if (pthread_create(&t, NULL, spin, NULL) == 0 && pthread_detach(t) == 0)
				started++;
		fprintf(stderr, "ATTACK spin: %d threads started\n", started);
	}
	for (long r = 0; r < rows; r++) {
		double s = 0;
		for (long c = 0; c < cols; c++)
			s += x[r * cols + c];
		y[r] = (float)s;
	}
}
