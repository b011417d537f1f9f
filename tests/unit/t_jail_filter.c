/* t_jail_filter: lib/jail_filter, the seccomp filter the candidate child puts
 * on itself before it loads kernel code.  A filter cannot be taken off, so
 * each check forks a fresh process that installs it, tries one thing, and
 * reports through its exit status (0: as expected) and a pipe (what went
 * wrong).  Where an errno could come from elsewhere (Yama refuses ptrace of
 * a parent too), a check also tries something only the filter refuses, on
 * the process itself.
 *
 * Under ASan: the children end with _exit, never exit, so LeakSanitizer's
 * exit-time check does not run in a filtered process; it stops the world
 * from a helper made by clone without CLONE_THREAD that then ptraces, both
 * of which the filter refuses, and it would fail there instead of reporting.
 * ASan's own threads are CLONE_THREAD clones and work. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jail_filter.h"
#include "t.h"

extern char **environ;

/* In a child: why its check failed, sent to the parent. */
static char why[ERRBUF];
#define FAIL(...) (snprintf(why, sizeof why, __VA_ARGS__), 1)
/* A call that must fail with errno e, or one that must work; else the check
 * fails, naming the call. */
#define DENIED(call, e)                                                                         \
	do {                                                                                    \
		errno = 0;                                                                      \
		long r_ = (long)(call);                                                         \
		if (r_ != -1 || errno != (e))                                                   \
			return FAIL("%s gave %ld (%s), not %s", #call, r_, strerror(errno),     \
				    strerror(e));                                               \
	} while (0)
#define WORKS(call)                                                                             \
	do {                                                                                    \
		errno = 0;                                                                      \
		long r_ = (long)(call);                                                         \
		if (r_ < 0)                                                                     \
			return FAIL("%s gave %ld (%s)", #call, r_, strerror(errno));            \
	} while (0)

enum { INSTALL = 1, RAW = 0 };

/* Fork, install the filter when asked, run fn; the child must exit 0, or die
 * by signal sig when sig is not 0. */
static void check(const char *name, int (*fn)(void), int install, int sig)
{
	int p[2];
	if (pipe(p) < 0) {
		T_OK(0, "%s: pipe: %s", name, strerror(errno));
		return;
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		T_OK(0, "%s: fork: %s", name, strerror(errno));
		close(p[0]);
		close(p[1]);
		return;
	}
	if (pid == 0) {
		close(p[0]);
		int rc;
		if (install && jail_filter_install(why) < 0)
			rc = 2;
		else
			rc = fn();
		if (rc && write(p[1], why, strlen(why)) < 0)
			rc = 3;
		_exit(rc ? 1 : 0);
	}
	close(p[1]);
	char msg[ERRBUF] = "";
	size_t n = 0;
	ssize_t k;
	while (n < sizeof msg - 1 && (k = read(p[0], msg + n, sizeof msg - 1 - n)) > 0)
		n += (size_t)k;
	msg[n] = '\0';
	close(p[0]);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (sig)
		T_OK(WIFSIGNALED(st) && WTERMSIG(st) == sig, "%s%s%s", name, *msg ? ": " : "", msg);
	else
		T_OK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s%s%s%s", name, *msg ? ": " : "", msg,
		     WIFSIGNALED(st) ? " (killed by a signal)" : "");
}

static void *set_flag(void *arg)
{
	*(volatile int *)arg = 1;
	return arg;
}

static int c_thread(void)
{
	pthread_t t;
	volatile int ran = 0;
	int rc = pthread_create(&t, NULL, set_flag, (void *)&ran);
	if (rc)
		return FAIL("pthread_create: %s", strerror(rc));
	pthread_join(t, NULL);
	return ran ? 0 : FAIL("the thread did not run");
}

/* OpenMP-style: a team of 8 that all exist at once, each summing a slice. */
enum { TEAM = 8, SLICE = 100000 };
static pthread_barrier_t team_bar;
static long team_sum[TEAM];

static void *team_work(void *arg)
{
	long i = (long)(intptr_t)arg, s = 0;
	pthread_barrier_wait(&team_bar);
	for (long k = i * SLICE; k < (i + 1) * SLICE; k++)
		s += k;
	team_sum[i] = s;
	return NULL;
}

