/*
 * proc: fork/exec with pipes and a poll loop.  The parent never blocks on a
 * child that hangs: it polls with the remaining deadline, reaps with WNOHANG,
 * and once the direct child is gone it kills the rest of its group so that a
 * grandchild holding the pipes open cannot stall the tool.
 *
 * The child's end is seen when it happens: the loop also polls a pidfd of
 * the child (pidfd_open, Linux 5.3), readable once it has exited.  Before,
 * a child whose pipes had closed a moment before it could be reaped was
 * looked at again only after the loop's 50 ms sleep: every run took up to
 * 50 ms more than the child (kcompile's nvcc plan, build script and rm
 * -rf: 40-90 ms of a compile's seconds outside the compiler, and more in
 * compiler_seconds; tests/unit/t_exec.c proc-run-sleeps-after-the-child).
 * Where the kernel has no pidfd, the loop looks every millisecond.
 */
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "strbuf.h"

double proc_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int proc_gone(long pid)
{
	return pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

int proc_stat_field(long pid, int field, char *buf, size_t n)
{
	char p[64], b[1024];
	snprintf(p, sizeof p, "/proc/%ld/stat", pid);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t got = read(fd, b, sizeof b - 1);
	close(fd);
	if (got <= 0 || field < 1 || n == 0)
		return -1;
	b[got] = '\0';
	const char *s, *e;
	if (field <= 2) {
		char *open_ = strchr(b, '('), *close_ = strrchr(b, ')');
		if (!open_ || !close_ || close_ < open_)
			return -1;
		s = field == 1 ? b : open_ + 1;
		e = field == 1 ? strchr(b, ' ') : close_;
	} else {
		s = strrchr(b, ')');
		if (!s || s[1] != ' ')
			return -1;
		s += 2; /* field 3 */
		for (int f = 3; f < field; f++) {
			s = strchr(s, ' ');
			if (!s)
				return -1;
			s++;
		}
		e = s + strcspn(s, " \n");
	}
	if (!e || e <= s || (size_t)(e - s) >= n)
		return -1;
	memcpy(buf, s, (size_t)(e - s));
	buf[e - s] = '\0';
	return 0;
}

/* A capture grows as output arrives, up to its bound; the rest is counted. */
struct cap {
	struct strbuf sb;
	size_t max, total;
};

static void cap_add(struct cap *c, const char *p, size_t n)
{
	c->total += n;
	size_t room = c->max - c->sb.len;
	sb_addn(&c->sb, p, n < room ? n : room);
}

/* write(2) without SIGPIPE: a child that exits before reading all its input
 * must not kill the caller.  SIGPIPE is blocked for this thread around the
 * write and a SIGPIPE the write raised is consumed, so the process's signal
 * dispositions stay as the tool set them. */
static ssize_t write_nosigpipe(int fd, const void *p, size_t n)
{
	sigset_t pipe, old, pending;
	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	sigpending(&pending);
	int was_pending = sigismember(&pending, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe, &old);
	ssize_t w = write(fd, p, n);
	int er = errno;
	if (w < 0 && er == EPIPE && !was_pending) {
		struct timespec zero = {0, 0};
		while (sigtimedwait(&pipe, NULL, &zero) < 0 && errno == EINTR)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = er;
	return w;
}

static void set_limit(int res, rlim_t v)
{
	struct rlimit rl = {v, v};
	setrlimit(res, &rl);
}

static _Noreturn void child(char *const argv[], const char *cwd, int in, int out, int err,
			    const struct proc_limits *lim, pid_t parent)
{
	setpgid(0, 0);
	/* The caller enforces the deadline; if it dies (kill -9 of kverify),
	 * nobody would: the child dies with it.  Checked after the call, in
	 * case the caller died before it. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	if (lim->no_network)
		(void)unshare(CLONE_NEWNET); /* needs privilege; where refused we go on without */
	dup2(in, 0);
	dup2(out, 1);
	if (!lim->pass_stderr)
		dup2(lim->merge_stderr ? out : err, 2);
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	for (const char *const *v = lim->env; v && *v; v++)
		putenv((char *)*v); /* the child's own copy of the caller's memory */
	if (cwd && chdir(cwd) != 0) {
		dprintf(2, "cannot chdir to %s: %s\n", cwd, strerror(errno));
		_exit(127);
	}
	set_limit(RLIMIT_CORE, 0);
	if (lim->nice)
		(void)!nice(lim->nice);
	if (lim->cpu_s > 0)
		set_limit(RLIMIT_CPU, (rlim_t)lim->cpu_s);
	if (lim->mem_mb > 0)
		set_limit(RLIMIT_AS, (rlim_t)lim->mem_mb << 20);
	if (lim->fsize_mb > 0)
		set_limit(RLIMIT_FSIZE, (rlim_t)lim->fsize_mb << 20);
	signal(SIGPIPE, SIG_DFL);
	execvp(argv[0], argv);
	dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* Start argv in child() with pipes: fd[0] its stdin (our end, non-blocking),
 * fd[1] its stdout, fd[2] its stderr.  The pid, or -1 + errbuf (nothing left open). */
static pid_t spawn(char *const argv[], const char *cwd, const struct proc_limits *lim, int fd[3], char *errbuf)
{
	int pin[2] = {-1, -1}, pout[2] = {-1, -1}, perr[2] = {-1, -1};
	pid_t pid = -1;
	if (pipe2(pin, O_CLOEXEC) || pipe2(pout, O_CLOEXEC) || pipe2(perr, O_CLOEXEC)) {
		errf(errbuf, "cannot start %s: %s", argv[0], strerror(errno));
		goto fail;
	}
	pid_t self = getpid();
	pid = fork();
	if (pid < 0) {
		errf(errbuf, "cannot fork for %s: %s", argv[0], strerror(errno));
		goto fail;
	}
	if (pid == 0)
		child(argv, cwd, pin[0], pout[1], perr[1], lim, self);
	setpgid(pid, pid); /* also in the parent: no race with an early kill */
	close(pin[0]), close(pout[1]), close(perr[1]);
	fcntl(pin[1], F_SETFL, O_NONBLOCK);
	fd[0] = pin[1], fd[1] = pout[0], fd[2] = perr[0];
	return pid;
fail:
	for (int i = 0; i < 2; i++) {
		if (pin[i] >= 0)
			close(pin[i]);
		if (pout[i] >= 0)
			close(pout[i]);
		if (perr[i] >= 0)
			close(perr[i]);
	}
	return -1;
}

/* A descriptor that polls readable once pid (a child) has exited, or -1
 * where the kernel has none (then: exited_within's millisecond looks). */
static int exit_fd(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0); /* close-on-exec by itself */
#else
	(void)pid;
	return -1;
#endif
}

/* Whether the child pid has exited (not reaped) within ms milliseconds. */
static int exited_within(pid_t pid, int ms)
{
	siginfo_t si;
	int fd = exit_fd(pid);
	double end = proc_now() + ms / 1000.0;
	for (;;) {
		memset(&si, 0, sizeof si);
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid)
			break;
		double left = end - proc_now();
		if (left <= 0) {
			if (fd >= 0)
				close(fd);
			return 0;
		}
		if (fd >= 0) {
			struct pollfd p = {fd, POLLIN, 0};
			poll(&p, 1, (int)(left * 1000) + 1);
		} else
			usleep(1000);
	}
	if (fd >= 0)
		close(fd);
	return 1;
}

int proc_run(char *const argv[], const char *cwd, const char *in, size_t in_len,
	     const struct proc_limits *lim, struct proc_result *r, char *errbuf)
{
	memset(r, 0, sizeof *r);
	size_t capn = lim->capture ? lim->capture : (1u << 20);
	struct cap co = {STRBUF_INIT, capn, 0}, ce = {STRBUF_INIT, capn, 0};
	double t0 = proc_now();
	int fd[3];
	pid_t pid = spawn(argv, cwd, lim, fd, errbuf);
	if (pid < 0) {
		sb_release(&co.sb);
		sb_release(&ce.sb);
		return -1;
	}
	int pin[2] = {-1, fd[0]}, pout[2] = {fd[1], -1}, perr[2] = {fd[2], -1};
	size_t in_off = 0;
	if (in_len == 0) {
		close(pin[1]);
		pin[1] = -1;
	}
	int status = 0, reaped = 0, xfd = exit_fd(pid);
	double deadline = lim->wall_s > 0 ? t0 + lim->wall_s : 0;
	while (!reaped || pout[0] >= 0 || perr[0] >= 0) {
		struct pollfd fds[4];
		int nf = 0;
		if (pout[0] >= 0)
			fds[nf++] = (struct pollfd){pout[0], POLLIN, 0};
		if (perr[0] >= 0)
			fds[nf++] = (struct pollfd){perr[0], POLLIN, 0};
		if (pin[1] >= 0)
			fds[nf++] = (struct pollfd){pin[1], POLLOUT, 0};
		int wait_ms = 50;
		if (deadline > 0 && !r->timed_out) {
			double left = deadline - proc_now();
			if (left <= 0) {
				r->timed_out = 1;
				kill(-pid, SIGKILL);
				kill(pid, SIGKILL);
			} else if (left * 1000 < wait_ms)
				wait_ms = (int)(left * 1000) + 1;
		}
		int np = nf; /* the pipes; then the child's end */
		if (!reaped && xfd >= 0)
			fds[nf++] = (struct pollfd){xfd, POLLIN, 0};
		if (nf > 0 && poll(fds, (nfds_t)nf, reaped ? 0 : wait_ms) < 0 && errno != EINTR)
			break;
		if (nf == 0 && !reaped)
			usleep(1000);
		char buf[65536];
		for (int i = 0; i < np; i++) {
			if (!fds[i].revents)
				continue;
			if (fds[i].fd == pin[1]) {
				ssize_t w = write_nosigpipe(pin[1], in + in_off, in_len - in_off);
				if (w > 0)
					in_off += (size_t)w;
				if (w < 0 && errno != EAGAIN) {
					close(pin[1]);
					pin[1] = -1;
				} else if (in_off == in_len) {
					close(pin[1]);
					pin[1] = -1;
				}
				continue;
			}
			ssize_t n = read(fds[i].fd, buf, sizeof buf);
			if (n > 0) {
				cap_add(fds[i].fd == pout[0] ? &co : &ce, buf, (size_t)n);
			} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
				if (fds[i].fd == pout[0])
					close(pout[0]), pout[0] = -1;
				else
					close(perr[0]), perr[0] = -1;
			}
		}
		if (!reaped) {
			pid_t w = waitpid(pid, &status, WNOHANG);
			if (w == pid) {
				reaped = 1;
				r->seconds = proc_now() - t0;
				kill(-pid, SIGKILL); /* leftovers of the group */
			}
		} else {
			/* Drained what was buffered; a stray holder of the pipe is dead. */
			if (np == 0 || poll(fds, (nfds_t)np, 0) == 0) {
				if (pout[0] >= 0)
					close(pout[0]), pout[0] = -1;
				if (perr[0] >= 0)
					close(perr[0]), perr[0] = -1;
			}
		}
	}
	if (pin[1] >= 0)
		close(pin[1]);
	if (xfd >= 0)
		close(xfd);
	if (WIFEXITED(status))
		r->exited = 1, r->code = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		r->signaled = 1, r->sig = WTERMSIG(status);
	r->out_total = co.total, r->err_total = ce.total;
	r->out = sb_detach(&co.sb, &r->out_len);
	r->err = sb_detach(&ce.sb, &r->err_len);
	if (!r->out || !r->err) {
		proc_result_free(r);
		return errf(errbuf, "%s: out of memory for its output", argv[0]);
	}
	return 0;
}

