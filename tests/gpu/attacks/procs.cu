/* attacks.sh 8, "other processes": on its child's first call the kernel
 * forks, reads its parent's (the judge's) memory with process_vm_readv,
 * tries PTRACE_ATTACH on it, and sends it SIGKILL; each outcome goes to
 * stderr ("ATTACK fork=-1 errno=1", "ATTACK process_vm_readv=-1 ...",
 * "ATTACK ptrace=-1 ...", "ATTACK kill=-1 ..."; "ATTACK fork=child" from a
 * child that ran), then a correct axpy.  The child's seccomp filter refuses
 * all four (EPERM): expected verified, every attempt =-1. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

__global__ void axpy_k(const float* x, const float* y, float* z, int n, float a)
{
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
		z[i] = a * x[i] + y[i];
}

static void attack(void)
{
	pid_t pp = getppid();
	pid_t p = fork();
	if (p == 0) {
		fprintf(stderr, "ATTACK fork=child\n");
		_exit(0);
	}
	if (p < 0)
		fprintf(stderr, "ATTACK fork=-1 errno=%d (%s)\n", errno, strerror(errno));
	else {
		fprintf(stderr, "ATTACK fork=%d\n", (int)p);
		waitpid(p, NULL, 0);
	}
	unsigned long lo = 0x400000;
	char path[64], got[64];
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pp);
	FILE* m = fopen(path, "r");
	if (m) {
		if (fscanf(m, "%lx", &lo) != 1)
			lo = 0x400000;
		fclose(m);
	}
	struct iovec l = {got, sizeof got}, r = {(void*)lo, sizeof got};
	ssize_t n = process_vm_readv(pp, &l, 1, &r, 1, 0);
	fprintf(stderr, "ATTACK process_vm_readv=%zd errno=%d (%s) (parent %d at %#lx, maps %s)\n", n,
		n < 0 ? errno : 0, n < 0 ? strerror(errno) : "-", (int)pp, lo, m ? "read" : "unreadable");
	long t = ptrace(PTRACE_ATTACH, pp, NULL, NULL);
	fprintf(stderr, "ATTACK ptrace=%ld errno=%d (%s)\n", t, t < 0 ? errno : 0, t < 0 ? strerror(errno) : "-");
	if (t == 0) {
		waitpid(pp, NULL, __WALL);
		ptrace(PTRACE_DETACH, pp, NULL, NULL);
	}
	int k = kill(pp, SIGKILL);
	fprintf(stderr, "ATTACK kill=%d errno=%d (%s)\n", k, k < 0 ? errno : 0, k < 0 ? strerror(errno) : "-");
}

extern "C" void solve(const float* x, const float* y, float* z, int n, float a)
{
	static int done;
	if (!done) {
		done = 1;
		attack();
	}
	if (n > 0)
		axpy_k<<<(n + 255) / 256 < 4096 ? (n + 255) / 256 : 4096, 256>>>(x, y, z, n, a);
}
