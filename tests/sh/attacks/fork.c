/* t14 attack "fork": on its first call the kernel forks; the outcome goes to
 * stderr ("ATTACK fork=-1 errno=EPERM", or "fork=child" from a child that
 * ran), then a correct rowsum. */
/* The generated wrapper has included <stdint.h> before this file, so
 * _GNU_SOURCE takes effect only if <features.h> is read again. */
#undef _FEATURES_H
#define _GNU_SOURCE
#include <features.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void solve(const float* x, float* y, int rows, int cols)
{
	static int done;
	if (!done) {
		done = 1;
		pid_t p = fork();
		if (p == 0) {
			fprintf(stderr, "ATTACK fork=child\n");
			_exit(0);
		}
		if (p < 0)
			fprintf(stderr, "ATTACK fork=-1 errno=%s\n", strerrorname_np(errno));
		else {
			fprintf(stderr, "ATTACK fork=%d\n", (int)p);
			waitpid(p, NULL, 0);
		}
	}
	for (long r = 0; r < rows; r++) {
		double s = 0;
		for (long c = 0; c < cols; c++)
			s += x[r * cols + c];
		y[r] = (float)s;
	}
}
