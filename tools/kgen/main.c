/*
 * kgen: make child candidates from request records (docs/tools/kgen.md).
 *
 *   kselect < archive | kgen [--generator mutate] | kcompile | ...
 *
 * Options, usage and the record loop; the work is in lib/gen.c (seed and
 * mutate) and lib/stages.c (model providers).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "gen.h"
#include "tool.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: kgen [--generator mutate] [--seed S] [--children N]\n"
		   "            [--archive FILE] [--tasks DIR] [file ...]\n");
}

static long long num_opt(const char *name, const char *s, long long lo, long long hi)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi) {
		warnx_("%s: \"%s\" is not an integer in [%lld, %lld]", name, s, lo, hi);
		usage(stderr);
		exit(KSCI_EXIT_USAGE);
	}
	return v;
}

static int emit_cb(void *ctx, const json_t *rec)
{
	return tool_emit(ctx, rec);
}

static void warn_cb(void *ctx, const char *msg)
{
	struct tool *t = ctx;
	if (t->input)
		tool_warn(t, "%s", msg);
	else
		warnx_("%s", msg);
}

static int on_record(struct tool *t, json_t *rec, void *ctx)
{
	int rc = gen_request(ctx, rec, t->line);
	return rc == 1;
}

int main(int argc, char **argv)
{
	err_init(argv[0]);
	static const struct option opts[] = {
		{"generator", required_argument, NULL, 'g'},
		{"provider", required_argument, NULL, 'g'},
		{"seed", required_argument, NULL, 's'},
		{"children", required_argument, NULL, 'n'},
		{"archive", required_argument, NULL, 'a'},
		{"tasks", required_argument, NULL, 't'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct gen g = {0};
	struct tool t = {0};
	const char *archive = NULL, *tasks = NULL;
	g.generator = getenv("KSCI_PROVIDER");
	if (!g.generator || !*g.generator)
		g.generator = "mutate";
	g.children = 1;
	int c;
	while ((c = getopt_long(argc, argv, "g:s:n:a:t:h", opts, NULL)) != -1) {
		switch (c) {
		case 'g': g.generator = optarg; break;
		case 's':
			g.seed = (uint64_t)num_opt("--seed", optarg, 0, 0x7fffffffffffffffLL);
			g.have_seed = 1;
			break;
		case 'n': g.children = (int)num_opt("--children", optarg, 1, 1000); break;
		case 'a': archive = optarg; break;
		case 't': tasks = optarg; break;
		case 'h': usage(stdout); return KSCI_EXIT_OK;
		default: usage(stderr); return KSCI_EXIT_USAGE;
		}
	}
	if (strcmp(g.generator, "mutate") != 0) {
		warnx_("unknown generator \"%s\"", g.generator);
		usage(stderr);
		return KSCI_EXIT_USAGE;
	}
	g.tasks = gen_tasks_root(tasks);
	g.emit = emit_cb;
	g.warn = warn_cb;
	g.ctx = &t;
	gen_init(&g);
	if (archive) {
		char e[ERRBUF];
		if (gen_load_archive(&g, archive, e) != 0) {
			gen_free(&g);
			die(KSCI_EXIT_FATAL, "%s", e);
		}
	}
	int rc = tool_run(&t, argv + optind, argc - optind, on_record, &g);
	gen_free(&g);
	return rc;
}
