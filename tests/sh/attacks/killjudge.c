/* t14 attack "kill the judge": on its first call the kernel sends SIGKILL to
 * its parent and to every process it may signal (kill -1), then computes a
 * correct rowsum.  kill(-1) is only tried inside a pid namespace other than
 * the test's (its "pid:[...]" is filled in by the test; unfilled, never):
 * were the sandbox ever missing, it would kill every process of the user
 * running the tests. */
/* The generated wrapper has included <stdint.h> before this file, so
 * _GNU_SOURCE takes effect only if <features.h> is read again. */
#undef _FEATURES_H
#define _GNU_SOURCE
#include <features.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void solve(const float* x, float* y, int rows, int cols)
{
	static int done;
	if (!done) {
		char ns[64] = "";
		ssize_t k;
		done = 1;
		pid_t pp = getppid();
		fprintf(stderr, "ATTACK kill parent %d\n", (int)pp);
		int rc = kill(pp, SIGKILL);
		fprintf(stderr, "ATTACK kill parent=%d errno=%s\n", rc, rc ? strerrorname_np(errno) : "-");
		k = readlink("/proc/self/ns/pid", ns, sizeof ns - 1);
		if (k > 0 && strncmp("@HOSTPIDNS@", "pid:", 4) == 0 && strcmp(ns, "@HOSTPIDNS@") != 0) {
			fprintf(stderr, "ATTACK kill -1\n");
			rc = kill(-1, SIGKILL);
			fprintf(stderr, "ATTACK kill -1=%d errno=%s\n", rc, rc ? strerrorname_np(errno) : "-");
		} else
			fprintf(stderr, "ATTACK kill -1 not tried: in the test's own pid namespace\n");
	}
	for (long r = 0; r < rows; r++) {
		double s = 0;
		for (long c = 0; c < cols; c++)
			s += x[r * cols + c];
		y[r] = (float)s;
	}
}
