/*
 * kgen: make child candidates from request records (docs/tools/kgen.md).
 *
 *   kselect < archive | kgen [--generator mutate] | kcompile | ...
 *
 * Options, usage and the record loop;  the work is in lib/gen/ (gen.h names
 * its files; gen_llm.h holds the model options).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "err.h"
#include "gen/gen.h"
#include "llm.h"
#include "gen/prompt.h"
#include "gen/gen_llm.h"
#include "tool.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: kgen [--provider mutate|openai|anthropic|cmd|replay] [--seed S] [--children N]\n"
		   "            [--archive FILE] [--tasks DIR] [--stage auto|plan|write|fix] [--max-fix N]\n"
		   "            [--model M] [--base-url URL] [--temperature T] [--max-tokens N]\n"
		   "            [--token-param auto|max_tokens|max_completion_tokens] [--n N]\n"
		   "            [--timeout S] [--connect-timeout S] [--retries N] [--backoff S]\n"
		   "            [--concurrency N] [--cache DIR] [--no-cache] [--transcript FILE]\n"
		   "            [--prices FILE] [--cmd COMMAND] [--replay FILE[:FILE...]]\n"
		   "            [--prompts DIR] [--knowledge DIR] [file ...]\n");
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

static double real_opt(const char *name, const char *s, double lo, double hi)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= lo && v <= hi)) {
		warnx_("%s: \"%s\" is not a number in [%g, %g]", name, s, lo, hi);
		usage(stderr);
		exit(KSCI_EXIT_USAGE);
	}
	return v;
}

/* The directory model answers are cached in: $KSCI_CACHE/llm, else the XDG cache. */
static const char *cache_dir(const char *opt, char *buf, size_t n)
{
	const char *e;
	if (opt)
		return opt;
	if ((e = getenv("KSCI_CACHE")) && *e)
		snprintf(buf, n, "%s/llm", e);
	else if ((e = getenv("XDG_CACHE_HOME")) && *e)
		snprintf(buf, n, "%s/ksci/llm", e);
	else if ((e = getenv("HOME")) && *e)
		snprintf(buf, n, "%s/.cache/ksci/llm", e);
	else
		return NULL;
	return buf;
}

