/*
 * judge/kid: see kid.h.  Stopping a child is SIGSTOP plus waitpid(WUNTRACED)
 * — the judge is its parent, so it knows when every thread has stopped —
 * and a request continues it with SIGCONT before the clock starts; the
 * empty batches that calibrate the exchange (harness.c) go through the same
 * steps, so what they cost is subtracted from every role alike.
 */
#include "kid.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../proc.h"
#include "hot.h"

static int log_open(void)
{
	int fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	char p[64];
	snprintf(p, sizeof p, "/tmp/ksci-kid-%ld-XXXXXX", (long)getpid());
	fd = mkostemp(p, O_CLOEXEC);
	if (fd >= 0)
		unlink(p);
	return fd;
}

/* In the forked child: the fds in place, limits, then exec. Never returns. */
static void child_exec(const struct kid *k, const struct kid_opts *o, pid_t judge)
{
	int c = fcntl(k->ctl_fd, F_DUPFD, 100), a = o->arena_fd >= 0 ? fcntl(o->arena_fd, F_DUPFD, 100) : -1;
	int l = fcntl(k->log_fd, F_DUPFD, 100), nul = open("/dev/null", O_RDONLY);
	if (c < 0 || l < 0 || nul < 0 || dup2(nul, 0) < 0 || dup2(l, 1) < 0 || dup2(l, 2) < 0 ||
	    dup2(c, JCTL_FD) < 0 || (a >= 0 && dup2(a, JCTL_ARENA_FD) < 0))
		_exit(126);
	syscall(SYS_close_range, JCTL_ARENA_FD + 1, ~0U, 0);
	struct rlimit core = {0, 0}, fsize = {KID_LOG_MAX, KID_LOG_MAX};
	setrlimit(RLIMIT_CORE, &core);
	setrlimit(RLIMIT_FSIZE, &fsize);
	if (o->cpu_s > 0) {
		struct rlimit cpu = {(rlim_t)o->cpu_s, (rlim_t)o->cpu_s};
		setrlimit(RLIMIT_CPU, &cpu);
	}
	signal(SIGXFSZ, SIG_IGN);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != judge)
		_exit(125);
	execl(o->self, o->self, "--child", k->role, o->lib, (char *)NULL);
	fprintf(stderr, "kharness: cannot start %s: %s\n", o->self, strerror(errno));
	_exit(127);
}

static void describe(int st, char *e, const char *role)
{
	if (WIFSIGNALED(st))
		errf(e, "%s killed by signal %d (%s)", role, WTERMSIG(st), strsignal(WTERMSIG(st)));
	else
		errf(e, "%s exited with status %d", role, WEXITSTATUS(st));
}

static int alive(void *ctx)
{
	struct kid *k = ctx;
	if (k->dead)
		return 0;
	int st;
	if (waitpid(k->pid, &st, WNOHANG) == k->pid && (WIFEXITED(st) || WIFSIGNALED(st))) {
		k->dead = 1, k->wstatus = st;
		return 0;
	}
	return 1;
}

static int kid_stop(struct kid *k)
{
	if (k->dead)
		return -1;
	kill(k->pid, SIGSTOP);
	for (;;) {
		int st;
		pid_t r = waitpid(k->pid, &st, WUNTRACED);
		if (r < 0 && errno == EINTR)
			continue;
		if (r != k->pid)
			return -1;
		if (WIFSTOPPED(st))
			return 0;
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			k->dead = 1, k->wstatus = st;
			return -1;
		}
	}
}

static void kill_reap(struct kid *k)
{
	if (k->dead || k->pid <= 0)
		return;
	kill(k->pid, SIGKILL);
	int st;
	while (waitpid(k->pid, &st, 0) < 0 && errno == EINTR)
		;
	k->dead = 1, k->wstatus = st;
}

/* The child's own words: cut, and anything but printable ASCII replaced. */
static void clean(const char *in, size_t max, char *out, size_t n)
{
	size_t j = 0;
	for (size_t i = 0; i < max && in[i] && j + 1 < n; i++)
		out[j++] = in[i] >= 32 && in[i] < 127 ? in[i] : '?';
	out[j] = '\0';
}

int kid_spawn(struct kid *k, const char *role, const struct kid_opts *o, char *e)
{
	memset(k, 0, sizeof *k);
	k->role = role;
	k->pid = -1;
	k->warm_cpu = -1;
	k->log_fd = k->ctl_fd = -1;
	int fd;
	struct jctl *c = ctl_create(&fd, e);
	if (!c)
		return -1;
	k->c = c, k->ctl_fd = fd;
	if ((k->log_fd = log_open()) < 0) {
		errf(e, "cannot make a log file in /tmp: %s", strerror(errno));
		return -1;
	}
	pid_t judge = getpid();
	k->pid = fork();
	if (k->pid < 0) {
		errf(e, "fork: %s", strerror(errno));
		return -1;
	}
	if (k->pid == 0)
		child_exec(k, o, judge);
	return 0;
}

int kid_ready(struct kid *k, double deadline, char *e)
{
	const char *role = k->role;
	int rc = ctl_wait(&k->c->ready, 0, 0, deadline, alive, k, NULL);
	uint32_t r = atomic_load(&k->c->ready);
	if (rc == 0 && r == 1)
		return kid_stop(k) == 0 ? 0 : (describe(k->wstatus, e, role), -1);
	char m[600], tail[300];
	clean(k->c->msg, sizeof k->c->msg, m, sizeof m);
	kid_log_tail(k, tail, sizeof tail);
	if (rc == 2) {
		kill_reap(k);
		return errf(e, "%s did not start in time%s%s", role, tail[0] ? "; last: " : "", tail);
	}
	if (r != 1 && m[0]) {
		kill_reap(k);
		return errf(e, "%s", m);
	}
	kill_reap(k);
	describe(k->wstatus, e, role);
	if (tail[0]) {
		char d[ERRBUF];
		snprintf(d, sizeof d, "%s", e);
		errf(e, "%s; last: %s", d, tail);
	}
	return -1;
}

