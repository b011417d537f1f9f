/*
 * karchive: keep an archive whole — check it, repair a torn one, append a
 * generation as one gzip member (docs/tools/karchive.md).  Options, usage
 * and dispatch; the work is in lib/archive_file.c.  Every message goes to
 * stderr; the exit code is what the library returns.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "archive.h"
#include "err.h"
#include "karchive-help.h" /* HELP_USAGE, HELP_BODY: made from docs/tools/karchive.md */
#include "strbuf.h"
#include "tool.h"

static void warn_line(void *ctx, const char *msg)
{
	(void)ctx;
	warnx_("%s", msg);
}

/* All of stdin in *b.  0, or -1 (errno). */
static int read_stdin(struct strbuf *b)
{
	for (;;) {
		if (sb_grow(b, 1 << 16) != 0) {
			errno = ENOMEM;
			return -1;
		}
		ssize_t r = read(0, b->buf + b->len, b->alloc - b->len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			return 0;
		b->len += (size_t)r;
		b->buf[b->len] = '\0';
	}
}

static int append(const char *path)
{
	struct strbuf in = STRBUF_INIT;
	if (read_stdin(&in) != 0) {
		warn_("<stdin>: read error");
		sb_release(&in);
		return KSCI_EXIT_FATAL;
	}
	char e[ERRBUF];
	uint64_t n = 0;
	int code = ar_append(path, in.buf ? in.buf : "", in.len, warn_line, NULL, &n, e);
	sb_release(&in);
	if (code != KSCI_EXIT_OK)
		warnx_("%s", e);
	(void)n; /* silent on success, as a filter in a pipeline should be */
	return code;
}

int main(int argc, char **argv)
{
	err_init(argv[0]);
	static const struct option opts[] = {
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int ch;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'h': return tool_usage(KSCI_EXIT_OK, HELP_USAGE, HELP_BODY);
		default: return tool_usage(KSCI_EXIT_USAGE, HELP_USAGE, HELP_BODY);
		}
	}
	if (argc - optind != 2) {
		warnx_("%s", argc - optind < 2 ? "a subcommand and an archive are needed" : "one archive at a time");
		return tool_usage(KSCI_EXIT_USAGE, HELP_USAGE, HELP_BODY);
	}
	const char *cmd = argv[optind], *path = argv[optind + 1];
	char e[ERRBUF];
	struct ar_check c;
	int code;
	if (strcmp(cmd, "check") == 0) {
		code = ar_check_path(path, &c, e);
		warnx_("%s", e);
	} else if (strcmp(cmd, "repair") == 0) {
		code = ar_repair(path, &c, e);
		warnx_("%s", e);
	} else if (strcmp(cmd, "append") == 0) {
		code = append(path);
	} else {
		warnx_("unknown subcommand \"%s\" (check, repair, append)", cmd);
		return tool_usage(KSCI_EXIT_USAGE, HELP_USAGE, HELP_BODY);
	}
	return tool_exit(code);
}
