/* tool: the shared record loop; see tool.h. */
#include "tool.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "err.h"
#include "ndjson.h"

void tool_warn(struct tool *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s: %s: line %ld: ", err_prog(), t->input ? t->input : "<stdin>", t->line);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
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

static int run_one(struct tool *t, const char *path, tool_fn fn, void *ctx)
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
		int bad = fn(t, rec, ctx);
		json_decref(rec);
		if (bad && t->status == KSCI_EXIT_OK)
			t->status = KSCI_EXIT_INPUT;
		if (t->status == KSCI_EXIT_FATAL)
			break;
	}
	nd_close(r);
	t->input = NULL;
	return t->status >= KSCI_EXIT_FATAL ? -1 : 0;
}

int tool_run(struct tool *t, char *const *paths, int n, tool_fn fn, void *ctx)
{
	if (!t->out)
		t->out = stdout;
	if (n == 0)
		run_one(t, "-", fn, ctx);
	for (int i = 0; i < n; i++)
		if (run_one(t, paths[i], fn, ctx) < 0)
			break;
	if (fflush(t->out) != 0 || ferror(t->out)) {
		tool_write_error();
		t->status = KSCI_EXIT_FATAL;
	}
	return t->status;
}
