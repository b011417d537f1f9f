/*
 * kcompile — compile each candidate for its back end (docs/tools/kcompile.md).
 * Reads records, compiles those in status "generated" through the compile
 * cache, writes every record on.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile.h"
#include "envknob.h"
#include "kcompile-help.h" /* HELP_USAGE, HELP_BODY: made from docs/tools/kcompile.md */
#include "opt.h"
#include "rec.h"
#include "task.h"
#include "tool.h"

struct ctx {
	struct compile_opts o;
	int force;
};

static int wants(const struct ctx *c, const char *st)
{
	if (!st)
		return 0;
	if (strcmp(st, ST_GENERATED) == 0)
		return 1;
	return c->force && (strcmp(st, ST_COMPILED) == 0 || strcmp(st, ST_COMPILE_ERROR) == 0);
}

static int one(struct tool *t, json_t *rec, void *vc)
{
	struct ctx *c = vc;
	char e[ERRBUF];
	int bad = 0;
	if (!wants(c, rec_str(rec, "status")))
		goto emit;
	static const char *const need[] = {"task", "backend", "source", NULL};
	const char *miss = rec_missing_str(rec, need);
	const struct task *task = NULL;
	if (miss)
		snprintf(e, sizeof e, "missing field \"%s\"", miss);
	else if (!task_backend_ok(rec_str(rec, "backend")))
		snprintf(e, sizeof e, "unknown backend \"%s\" (c, cuda or hip)", rec_str(rec, "backend"));
	else
		task = task_get(NULL, rec_str(rec, "task"), e);
	if (!task) {
		tool_warn(t, "%s", e);
		rec_invalid(rec, "kcompile", t->line, e);
		bad = 1;
		goto emit;
	}
	struct compile_out co;
	if (compile_source(task, rec_str(rec, "backend"), "candidate", rec_str(rec, "source"), &c->o, &co, e) < 0) {
		tool_warn(t, "%s", e);
		rec_fail(rec, "compile", ST_UNSUPPORTED, ST_COMPILE_ERROR, e);
		bad = 1;
		goto emit;
	}
	json_object_set_new(rec, "compile", co.stage);
	if (json_is_true(json_object_get(co.stage, "transient")))
		bad = 1; /* the machine failed, not the source: said on stderr, not cached */
	const char *cst = json_string_value(json_object_get(co.stage, "status"));
	rec_set_status(rec, co.ok ? ST_COMPILED : cst && strcmp(cst, ST_UNSUPPORTED) == 0 ? ST_UNSUPPORTED : ST_COMPILE_ERROR);
emit:
	tool_emit(t, rec);
	return bad;
}

/* A record whose compile process died (tool.lost): the machine's failure,
 * not the source's, so marked transient like a killed compiler. */
static void lost(json_t *rec, const char *why)
{
	char m[ERRBUF];
	snprintf(m, sizeof m, "kcompile: %s (not cached: it compiles again next time)", why);
	rec_fail(rec, "compile", ST_COMPILE_ERROR, ST_COMPILE_ERROR, m);
	json_object_set_new(rec_stage(rec, "compile"), "transient", json_true());
}

int main(int argc, char **argv)
{
	err_init(argv[0]);
	struct ctx c = {.o = {.timeout_s = 120}};
	static const struct option lo[] = {
		{"force", no_argument, 0, 'f'},       {"no-cache", no_argument, 0, 'N'},
		{"timeout", required_argument, 0, 't'}, {"cuda-arch", required_argument, 0, 'C'},
		{"hip-arch", required_argument, 0, 'H'}, {"tasks", required_argument, 0, 'T'},
		{"unsafe-no-sandbox", no_argument, 0, 'U'}, {"jobs", required_argument, 0, 'j'},
		{"help", no_argument, 0, 'h'},
		{0, 0, 0, 0}};
	int unsafe = 0;
	int ch;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN), jobs = ncpu > 0 ? ncpu : 1;
	char e[ERRBUF];
	while ((ch = getopt_long(argc, argv, "hj:", lo, NULL)) != -1) {
		switch (ch) {
		case 'j':
			if (opt_long("--jobs", optarg, 1, 256, &jobs, e) < 0) {
				warnx_("%s", e);
				return tool_usage(KSCI_EXIT_USAGE, HELP_USAGE, HELP_BODY);
			}
			break;
		case 'f': c.force = 1; break;
		case 'N': c.o.no_cache = 1; break;
		case 't':
			if (opt_double("--timeout", optarg, 1, 86400, &c.o.timeout_s, e) < 0) {
				warnx_("%s", e);
				return tool_usage(KSCI_EXIT_USAGE, HELP_USAGE, HELP_BODY);
			}
			break;
		case 'C': c.o.cuda_arch = optarg; break;
		case 'H': c.o.hip_arch = optarg; break;
		case 'T': setenv("KSCI_TASKS", optarg, 1); break;
		case 'U': unsafe = 1; break;
		case 'h': return tool_usage(KSCI_EXIT_OK, HELP_USAGE, HELP_BODY);
		default: return tool_usage(KSCI_EXIT_USAGE, HELP_USAGE, HELP_BODY);
		}
	}
	if (envknob_check(e) < 0)
		die(KSCI_EXIT_USAGE, "%s", e);
	struct sbx jail;
	if (sbx_init(&jail, unsafe ? SBX_NONE : SBX_BWRAP, e) < 0)
		die(KSCI_EXIT_FATAL, "%s", e);
	c.o.sbx = &jail;
	c.o.warn = tool_warn_cb;
	struct tool t = {.jobs = (int)jobs, .lost = lost};
	return tool_exit(tool_run(&t, argv + optind, argc - optind, one, &c));
}
