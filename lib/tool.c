/*
 * tool: the shared record loop; see tool.h.
 *
 * With jobs > 1 each record is handed to a forked copy of the tool, which
 * runs the tool's function on it and writes what it emits into a pipe; the
 * parent keeps the records in flight in input order and copies each one's
 * bytes out when it is the oldest.  Processes rather than threads: the
 * compile path keeps per-process caches (compiler identity, the task table)
 * and forks compilers itself, and a record's failure stays in its process.
 * A process that ends without writing its record whole (killed, out of
 * memory) does not lose it: the parent still holds the input and writes it
 * on, marked (tool.lost).
 */
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "err.h"
#include "ndjson.h"
#include "rec.h"
#include "strbuf.h"

void tool_warn(struct tool *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char where[1024];
	snprintf(where, sizeof where, "%s: line %ld", t->input ? t->input : "<stdin>", t->line);
	err_vsay(where, fmt, ap, 0);
	va_end(ap);
}

void tool_warn_cb(void *ctx, const char *msg)
{
	(void)ctx;
	warnx_("%s", msg);
}

/* Once a write failed, stdout stays failed (its error flag is set), so every
 * later check would fail too: one message says it all. */
static int write_error_told;

int tool_write_error(void)
{
	if (!write_error_told) {
		write_error_told = 1;
		warn_("write error");
	}
	return KSCI_EXIT_FATAL;
}

int tool_usage(int code, const char *usage, const char *help)
{
	if (code != 0) {
		fputs(usage, stderr);
		return code;
	}
	fputs(usage, stdout);
	fputs(help, stdout);
	return tool_exit(KSCI_EXIT_OK);
}

int tool_exit(int code)
{
	/* fclose also reports a failure that fflush left for the close (NFS);
	 * an error flag set by an earlier write has no errno left: EIO then. */
	errno = 0;
	int bad = fflush(stdout) != 0 || ferror(stdout);
	int e = errno;
	if (fclose(stdout) != 0 && !bad) {
		bad = 1;
		e = errno;
	}
	if (!bad)
		return code;
	errno = e ? e : EIO;
	return tool_write_error();
}

int tool_emit(struct tool *t, const json_t *rec)
{
	if (nd_write(t->out, rec) != 0) {
		tool_write_error();
		t->status = KSCI_EXIT_FATAL;
		return -1;
	}
	return 0;
}

/* --- jobs > 1 ------------------------------------------------------------ */

struct slot {
	pid_t pid;
	int fd;       /* read end of the pipe the process writes its records to */
	json_t *rec;  /* the input, written on marked if the process dies */
	long line;
};

struct pool {
	struct slot *s; /* a ring of t->jobs slots, oldest at head */
	int head, n;
};

/* The worker's records back in this process, each through t->collect
 * (which emits it): the tool's last word on what its workers made apart. */
static void collect_lines(struct tool *t, char *buf, size_t len)
{
	char *p = buf, *end = buf + len;
	while (p < end && t->status != KSCI_EXIT_FATAL) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char why[ERRBUF];
		json_t *rec = nd_parse(p, (size_t)(nl - p), why);
		if (!rec) { /* the worker wrote it with nd_write: out of memory here */
			warnx_("cannot read back a record its process wrote: %s", why);
			t->status = KSCI_EXIT_FATAL;
			break;
		}
		t->collect(t, rec, t->collect_ctx);
		json_decref(rec);
		p = nl + 1;
	}
}