void proc_result_free(struct proc_result *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

void proc_describe(const struct proc_result *r, char *buf, size_t n)
{
	if (r->timed_out)
		snprintf(buf, n, "timed out after %.1f s and was killed", r->seconds);
	else if (r->signaled)
		snprintf(buf, n, "killed by signal %d (%s)", r->sig, strsignal(r->sig));
	else
		snprintf(buf, n, "exit status %d", r->code);
}

int proc_srv_start(struct proc_srv *s, char *const argv[], const char *cwd, const struct proc_limits *lim,
		   char *errbuf)
{
	memset(s, 0, sizeof *s);
	int fd[3];
	pid_t pid = spawn(argv, cwd, lim, fd, errbuf); /* lim->wall_s: each exchange's, kept by the caller */
	if (pid < 0)
		return -1;
	*s = (struct proc_srv){.pid = pid, .in = fd[0], .out = fd[1], .err = fd[2], .started = proc_now()};
	return 0;
}

/* One stream of an exchange: its capture, and whether the line that ends it
 * has come (the current line's first bytes are kept to see it). */
struct mark_scan {
	struct cap c;
	const char *mark;
	size_t mlen;
	char head[128];
	size_t hl; /* bytes of the current line in head (at most sizeof head) */
	int done;
};

static void scan_add(struct mark_scan *m, const char *p, size_t n)
{
	for (size_t i = 0; i < n && !m->done; i++) {
		if (p[i] == '\n') {
			if (m->hl >= m->mlen && memcmp(m->head, m->mark, m->mlen) == 0) {
				cap_add(&m->c, p, i + 1);
				m->done = 1;
				return;
			}
			m->hl = 0;
		} else if (m->hl < sizeof m->head)
			m->head[m->hl++] = p[i];
	}
	if (!m->done)
		cap_add(&m->c, p, n);
}

static void srv_reap(struct proc_srv *s, struct proc_result *r, int timed_out)
{
	int status = 0;
	kill(-s->pid, SIGKILL);
	kill(s->pid, SIGKILL);
	while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR)
		;
	if (r) {
		r->timed_out = timed_out;
		if (!timed_out && WIFEXITED(status))
			r->exited = 1, r->code = WEXITSTATUS(status);
		else if (!timed_out && WIFSIGNALED(status))
			r->signaled = 1, r->sig = WTERMSIG(status);
	}
	close(s->in), close(s->out), close(s->err);
	s->pid = 0;
}

