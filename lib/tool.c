/* tool: the shared record loop; see tool.h. */
#include "tool.h"

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

int tool_emit(struct tool *t, const json_t *rec)
{
	if (nd_write(t->out, rec) != 0) {
		warn_("write error");
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
			t->status = KSCI_EXIT_FATAL;
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
	return t->status == KSCI_EXIT_FATAL ? -1 : 0;
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
		warn_("write error");
		t->status = KSCI_EXIT_FATAL;
	}
	return t->status;
}
