/* t14 attack "ptrace / process_vm_readv": on its first call the kernel reads
 * its parent's memory with process_vm_readv (at the parent's first mapping,
 * from /proc/PPID/maps where it can be read) and tries PTRACE_ATTACH on it;
 * each outcome goes to stderr ("ATTACK process_vm_readv=-1 errno=EPERM",
 * "ATTACK ptrace=-1 errno=EPERM"), then a correct rowsum. */
/* The generated wrapper has included <stdint.h> before this file, so
 * _GNU_SOURCE takes effect only if <features.h> is read again. */
#undef _FEATURES_H
#define _GNU_SOURCE
#include <features.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static void attack(void)
{
	pid_t pp = getppid();
	unsigned long lo = 0x400000;
	char path[64], got[64];
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pp);
	FILE *m = fopen(path, "r");
	if (m) {
		if (fscanf(m, "%lx", &lo) != 1)
			lo = 0x400000;
		fclose(m);
	}
	struct iovec l = {got, sizeof got}, r = {(void *)lo, sizeof got};
	ssize_t n = process_vm_readv(pp, &l, 1, &r, 1, 0);
	fprintf(stderr, "ATTACK process_vm_readv=%zd errno=%s (parent %d at %#lx, maps %s)\n", n,
		n < 0 ? strerrorname_np(errno) : "-", (int)pp, lo, m ? "read" : "unreadable");
	long t = ptrace(PTRACE_ATTACH, pp, NULL, NULL);
	fprintf(stderr, "ATTACK ptrace=%ld errno=%s\n", t, t < 0 ? strerrorname_np(errno) : "-");
	if (t == 0) {
		waitpid(pp, NULL, __WALL);
		ptrace(PTRACE_DETACH, pp, NULL, NULL);
	}
}

void solve(const float* x, float* y, int rows, int cols)
{
	static int done;
	if (!done) {
		done = 1;
		attack();
	}
	for (long r = 0; r < rows; r++) {
		double s = 0;
		for (long c = 0; c < cols; c++)
			s += x[r * cols + c];
		y[r] = (float)s;
	}
}
