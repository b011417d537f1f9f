/*
 * kgen: make child candidates from request records (docs/tools/kgen.md).
 *
 *   kselect < archive | kgen [--generator mutate] | kcompile | ...
 *
 * Options, usage and the record loop;  the work is in lib/gen/ (gen.h names
 * its files; gen_llm.h holds the model options).
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive.h"
#include "err.h"
#include "kgen-help.h" /* HELP_USAGE, HELP_BODY: made from docs/tools/kgen.md */
#include "opt.h"
#include "gen/gen.h"
#include "llm.h"
#include "gen/prompt.h"
#include "gen/gen_llm.h"
#include "tool.h"

/* The usage lines alone, for a usage error. */
static void usage(FILE *f)
{
	fputs(HELP_USAGE, f);
}

static int emit_cb(void *ctx, const json_t *rec)
{
	return tool_emit(ctx, rec);
}

static void collect_cb(struct tool *t, json_t *rec, void *ctx)
{
	(void)t;
	(void)gen_collect(ctx, rec); /* a failed write has set the status */
}

/* -j: a request whose process died (out of memory, a signal) before
 * writing its children whole: a gen_error, so it is asked again next time. */
static void lost_cb(json_t *rec, const char *why)
{
	char m[ERRBUF];
	snprintf(m, sizeof m, "kgen: %s", why);
	json_t *req = json_deep_copy(rec);
	json_t *skel = gen_child_skeleton(req);
	gen_set_error(skel, req, "kgen", "lost", m);
	json_object_clear(rec);
	json_object_update(rec, skel);
	json_decref(skel);
	json_decref(req);
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
		{"jobs", required_argument, NULL, 'j'},
		{"archive", required_argument, NULL, 'a'},
		{"tasks", required_argument, NULL, 't'},
		{"stage", required_argument, NULL, 'S'},
		{"max-fix", required_argument, NULL, 'F'},
		{"model", required_argument, NULL, 'm'},
		{"base-url", required_argument, NULL, 'u'},
		{"temperature", required_argument, NULL, 'T'},
		{"max-tokens", required_argument, NULL, 'M'},
		{"token-param", required_argument, NULL, 'P'},
		{"n", required_argument, NULL, 'N'},
		{"timeout", required_argument, NULL, 'o'},
		{"connect-timeout", required_argument, NULL, 'O'},
		{"retries", required_argument, NULL, 'r'},
		{"backoff", required_argument, NULL, 'b'},
		{"concurrency", required_argument, NULL, 'c'},
		{"cache", required_argument, NULL, 'C'},
		{"no-cache", no_argument, NULL, 'X'},
		{"transcript", required_argument, NULL, 'R'},
		{"prices", required_argument, NULL, 'p'},
		{"cmd", required_argument, NULL, 'x'},
		{"replay", required_argument, NULL, 'y'},
		{"prompts", required_argument, NULL, 'z'},
		{"knowledge", required_argument, NULL, 'k'},
		{"findings", required_argument, NULL, 'G'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct gen g = {0};
	struct tool t = {0};
	const char *archive = NULL, *tasks = NULL, *cache = NULL, *prompts = NULL, *knowledge = NULL;
	struct gen_llm_config sc = {.stage = "auto", .max_fix = 2, .keep = 3, .notebook_max = 40};
	sc.llm.temperature = -1;
	sc.llm.max_retries = -1;
	/* Where the stage and the provider came from, for the message of a bad one. */
	const char *e, *stage_from = "KSCI_STAGE", *gen_from = "KSCI_PROVIDER";
	if ((e = getenv("KSCI_STAGE")) && *e)
		sc.stage = e;
	g.generator = getenv("KSCI_PROVIDER");
	if (!g.generator || !*g.generator)
		g.generator = "mutate";
	g.children = 0; /* 0: one per kept plan (model providers), else 1 */
	long jobs = 1;
	int c;
	long v = 0;
	char eb[ERRBUF];
	/* Short options: -g, -a and -j only; docs/tools/README.md says why. */
	while ((c = getopt_long(argc, argv, "g:a:j:h", opts, NULL)) != -1) {
		int bad = 0;
		switch (c) {
		case 'g': g.generator = optarg, gen_from = "--provider"; break;
		case 's':
			bad = opt_long("--seed", optarg, 0, LONG_MAX, &v, eb);
			g.seed = (uint64_t)v;
			g.have_seed = 1;
			break;
		case 'n': bad = opt_long("--children", optarg, 1, 1000, &v, eb); g.children = (int)v; break;
		case 'a': archive = optarg; break;
		case 'j': bad = opt_long("--jobs", optarg, 1, 256, &jobs, eb); break;
		case 't': tasks = optarg; break;
		case 'S': sc.stage = optarg, stage_from = "--stage"; break;
		case 'F': bad = opt_long("--max-fix", optarg, 0, 100, &v, eb); sc.max_fix = (int)v; break;
		case 'm': sc.llm.model = optarg; break;
		case 'u': sc.llm.base_url = optarg; break;
		case 'T': bad = opt_double("--temperature", optarg, 0, 2, &sc.llm.temperature, eb); break;
		case 'M': bad = opt_long("--max-tokens", optarg, 1, 1000000, &sc.llm.max_tokens, eb); break;
		case 'P': /* auto: 0, max_tokens: 1, max_completion_tokens: 2 */
			bad = opt_choice("--token-param", optarg,
					 (const char *const[]){"auto", "max_tokens", "max_completion_tokens", NULL},
					 &sc.llm.token_param, eb);
			break;
		case 'N': bad = opt_long("--n", optarg, 1, 16, &v, eb); sc.llm.n = (int)v; break;
		case 'o': bad = opt_double("--timeout", optarg, 0.01, 86400, &sc.llm.timeout, eb); break;
		case 'O': bad = opt_double("--connect-timeout", optarg, 0.01, 3600, &sc.llm.connect_timeout, eb); break;
		case 'r': bad = opt_long("--retries", optarg, 0, 100, &v, eb); sc.llm.max_retries = (int)v; break;
		case 'b': bad = opt_double("--backoff", optarg, 0.001, 3600, &sc.llm.backoff_base, eb); break;
		case 'c': bad = opt_long("--concurrency", optarg, 1, 1024, &v, eb); sc.llm.max_concurrent = (int)v; break;
		case 'C': cache = optarg; break;
		case 'X': sc.llm.no_cache = 1; break;
		case 'R': sc.llm.transcript = optarg; break;
		case 'p': sc.llm.prices = optarg; break;
		case 'x': sc.llm.command = optarg; break;
		case 'y': sc.llm.replay = optarg; break;
		case 'z': prompts = optarg; break;
		case 'k': knowledge = optarg; break;
		case 'G': sc.findings = optarg; break;
		case 'h': return tool_usage(KSCI_EXIT_OK, HELP_USAGE, HELP_BODY);
		default: return tool_usage(KSCI_EXIT_USAGE, HELP_USAGE, HELP_BODY);
		}
		if (bad) {
			warnx_("%s", eb);
			return tool_usage(KSCI_EXIT_USAGE, HELP_USAGE, HELP_BODY);
		}
	}
	int offline = strcmp(g.generator, "mutate") == 0 || strcmp(g.generator, "compose") == 0;
	if (!offline && !llm_provider_known(g.generator)) {
		warnx_("%s: unknown provider \"%s\"", gen_from, g.generator);
		usage(stderr);
		return KSCI_EXIT_USAGE;
	}
	if (strcmp(sc.stage, "auto") != 0 && strcmp(sc.stage, "plan") != 0 && strcmp(sc.stage, "write") != 0 &&
	    strcmp(sc.stage, "fix") != 0 && strcmp(sc.stage, "findings") != 0) {
		warnx_("%s: \"%s\" is not auto, plan, write, fix or findings", stage_from, sc.stage);
		return tool_usage(KSCI_EXIT_USAGE, HELP_USAGE, HELP_BODY);
	}
	if (strcmp(g.generator, "compose") == 0 && !archive) {
		warnx_("--generator compose reads the archive's winners: it needs --archive FILE");
		return tool_usage(KSCI_EXIT_USAGE, HELP_USAGE, HELP_BODY);
	}
	struct llm_store store;
	if (!offline) {
		sc.llm.provider = g.generator;
		if (g.have_seed) {
			sc.llm.seed = (long long)g.seed;
			sc.llm.have_seed = 1;
		}
		sc.llm.jitter_seed = g.seed;
		/* -j N: N calls at once need N slots, unless told otherwise
		 * (before the defaults, which would set 4). */
		if (sc.llm.max_concurrent <= 0 && jobs > 4)
			sc.llm.max_concurrent = (int)jobs;
		/* cache, transcript, prices and the provider's needs: as kselect */
		int usage_err;
		if (llm_config_setup(&sc.llm, cache, &store, &usage_err, eb) != 0) {
			if (!usage_err)
				die(KSCI_EXIT_FATAL, "%s", eb);
			warnx_("%s", eb);
			return KSCI_EXIT_USAGE;
		}
		sc.prompts = prm_dir(prompts);
		sc.knowledge = prm_knowledge_dir(knowledge);
		g.stages = &sc;
	}
	if (g.children == 0)
		g.children = g.stages ? sc.keep : 1;
	/* mutate makes a child in microseconds and picks each move against the
	 * children already made in this run: one process. */
	if (g.stages && jobs > 1) {
		t.jobs = (int)jobs;
		t.collect = collect_cb;
		t.collect_ctx = &g;
		t.lost = lost_cb;
	}
	g.tasks = tasks; /* gen_init: else task_root() */
	g.archive = archive;
	g.emit = emit_cb;
	g.warn = warn_cb;
	g.ctx = &t;
	gen_init(&g);
	if (archive) {
		int lrc = gen_load_archive(&g, archive, eb);
		if (lrc != 0) {
			int damaged = lrc == AR_DAMAGED;
			gen_free(&g);
			die(damaged ? KSCI_EXIT_DAMAGED : KSCI_EXIT_FATAL, "%s", eb);
		}
	}
	int rc = tool_run(&t, argv + optind, argc - optind, on_record, &g);
	gen_free(&g);
	return tool_exit(rc);
}