int proc_srv_ask(struct proc_srv *s, const char *req, size_t req_len, const char *out_mark, const char *err_mark,
		 double wall_s, size_t capture, struct proc_result *r, char *errbuf)
{
	memset(r, 0, sizeof *r);
	size_t capn = capture ? capture : (1u << 20);
	struct mark_scan so = {.c = {STRBUF_INIT, capn, 0}, .mark = out_mark, .mlen = strlen(out_mark)},
			 se = {.c = {STRBUF_INIT, capn, 0}, .mark = err_mark, .mlen = strlen(err_mark)};
	double t0 = proc_now(), deadline = wall_s > 0 ? t0 + wall_s : 0;
	size_t off = 0;
	int ended = 0, timed_out = 0;
	while (!(so.done && se.done)) {
		struct pollfd fds[3] = {{s->out, POLLIN, 0}, {s->err, POLLIN, 0}, {off < req_len ? s->in : -1, POLLOUT, 0}};
		int wait_ms = 100;
		if (deadline > 0) {
			double left = deadline - proc_now();
			if (left <= 0) {
				timed_out = 1;
				break;
			}
			if (left * 1000 < wait_ms)
				wait_ms = (int)(left * 1000) + 1;
		}
		if (poll(fds, 3, wait_ms) < 0 && errno != EINTR)
			break;
		if (fds[2].revents & (POLLERR | POLLHUP)) {
			ended = 1; /* it closed its stdin: it is leaving */
			break;
		}
		if (fds[2].revents & POLLOUT) {
			ssize_t w = write_nosigpipe(s->in, req + off, req_len - off);
			if (w > 0)
				off += (size_t)w;
			else if (w < 0 && errno != EAGAIN && errno != EINTR) {
				ended = 1;
				break;
			}
		}
		char buf[65536];
		for (int i = 0; i < 2; i++) {
			if (!fds[i].revents)
				continue;
			ssize_t n = read(fds[i].fd, buf, sizeof buf);
			if (n > 0)
				scan_add(i == 0 ? &so : &se, buf, (size_t)n);
			else if (n == 0 || (errno != EAGAIN && errno != EINTR))
				ended = 1; /* its end of the pipe is closed: it has exited */
		}
		if (ended)
			break;
	}
	int rc = so.done && se.done ? 0 : 1;
	if (rc) {
		/* What it wrote before it went is the outcome's log. */
		char buf[65536];
		ssize_t n;
		fcntl(s->out, F_SETFL, O_NONBLOCK);
		fcntl(s->err, F_SETFL, O_NONBLOCK);
		if (!timed_out) /* a program that is ending: give it a moment to finish */
			exited_within(s->pid, 1000);
		while ((n = read(s->out, buf, sizeof buf)) > 0)
			scan_add(&so, buf, (size_t)n);
		while ((n = read(s->err, buf, sizeof buf)) > 0)
			scan_add(&se, buf, (size_t)n);
		srv_reap(s, r, timed_out);
	}
	r->seconds = proc_now() - t0;
	r->out_total = so.c.total, r->err_total = se.c.total;
	r->out = sb_detach(&so.c.sb, &r->out_len);
	r->err = sb_detach(&se.c.sb, &r->err_len);
	if (!r->out || !r->err) {
		proc_result_free(r);
		if (s->pid)
			srv_reap(s, NULL, 0);
		return errf(errbuf, "out of memory for the program's output");
	}
	return rc;
}

void proc_srv_stop(struct proc_srv *s)
{
	if (!s->pid)
		return;
	close(s->in);
	s->in = -1;
	exited_within(s->pid, 1000);
	s->in = open("/dev/null", O_RDONLY | O_CLOEXEC); /* so srv_reap closes something */
	srv_reap(s, NULL, 0);
}