int kid_alive(struct kid *k) { return k->pid > 0 && alive(k); }

int kid_last_cpu(pid_t pid)
{
	char f[32], *end;
	if (proc_stat_field(pid, 39, f, sizeof f) < 0)
		return -1;
	long c = strtol(f, &end, 10);
	return end != f && *end == '\0' && c >= 0 && c < 65536 ? (int)c : -1;
}

int kid_request(struct kid *k, uint32_t op, double spin_s, double deadline, double *wall, char *e)
{
	if (k->dead) {
		describe(k->wstatus, e, k->role);
		return -1;
	}
	struct jctl *c = k->c;
	c->op = op;
	c->status = 0;
	uint32_t before = atomic_load_explicit(&c->done, memory_order_acquire);
	k->warm_cpu = -1;
	int pin = 0;
	cpu_set_t had, one;
	if (hot_on()) {
		int x = kid_last_cpu(k->pid);
		if (hot_warm(x, KID_WARM_S) == 1) {
			k->warm_cpu = x;
			/* --wake-cpu pin: the child's main thread may wake only there,
			 * and is let go as soon as its request is out. */
			if (hot_pin() && sched_getaffinity(k->pid, sizeof had, &had) == 0) {
				CPU_ZERO(&one);
				CPU_SET(x, &one);
				pin = sched_setaffinity(k->pid, sizeof one, &one) == 0;
			}
		}
	}
	kill(k->pid, SIGCONT);
	double t0 = proc_now();
	atomic_store_explicit(&c->req, ++k->seq, memory_order_release);
	ctl_wake(&c->req);
	hot_rest();
	if (pin)
		sched_setaffinity(k->pid, sizeof had, &had);
	int rc = ctl_wait(&c->done, before, spin_s, deadline, alive, k, NULL);
	double t1 = proc_now();
	if (rc == 2) {
		kill_reap(k);
		return -2;
	}
	if (rc == 1 || kid_stop(k) < 0) {
		describe(k->wstatus, e, k->role);
		return -1;
	}
	*wall = t1 - t0;
	k->t0 = t0, k->t1 = t1;
	if (c->status != 0) {
		char m[600];
		clean(c->msg, sizeof c->msg, m, sizeof m);
		errf(e, "%s", m[0] ? m : "the device reported a fault");
		return -3;
	}
	return 0;
}

int kid_split(const struct kid *k, double *wake, double *tail)
{
	double s = k->c->seen_at, f = k->c->finished_at;
	if (!(s >= k->t0 && f >= s && f <= k->t1))
		return 0;
	*wake = s - k->t0, *tail = k->t1 - f;
	return 1;
}

int kid_woke_there(const struct kid *k)
{
	double w, t;
	if (k->warm_cpu < 0 || !kid_split(k, &w, &t))
		return -1;
	return k->c->seen_cpu == k->warm_cpu;
}

void kid_log_tail(struct kid *k, char *buf, size_t n)
{
	buf[0] = '\0';
	struct stat sb;
	if (k->log_fd < 0 || fstat(k->log_fd, &sb) < 0 || sb.st_size <= 0 || n < 2)
		return;
	char raw[512];
	size_t want = n - 1 < sizeof raw ? n - 1 : sizeof raw;
	off_t from = sb.st_size > (off_t)want ? sb.st_size - (off_t)want : 0;
	ssize_t got = pread(k->log_fd, raw, want, from);
	if (got <= 0)
		return;
	size_t len = (size_t)got;
	while (len && (raw[len - 1] == '\n' || raw[len - 1] == '\r'))
		len--;
	size_t s = len;
	while (s && raw[s - 1] != '\n')
		s--;
	for (size_t j = 0; s < len && j + 1 < n; s++)
		buf[j++] = raw[s] >= 32 && raw[s] < 127 ? raw[s] : '?', buf[j] = '\0';
}

void kid_log_text(struct kid *k, char *buf, size_t n)
{
	buf[0] = '\0';
	struct stat sb;
	if (k->log_fd < 0 || fstat(k->log_fd, &sb) < 0 || sb.st_size <= 0 || n < 2)
		return;
	off_t from = sb.st_size > (off_t)(n - 1) ? sb.st_size - (off_t)(n - 1) : 0;
	ssize_t got = pread(k->log_fd, buf, n - 1, from);
	if (got <= 0)
		return;
	size_t len = (size_t)got, s = 0;
	if (from > 0) /* start at a line */
		while (s < len && buf[s++] != '\n')
			;
	size_t j = 0;
	for (; s < len; s++)
		buf[j++] = buf[s] == '\n' || (buf[s] >= 32 && buf[s] < 127) ? buf[s] : '?';
	while (j && buf[j - 1] == '\n')
		j--;
	buf[j] = '\0';
}

int kid_start(struct kid *k, const char *role, const struct kid_opts *o, double deadline, char *e)
{
	return kid_spawn(k, role, o, e) < 0 ? -1 : kid_ready(k, deadline, e);
}

void kid_end(struct kid *k)
{
	if (!k->c)
		return; /* never started */
	kill_reap(k);
	if (k->c)
		munmap(k->c, sizeof *k->c);
	if (k->ctl_fd >= 0)
		close(k->ctl_fd);
	if (k->log_fd >= 0)
		close(k->log_fd);
	k->c = NULL;
	k->ctl_fd = k->log_fd = -1;
}
