/*
 * kill_in_pwrite: an LD_PRELOAD shim for the shell tests (jq's tests/shtest
 * injects faults the same way).  The first pwrite() of more than one byte
 * writes half its bytes, then the process is killed with SIGKILL: the crash
 * in the middle of an append that a `cat >> archive` could not survive,
 * made the same every run instead of raced with a timed kill.
 * KILL_IN_PWRITE_PROG names the one program it acts in (all others write
 * as usual), so a whole pipeline can run under the shim.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static ssize_t half_then_die(int fd, const void *buf, size_t n, off_t at)
{
	ssize_t (*real)(int, const void *, size_t, off_t) =
		(ssize_t(*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
	const char *prog = getenv("KILL_IN_PWRITE_PROG");
	if (n <= 1 || (prog && strcmp(prog, program_invocation_short_name) != 0))
		return real(fd, buf, n, at);
	ssize_t w = real(fd, buf, n / 2, at);
	fsync(fd); /* the half member reaches the disk, as a power cut could leave it */
	raise(SIGKILL);
	return w;
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t at) { return half_then_die(fd, buf, n, at); }
ssize_t pwrite64(int fd, const void *buf, size_t n, off_t at) { return half_then_die(fd, buf, n, at); }