static int mkdir_p(const char *path)
{
	char b[4096];
	snprintf(b, sizeof b, "%s", path);
	for (char *s = b + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			mkdir(b, 0777);
			*s = '/';
		}
	return mkdir(b, 0777) == 0 || errno == EEXIST ? 0 : -1;
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
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct gen g = {0};
	struct tool t = {0};
	const char *archive = NULL, *tasks = NULL, *cache = NULL, *prompts = NULL, *knowledge = NULL;
	struct gen_llm_config sc = {.stage = "auto", .max_fix = 2, .keep = 3, .notebook_max = 40};
	sc.llm.temperature = -1;
	sc.llm.max_retries = -1;
	const char *e;
	if ((e = getenv("KSCI_STAGE")) && *e)
		sc.stage = e;
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
		case 'S': sc.stage = optarg; break;
		case 'F': sc.max_fix = (int)num_opt("--max-fix", optarg, 0, 100); break;
		case 'm': sc.llm.model = optarg; break;
		case 'u': sc.llm.base_url = optarg; break;
		case 'T': sc.llm.temperature = real_opt("--temperature", optarg, 0, 2); break;
		case 'M': sc.llm.max_tokens = (long)num_opt("--max-tokens", optarg, 1, 1000000); break;
		case 'P':
			if (strcmp(optarg, "auto") == 0)
				sc.llm.token_param = 0;
			else if (strcmp(optarg, "max_tokens") == 0)
				sc.llm.token_param = 1;
			else if (strcmp(optarg, "max_completion_tokens") == 0)
				sc.llm.token_param = 2;
			else {
				warnx_("--token-param: \"%s\" is not auto, max_tokens or max_completion_tokens", optarg);
				return KSCI_EXIT_USAGE;
			}
			break;
		case 'N': sc.llm.n = (int)num_opt("--n", optarg, 1, 16); break;
		case 'o': sc.llm.timeout = real_opt("--timeout", optarg, 0.01, 86400); break;
		case 'O': sc.llm.connect_timeout = real_opt("--connect-timeout", optarg, 0.01, 3600); break;
		case 'r': sc.llm.max_retries = (int)num_opt("--retries", optarg, 0, 100); break;
		case 'b': sc.llm.backoff_base = real_opt("--backoff", optarg, 0.001, 3600); break;
		case 'c': sc.llm.max_concurrent = (int)num_opt("--concurrency", optarg, 1, 1024); break;
		case 'C': cache = optarg; break;
		case 'X': sc.llm.no_cache = 1; break;
		case 'R': sc.llm.transcript = optarg; break;
		case 'p': sc.llm.prices = optarg; break;
		case 'x': sc.llm.command = optarg; break;
		case 'y': sc.llm.replay = optarg; break;
		case 'z': prompts = optarg; break;
		case 'k': knowledge = optarg; break;
		case 'h': usage(stdout); return KSCI_EXIT_OK;
		default: usage(stderr); return KSCI_EXIT_USAGE;
		}
	}
	static const char *const providers[] = {"mutate", "openai", "anthropic", "cmd", "replay", NULL};
	int known = 0;
	for (int i = 0; providers[i]; i++)
		known |= strcmp(g.generator, providers[i]) == 0;
	if (!known) {
		warnx_("unknown provider \"%s\"", g.generator);
		usage(stderr);
		return KSCI_EXIT_USAGE;
	}
	if (strcmp(sc.stage, "auto") != 0 && strcmp(sc.stage, "plan") != 0 && strcmp(sc.stage, "write") != 0 &&
	    strcmp(sc.stage, "fix") != 0) {
		warnx_("--stage: \"%s\" is not auto, plan, write or fix", sc.stage);
		return KSCI_EXIT_USAGE;
	}
	char cbuf[4096], tbuf[4200];
	if (strcmp(g.generator, "mutate") != 0) {
		sc.llm.provider = g.generator;
		sc.llm.cache_dir = cache_dir(cache, cbuf, sizeof cbuf);
		if (sc.llm.cache_dir && mkdir_p(sc.llm.cache_dir) != 0)
			die(KSCI_EXIT_FATAL, "cache %s: %s", sc.llm.cache_dir, strerror(errno));
		if (!sc.llm.transcript && (e = getenv("KSCI_TRANSCRIPT")) && *e)
			sc.llm.transcript = e;
		if (!sc.llm.transcript && sc.llm.cache_dir) {
			snprintf(tbuf, sizeof tbuf, "%s/transcript.ndjson.gz", sc.llm.cache_dir);
			sc.llm.transcript = tbuf;
		}
		if (!sc.llm.prices && (e = getenv("KSCI_PRICES")) && *e)
			sc.llm.prices = e;
		if (g.have_seed) {
			sc.llm.seed = (long long)g.seed;
			sc.llm.have_seed = 1;
		}
		sc.llm.jitter_seed = g.seed;
		llm_config_defaults(&sc.llm);
		if (strcmp(g.generator, "cmd") == 0 && !sc.llm.command) {
			warnx_("--provider cmd needs --cmd COMMAND (or KSCI_LLM_CMD)");
			return KSCI_EXIT_USAGE;
		}
		if (strcmp(g.generator, "replay") == 0 && !sc.llm.replay) {
			warnx_("--provider replay needs --replay FILE (or KSCI_REPLAY)");
			return KSCI_EXIT_USAGE;
		}
		sc.prompts = prm_dir(prompts);
		sc.knowledge = prm_knowledge_dir(knowledge);
		g.stages = &sc;
	}
	g.tasks = tasks; /* gen_init: else task_root() */
	g.emit = emit_cb;
	g.warn = warn_cb;
	g.ctx = &t;
	gen_init(&g);
	if (archive) {
		char eb[ERRBUF];
		if (gen_load_archive(&g, archive, eb) != 0) {
			gen_free(&g);
			die(KSCI_EXIT_FATAL, "%s", eb);
		}
	}
	int rc = tool_run(&t, argv + optind, argc - optind, on_record, &g);
	gen_free(&g);
	return rc;
}