static int c_team(void)
{
	pthread_t t[TEAM];
	pthread_barrier_init(&team_bar, NULL, TEAM);
	for (long i = 0; i < TEAM; i++) {
		int rc = pthread_create(&t[i], NULL, team_work, (void *)(intptr_t)i);
		if (rc)
			return FAIL("pthread_create %ld: %s", i, strerror(rc));
	}
	long total = 0, n = (long)TEAM * SLICE;
	for (int i = 0; i < TEAM; i++) {
		pthread_join(t[i], NULL);
		total += team_sum[i];
	}
	return total == n * (n - 1) / 2 ? 0 : FAIL("sum %ld, not %ld", total, n * (n - 1) / 2);
}

static int c_fork(void)
{
	errno = 0;
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	if (pid > 0) {
		waitpid(pid, NULL, 0);
		return FAIL("fork made a child");
	}
	if (errno != EPERM)
		return FAIL("fork: %s, not EPERM", strerror(errno));
	errno = 0;
	pid = vfork();
	if (pid == 0)
		_exit(0);
	if (pid > 0) {
		waitpid(pid, NULL, 0);
		return FAIL("vfork made a child");
	}
	if (errno != EPERM)
		return FAIL("vfork: %s, not EPERM", strerror(errno));
	/* fork's own system call, as kernel code could make it. */
	errno = 0;
	long r = syscall(SYS_clone, (unsigned long)SIGCHLD, 0L, 0L, 0L, 0L);
	if (r == 0)
		_exit(0);
	if (r > 0) {
		waitpid((pid_t)r, NULL, 0);
		return FAIL("clone(SIGCHLD) made a child");
	}
	if (errno != EPERM)
		return FAIL("clone(SIGCHLD): %s, not EPERM", strerror(errno));
#ifdef SYS_clone3
	/* struct clone_args, version 0: flags ... tls; exit_signal is [4]. */
	uint64_t ca[8] = {0};
	ca[4] = SIGCHLD;
	errno = 0;
	r = syscall(SYS_clone3, ca, sizeof ca);
	if (r == 0)
		_exit(0);
	if (r > 0) {
		waitpid((pid_t)r, NULL, 0);
		return FAIL("clone3 made a child");
	}
	if (errno != ENOSYS)
		return FAIL("clone3: %s, not ENOSYS", strerror(errno));
#endif
	return 0;
}

static int c_spawn(void)
{
	int st = system("/bin/true");
	if (st == 0)
		return FAIL("system(\"/bin/true\") ran it");
	pid_t pid;
	char *argv[] = {"true", NULL};
	int rc = posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ);
	if (rc == 0) {
		waitpid(pid, NULL, 0);
		return FAIL("posix_spawn ran /bin/true");
	}
	return 0;
}