static void slot_finish(struct tool *t, struct slot *s)
{
	struct strbuf b = STRBUF_INIT;
	char buf[65536];
	for (;;) {
		ssize_t r = read(s->fd, buf, sizeof buf);
		if (r > 0)
			sb_addn(&b, buf, (size_t)r);
		else if (r == 0 || errno != EINTR)
			break;
	}
	close(s->fd);
	int st = 0;
	while (waitpid(s->pid, &st, 0) < 0 && errno == EINTR)
		;
	int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	if ((code == KSCI_EXIT_OK || code == KSCI_EXIT_INPUT) && !b.oom && b.len > 0 && b.buf[b.len - 1] == '\n') {
		if (t->status == KSCI_EXIT_FATAL)
			;
		else if (t->collect)
			collect_lines(t, b.buf, b.len);
		else if (fwrite(b.buf, 1, b.len, t->out) != b.len) {
			tool_write_error();
			t->status = KSCI_EXIT_FATAL;
		}
		if (code == KSCI_EXIT_INPUT && t->status == KSCI_EXIT_OK)
			t->status = KSCI_EXIT_INPUT;
	} else {
		char why[160];
		if (WIFSIGNALED(st))
			snprintf(why, sizeof why, "its process was killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
		else
			snprintf(why, sizeof why, "its process exited with status %d %s", code,
				 b.len ? "without writing the record whole" : "without writing the record");
		long keep = t->line;
		t->line = s->line;
		tool_warn(t, "%s; the record is written on, marked failed", why);
		t->line = keep;
		if (t->lost)
			t->lost(s->rec, why);
		else
			rec_invalid(s->rec, err_prog(), s->line, why);
		tool_emit(t, s->rec);
		if (t->status == KSCI_EXIT_OK)
			t->status = KSCI_EXIT_INPUT;
	}
	sb_release(&b);
	json_decref(s->rec);
}

/* The tool's output flushed; a failure is the run's end (exit 3). */
static int out_flush(struct tool *t)
{
	if (fflush(t->out) == 0)
		return 0;
	tool_write_error();
	t->status = KSCI_EXIT_FATAL;
	return -1;
}

static void pool_finish_oldest(struct tool *t, struct pool *p)
{
	slot_finish(t, &p->s[p->head]);
	p->head = (p->head + 1) % t->jobs;
	p->n--;
}

static void pool_drain(struct tool *t, struct pool *p)
{
	while (p->n > 0)
		pool_finish_oldest(t, p);
}

/* In the forked process: the record through fn, its output into fd. */
static _Noreturn void worker(struct tool *t, int fd, json_t *rec, tool_fn fn, void *ctx)
{
	FILE *o = fdopen(fd, "w");
	if (!o)
		_exit(KSCI_EXIT_FATAL);
	t->out = o;
	int bad = fn(t, rec, ctx);
	int code = t->status == KSCI_EXIT_FATAL ? KSCI_EXIT_FATAL : bad ? KSCI_EXIT_INPUT : KSCI_EXIT_OK;
	if (fclose(o) != 0)
		code = KSCI_EXIT_FATAL;
	_exit(code);
}

/* Start rec in a process of its own; 0, or -1 when none could be made
 * (then the caller runs it here, after the ones in flight). */
static int pool_start(struct tool *t, struct pool *p, json_t *rec, tool_fn fn, void *ctx)
{
	if (p->n == t->jobs)
		pool_finish_oldest(t, p);
	if (out_flush(t) < 0) /* nothing buffered may be written twice */
		return 0;
	fflush(stderr);
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) != 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		close(fds[0]);
		worker(t, fds[1], rec, fn, ctx);
	}
	close(fds[1]);
	p->s[(p->head + p->n) % t->jobs] = (struct slot){.pid = pid, .fd = fds[0], .rec = json_incref(rec), .line = t->line};
	p->n++;
	return 0;
}

/* Before a read that would block: write out the records of the oldest
 * workers as they finish, in order, until the input has a line to read.
 * Without it a record waited for the next input line or the pool to fill,
 * so a pipeline fed one record at a time (a coprocess that writes the next
 * record after reading the last one's result) waited for ever
 * (tests/sh/t18-kcompile-jobs.sh, "streamed one at a time"). */
static void pool_while_input_waits(struct tool *t, struct pool *p, const struct nd_reader *r)
{
	int in = nd_wait_fd(r);
	while (in >= 0 && p->n > 0 && t->status != KSCI_EXIT_FATAL) {
		struct pollfd f[2] = {{.fd = in, .events = POLLIN}, {.fd = p->s[p->head].fd, .events = POLLIN}};
		if (poll(f, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return; /* nd_next blocks as before */
		}
		if (f[1].revents) {
			pool_finish_oldest(t, p);
			out_flush(t);
		} else if (f[0].revents)
			return;
	}
}

static int run_one(struct tool *t, const char *path, tool_fn fn, void *ctx, struct pool *p)
{
	char e[ERRBUF];
	struct nd_reader *r = nd_open(path, e);
	if (!r) {
		warnx_("%s", e);
		t->status = KSCI_EXIT_FATAL;
		return -1;
	}
	t->input = nd_name(r);
	for (;;) {
		json_t *rec;
		if (p)
			pool_while_input_waits(t, p, r);
		int rc = nd_next(r, &rec, e);
		if (rc == 0)
			break;
		if (rc == -2) {
			warnx_("%s", e);
			t->status = nd_damaged(r) ? KSCI_EXIT_DAMAGED : KSCI_EXIT_FATAL;
			break;
		}
		if (rc == -1) {
			warnx_("%s; line skipped", e);
			if (t->status == KSCI_EXIT_OK)
				t->status = KSCI_EXIT_INPUT;
			continue;
		}
		t->line = nd_line(r);
		int bad = 0;
		if (!p || pool_start(t, p, rec, fn, ctx) < 0) {
			if (p)
				pool_drain(t, p);
			bad = fn(t, rec, ctx);
		}
		json_decref(rec);
		if (bad && t->status == KSCI_EXIT_OK)
			t->status = KSCI_EXIT_INPUT;
		if (t->status == KSCI_EXIT_FATAL)
			break;
	}
	if (p)
		pool_drain(t, p);
	nd_close(r);
	t->input = NULL;
	return t->status >= KSCI_EXIT_FATAL ? -1 : 0;
}

int tool_run(struct tool *t, char *const *paths, int n, tool_fn fn, void *ctx)
{
	if (!t->out)
		t->out = stdout;
	struct pool pool = {0}, *p = NULL;
	if (t->jobs > 1 && (pool.s = calloc((size_t)t->jobs, sizeof *pool.s)))
		p = &pool;
	if (n == 0)
		run_one(t, "-", fn, ctx, p);
	for (int i = 0; i < n; i++)
		if (run_one(t, paths[i], fn, ctx, p) < 0)
			break;
	free(pool.s);
	if (fflush(t->out) != 0 || ferror(t->out)) {
		tool_write_error();
		t->status = KSCI_EXIT_FATAL;
	}
	return t->status;
}