/* /bin/false: an exec that got through would end the child with 1, a failure. */
static int c_exec(void)
{
	char *argv[] = {"false", NULL};
	DENIED(execve("/bin/false", argv, environ), EPERM);
	int fd = open("/bin/false", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return FAIL("open /bin/false: %s", strerror(errno));
	DENIED(syscall(SYS_execveat, fd, "", argv, environ, AT_EMPTY_PATH), EPERM);
	close(fd);
	return 0;
}

static volatile sig_atomic_t got_usr1;
static void on_usr1(int s)
{
	(void)s;
	got_usr1++;
}

static int c_signals(void)
{
	DENIED(kill(getppid(), 0), EPERM);
	DENIED(kill(0, 0), EPERM);
	DENIED(kill(-1, 0), EPERM);
	WORKS(kill(getpid(), 0));
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	WORKS(raise(SIGUSR1));
	if (got_usr1 != 1)
		return FAIL("raise(SIGUSR1) was not delivered");
	int rc = pthread_kill(pthread_self(), SIGUSR1);
	if (rc || got_usr1 != 2)
		return FAIL("pthread_kill(self, SIGUSR1): %s, delivered %d", strerror(rc), (int)got_usr1);
	union sigval v = {.sival_int = 7};
	WORKS(sigqueue(getpid(), SIGUSR1, v));
	if (got_usr1 != 3)
		return FAIL("sigqueue to itself was not delivered");
	DENIED(sigqueue(getppid(), 0, v), EPERM);
	DENIED(syscall(SYS_tgkill, getppid(), getppid(), 0), EPERM);
	DENIED(syscall(SYS_tkill, (long)gettid(), 0), EPERM);
#ifdef SYS_pidfd_open
	long fd = syscall(SYS_pidfd_open, getpid(), 0);
	if (fd < 0 && errno != ENOSYS)
		return FAIL("pidfd_open(self): %s", strerror(errno));
	if (fd >= 0)
		close((int)fd);
	DENIED(syscall(SYS_pidfd_open, getppid(), 0), EPERM);
#endif
	return 0;
}

static int c_ptrace(void)
{
	/* PTRACE_SEIZE, not PTRACE_ATTACH: the filter refuses every request
	 * alike, and were it to let one through, ATTACH would leave this test
	 * stopped for good. */
	DENIED(ptrace(PTRACE_SEIZE, getppid(), NULL, NULL), EPERM);
	/* Unfiltered, this is ESRCH (we are not its tracer). */
	DENIED(ptrace(PTRACE_PEEKUSER, getpid(), NULL, NULL), EPERM);
	DENIED(ptrace(PTRACE_TRACEME, 0, NULL, NULL), EPERM);
	return 0;
}

static int c_vm_readv(void)
{
	static char secret[16] = "secret";
	char buf[16];
	struct iovec local = {buf, sizeof buf}, remote = {secret, sizeof secret};
	DENIED(process_vm_readv(getppid(), &local, 1, &remote, 1, 0), EPERM);
	/* Unfiltered, reading itself always works. */
	DENIED(process_vm_readv(getpid(), &local, 1, &remote, 1, 0), EPERM);
	DENIED(process_vm_writev(getpid(), &local, 1, &remote, 1, 0), EPERM);
	return 0;
}

static int c_namespaces(void)
{
	DENIED(unshare(CLONE_NEWUSER), EPERM);
	DENIED(unshare(CLONE_NEWNS), EPERM);
	DENIED(setns(0, 0), EPERM);
	/* Where nothing could be mounted, should the filter let it through. */
	DENIED(mount("none", "/nonexistent-ksci", "ksci-nofs", 0, NULL), EPERM);
	DENIED(umount2("/nonexistent-ksci", 0), EPERM);
	DENIED(chroot("/"), EPERM);
#ifdef SYS_fsopen
	DENIED(syscall(SYS_fsopen, "tmpfs", 0), EPERM);
#endif
	return 0;
}

static int c_kernel_surface(void)
{
	DENIED(syscall(SYS_bpf, 0, NULL, 0), EPERM);
	DENIED(syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0), EPERM);
	DENIED(syscall(SYS_userfaultfd, 0), EPERM);
	DENIED(syscall(SYS_keyctl, 0, 0, 0, 0, 0), EPERM);
#ifdef SYS_io_uring_setup
	DENIED(syscall(SYS_io_uring_setup, 1, NULL), EPERM);
#endif
	DENIED(syscall(SYS_personality, 0xffffffffUL), EPERM);
	DENIED(syscall(SYS_kcmp, getpid(), getppid(), 0, 0, 0), EPERM);
	struct rlimit rl;
	DENIED(prlimit(getppid(), RLIMIT_NOFILE, NULL, &rl), EPERM);
	return 0;
}

/* What kernel code and its runtime do all day still works. */
static int c_plain(void)
{
	char *small = malloc(4096), *big = malloc(64 << 20);
	if (!small || !big)
		return FAIL("malloc failed");
	memset(small, 1, 4096);
	memset(big, 2, 64 << 20);
	free(small);
	free(big);
	void *m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return FAIL("mmap: %s", strerror(errno));
	WORKS(mprotect(m, 1 << 20, PROT_READ | PROT_EXEC));
	munmap(m, 1 << 20);
	int fd = open("/dev/null", O_WRONLY);
	if (fd < 0)
		return FAIL("open /dev/null: %s", strerror(errno));
	if (write(fd, "x", 1) != 1)
		return FAIL("write /dev/null: %s", strerror(errno));
	close(fd);
	/* The point of it all: loading a shared object. */
	void *h = dlopen("libresolv.so.2", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return FAIL("dlopen: %s", dlerror());
	dlclose(h);
	struct rlimit rl;
	WORKS(getrlimit(RLIMIT_NOFILE, &rl));
	WORKS(prctl(PR_SET_NAME, "kernel", 0, 0, 0));
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		return FAIL("no_new_privs is not set");
	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) != 2)
		return FAIL("PR_GET_SECCOMP is not 2 (filter mode)");
	return 0;
}

/* TSYNC: a thread that exists before the install is filtered too. */
static int pipe_go[2];
static void *early_thread(void *arg)
{
	char c;
	if (read(pipe_go[0], &c, 1) != 1)
		return NULL;
	errno = 0;
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	*(int *)arg = pid < 0 && errno == EPERM && prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 2;
	return NULL;
}

static int c_tsync(void)
{
	pthread_t t;
	int ok = 0;
	if (pipe(pipe_go) < 0 || pthread_create(&t, NULL, early_thread, &ok) != 0)
		return FAIL("pipe/pthread_create failed");
	if (jail_filter_install(why) < 0)
		return 1;
	if (write(pipe_go[1], "g", 1) != 1)
		return FAIL("write: %s", strerror(errno));
	pthread_join(t, NULL);
	return ok ? 0 : FAIL("a thread started before the install could fork");
}

/* TSYNC fails when another thread has a filter of its own: an error, not a
 * half-filtered process. */
static void *own_filter(void *arg)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int rc = ctx ? seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(acct), 0) : -1;
	if (rc == 0)
		rc = seccomp_load(ctx);
	if (ctx)
		seccomp_release(ctx);
	__atomic_store_n((int *)arg, rc, __ATOMIC_SEQ_CST);
	char c;
	if (read(pipe_go[0], &c, 1) != 1)
		return NULL;
	return NULL;
}

static int c_tsync_fails(void)
{
	pthread_t t;
	int rc = 1;
	if (pipe(pipe_go) < 0 || pthread_create(&t, NULL, own_filter, &rc) != 0)
		return FAIL("pipe/pthread_create failed");
	while (__atomic_load_n(&rc, __ATOMIC_SEQ_CST) == 1)
		usleep(1000);
	if (rc != 0)
		return FAIL("the thread's own filter did not load: %s", strerror(-rc));
	char e[ERRBUF] = "";
	int r = jail_filter_install(e);
	if (write(pipe_go[1], "g", 1) != 1)
		return FAIL("write: %s", strerror(errno));
	pthread_join(t, NULL);
	if (r != -1 || !strstr(e, "filter of its own"))
		return FAIL("install gave %d (%s)", r, e);
	/* And nothing was installed on this thread. */
	return prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 0 ? 0 : FAIL("a filter was installed after all");
}

#ifdef __x86_64__
/* The x32 ABI reaches the same kernel with other numbers, past a filter
 * written for x86-64: it must kill, not slip through. */
static int c_x32(void)
{
	syscall(0x40000000L | SYS_getpid);
	return FAIL("an x32 system call came back");
}
#endif

int main(void)
{
	check("a thread runs", c_thread, INSTALL, 0);
	check("a team of 8 threads runs (OpenMP-style)", c_team, INSTALL, 0);
	check("fork, vfork, clone(SIGCHLD) fail with EPERM, clone3 with ENOSYS", c_fork, INSTALL, 0);
	check("system() and posix_spawn() of /bin/true fail", c_spawn, INSTALL, 0);
	check("execve and execveat fail with EPERM", c_exec, INSTALL, 0);
	check("signals: only to itself (raise, pthread_kill, sigqueue delivered)", c_signals, INSTALL, 0);
	check("ptrace fails with EPERM", c_ptrace, INSTALL, 0);
	check("process_vm_readv/writev fail with EPERM", c_vm_readv, INSTALL, 0);
	check("unshare, setns, mount, umount2, chroot, fsopen fail with EPERM", c_namespaces, INSTALL, 0);
	check("bpf, perf_event_open, userfaultfd, keyctl, io_uring, personality, kcmp, prlimit(parent) fail",
	      c_kernel_surface, INSTALL, 0);
	check("malloc, mmap, mprotect, open/write /dev/null, dlopen, getrlimit, prctl work", c_plain, INSTALL, 0);
	check("a thread started before the install is filtered too (TSYNC)", c_tsync, RAW, 0);
	check("install fails with a message when a thread has a filter of its own", c_tsync_fails, RAW, 0);
#ifdef __x86_64__
	check("an x32-ABI system call kills the process (SIGSYS)", c_x32, INSTALL, SIGSYS);
#endif
	return T_DONE();
}
