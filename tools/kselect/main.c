/*
 * kselect: read an archive, choose the parents of the next generation and
 * write one request record per child (docs/tools/kselect.md).  Options,
 * usage and the loop; the work is in lib/archive.c and lib/select/.  The
 * exit status follows from what the library returns (enum sel_result,
 * ar_scan's -1), never from the text of a message.
 */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive.h"
#include "err.h"
#include "llm.h"
#include "ndjson.h"
#include "opt.h"
#include "rng.h"
#include "select/select.h"

static const char usage_text[] =
	"usage: kselect [-n P] [--task T] [--backend c|cuda|hip] [--strategy S] [--seed S]\n"
	"               [-k K] [--tournament-size T] [--inspirations I]\n"
	"               [--islands N] [--migrate-every M] [--features PATH:BINS[:LO:HI],...]\n"
	"               [--ucb-c C] [--arms ARM,...] [--generation G]\n"
	"               [--provider NAME [--model M] [--base-url URL] [--cmd CMD] [--replay FILE]\n"
	"                [--temperature T] [--max-tokens N] [--timeout SEC] [--transcript FILE]\n"
	"                [--shortlist N]] [archive ...]\n"
	"       kselect --summary --task T [--backend B] [--generation G] [archive ...]\n";

static const char help_text[] =
	"\n"
	"Read archives (plain or gzip NDJSON; none or \"-\": stdin) and write one request\n"
	"record (status \"selected\") per child of the next generation to stdout.\n"
	"Parents are candidates of the task and back end in status \"timed\"; fitness is\n"
	"time.speedup_vs_baseline.  An archive with no record of the task gives one seed\n"
	"request; records of the task but none timed is an error (exit 1, no output).\n"
	"\n"
	"  -n, --population P     children to request (default 4)\n"
	"  -t, --task T           task (default: the archive's only task)\n"
	"  -b, --backend B        c, cuda or hip (default c)\n"
	"  -s, --strategy S       best, tournament (default), islands, map-elites, bandit, llm\n"
	"      --seed S           random seed, 0..2^53-1 (default: from the OS; written to\n"
	"                         strategy.run_seed so a run can be repeated)\n"
	"  -k K                   best: children cycle over the K best (default 4)\n"
	"      --tournament-size T  candidates drawn per tournament (default 3); also used\n"
	"                         by islands and bandit to pick bases\n"
	"      --inspirations I   inspiration records per request, 0..8 (default 1)\n"
	"      --islands N        islands: number of islands (default 4)\n"
	"      --migrate-every M  islands: migrate when generation % M == 0 (default 5; 0 never)\n"
	"      --features LIST    map-elites: comma-separated PATH:BINS[:LO:HI]; PATH is a\n"
	"                         dotted record path (compile.resources.max_registers),\n"
	"                         source_length, or knob.NAME (#define NAME in the source)\n"
	"      --ucb-c C          bandit: exploration weight (default 1.414)\n"
	"      --arms LIST        bandit: arms to try even before any child pulled them\n"
	"                         (knob:TILE,plan:vectorize,...)\n"
	"      --generation G     generation of the children (default: archive max + 1)\n"
	"      --provider NAME    llm: the model provider (openai, anthropic, cmd, replay;\n"
	"                         docs/tools/kgen.md); --model, --base-url, --cmd, --replay,\n"
	"                         --temperature, --max-tokens, --timeout, --transcript as kgen's\n"
	"      --shortlist N      llm: fastest candidates shown to the model (default 20)\n"
	"      --summary          write one JSON object summing the archive up for --task\n"
	"                         (required) and --backend instead of requests: records,\n"
	"                         last_generation (-1: none), generation and its statuses\n"
	"                         (--generation G, default the last), and the best timed\n"
	"                         candidate (id, generation, speedup_vs_baseline,\n"
	"                         speedup_vs_seed) or null; an archive that cannot be read\n"
	"                         to its end (a torn gzip member) is exit 3, nothing written\n"
	"  -h, --help             this text\n"
	"\n"
	"Exit status: 0 ok; 1 a line was not JSON (reported with its line number and\n"
	"skipped), or no candidate of the task is timed; 2 usage; 3 unreadable input or\n"
	"write error.\n";

static _Noreturn void usage(int code)
{
	fputs(usage_text, code ? stderr : stdout);
	if (!code)
		fputs(help_text, stdout);
	exit(code);
}

struct run {
	struct sel_pop *pop;
	struct sel_sum *sum; /* --summary: lines go here instead */
	struct ar_file **ar;
	int nar, cur, status;
};

static int on_line(void *ctx, const char *line, size_t len, long lineno, uint64_t off)
{
	struct run *r = ctx;
	char e[ERRBUF];
	int rc = r->sum ? sel_sum_line(r->sum, line, len, e) : sel_pop_line(r->pop, line, len, r->cur, lineno, off, e);
	if (rc != 0) {
		warnx_("%s: line %ld: %s; line skipped", ar_name(r->ar[r->cur]), lineno, e);
		if (r->status == KSCI_EXIT_OK)
			r->status = KSCI_EXIT_INPUT;
	}
	return 0;
}

static char *ask(void *ctx, const char *prompt, json_t **acct, char *errbuf)
{
	const struct llm_config *c = ctx;
	struct llm_reply rep;
	memset(&rep, 0, sizeof rep);
	static const char sys[] = "You are the evolutionary selector of an automated kernel optimisation search. "
	                          "Answer with the JSON object asked for.";
	char *text = NULL, e[ERRBUF] = "";
	if (llm_complete(c, sys, prompt, &rep, e) == 0 && rep.text) {
		text = strdup(rep.text);
		*acct = llm_reply_json(c, &rep, "select");
	} else {
		snprintf(errbuf, ERRBUF, "--strategy llm: the model call failed (%s)%s%.400s",
		         rep.reason ? rep.reason : "no answer", *e ? ": " : "", e);
	}
	llm_reply_free(&rep);
	return text;
}

static json_t *fetch(void *ctx, const struct sel_cand *c)
{
	struct run *r = ctx;
	char e[ERRBUF];
	char *text = ar_fetch(r->ar[c->file], c->off, c->len, e);
	if (!text) {
		warnx_("%s", e);
		return NULL;
	}
	json_error_t je;
	json_t *rec = json_loadb(text, c->len, 0, &je);
	free(text);
	if (!json_is_object(rec)) {
		warnx_("%s: line %ld: not JSON: %s (column %d); line skipped", ar_name(r->ar[c->file]), c->line,
		       rec ? "not an object" : je.text, je.column);
		json_decref(rec);
		return NULL;
	}
	return rec;
}

static int emit(void *ctx, const json_t *rec)
{
	(void)ctx;
	return nd_write(stdout, rec);
}

/* --summary: the one object.  An exit code. */
static int write_summary(struct run *r)
{
	json_t *sum = sel_sum_json(r->sum);
	if (!sum)
		die(KSCI_EXIT_FATAL, "out of memory");
	int rc = nd_write(stdout, sum);
	json_decref(sum);
	if (rc != 0) {
		warn_("write error");
		return KSCI_EXIT_FATAL;
	}
	return KSCI_EXIT_OK;
}

/* The requests.  An exit code, from sel_run's result (never its message). */
static int choose_and_emit(struct run *r, char *e)
{
	if (sel_pop_finish(r->pop, e) != 0)
		die(KSCI_EXIT_USAGE, "%s", e);
	switch (sel_run(r->pop, fetch, emit, r, e)) {
	case SEL_DONE:
		return KSCI_EXIT_OK;
	case SEL_PARTIAL:
		return KSCI_EXIT_INPUT;
	case SEL_NONE:
		warnx_("%s", e);
		return KSCI_EXIT_INPUT;
	default: /* SEL_FATAL: the write failed (errno says why) or out of memory */
		warn_("%s", e);
		return KSCI_EXIT_FATAL;
	}
}

int main(int argc, char **argv)
{
	err_init(argv[0]);
	static const struct option lo[] = {
		{"population", required_argument, NULL, 'n'}, {"task", required_argument, NULL, 't'},
		{"backend", required_argument, NULL, 'b'}, {"strategy", required_argument, NULL, 's'},
		{"seed", required_argument, NULL, 'S'}, {"tournament-size", required_argument, NULL, 'T'},
		{"inspirations", required_argument, NULL, 'I'}, {"islands", required_argument, NULL, 'N'},
		{"migrate-every", required_argument, NULL, 'M'}, {"features", required_argument, NULL, 'F'},
		{"ucb-c", required_argument, NULL, 'C'}, {"arms", required_argument, NULL, 'A'},
		{"generation", required_argument, NULL, 'G'}, {"provider", required_argument, NULL, 'P'},
		{"model", required_argument, NULL, 'm'}, {"base-url", required_argument, NULL, 'u'},
		{"cmd", required_argument, NULL, 'x'}, {"replay", required_argument, NULL, 'y'},
		{"temperature", required_argument, NULL, 'e'}, {"max-tokens", required_argument, NULL, 'X'},
		{"timeout", required_argument, NULL, 'o'}, {"transcript", required_argument, NULL, 'R'},
		{"shortlist", required_argument, NULL, 'L'}, {"summary", no_argument, NULL, 'Z'},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
	struct sel_opts o = {.backend = "c", .population = 4, .strategy = SEL_TOURNAMENT, .k = 4, .tournament = 3,
	                     .inspirations = 1, .islands = 4, .migrate_every = 5, .ucb_c = 1.414, .generation = -1};
	const char *provider = NULL;
	struct llm_config lc = {.temperature = -1, .max_retries = -1, .n = 1};
	int have_seed = 0, summary = 0, c;
	long v;
	double d;
	char e[ERRBUF];
	while ((c = getopt_long(argc, argv, "n:t:b:s:k:h", lo, NULL)) != -1) {
		int bad = 0;
		switch (c) {
		case 'n': bad = opt_long("--population", optarg, 1, 100000, &v, e); o.population = (int)v; break;
		case 't': o.task = optarg; break;
		case 'b':
			if (strcmp(optarg, "c") && strcmp(optarg, "cuda") && strcmp(optarg, "hip"))
				bad = errf(e, "--backend: \"%s\" is not c, cuda or hip", optarg);
			o.backend = optarg;
			break;
		case 's':
			if ((v = sel_strategy_parse(optarg)) < 0)
				bad = errf(e, "--strategy: unknown strategy \"%s\"", optarg);
			o.strategy = (enum sel_strategy)v;
			break;
		case 'S': bad = opt_long("--seed", optarg, 0, (1L << 53) - 1, &v, e); o.seed = (uint64_t)v; have_seed = 1; break;
		case 'k': bad = opt_long("-k", optarg, 1, 100000, &v, e); o.k = (int)v; break;
		case 'T': bad = opt_long("--tournament-size", optarg, 1, 1000, &v, e); o.tournament = (int)v; break;
		case 'I': bad = opt_long("--inspirations", optarg, 0, SEL_MAXINSP, &v, e); o.inspirations = (int)v; break;
		case 'N': bad = opt_long("--islands", optarg, 1, 1000, &v, e); o.islands = (int)v; break;
		case 'M': bad = opt_long("--migrate-every", optarg, 0, 1000000, &v, e); o.migrate_every = (int)v; break;
		case 'C': bad = opt_double("--ucb-c", optarg, 0, 100, &d, e); o.ucb_c = d; break;
		case 'A': o.arms = optarg; break;
		case 'G': bad = opt_long("--generation", optarg, 0, 1000000000, &v, e); o.generation = v; break;
		case 'P': provider = optarg; break;
		case 'm': lc.model = optarg; break;
		case 'u': lc.base_url = optarg; break;
		case 'x': lc.command = optarg; break;
		case 'y': lc.replay = optarg; break;
		case 'R': lc.transcript = optarg; break;
		case 'e': bad = opt_double("--temperature", optarg, 0, 2, &d, e); lc.temperature = d; break;
		case 'X': bad = opt_long("--max-tokens", optarg, 1, 1000000, &v, e); lc.max_tokens = v; break;
		case 'o': bad = opt_double("--timeout", optarg, 0.001, 86400, &d, e); lc.timeout = d; break;
		case 'L': bad = opt_long("--shortlist", optarg, 1, 1000, &v, e); o.shortlist = (int)v; break;
		case 'Z': summary = 1; break;
		case 'F':
			for (char *s = optarg; *s && !bad;) {
				size_t n = strcspn(s, ",");
				char spec[200];
				if (o.nfeat == SEL_MAXFEAT)
					bad = errf(e, "--features: at most %d dimensions", SEL_MAXFEAT);
				else if (n >= sizeof spec)
					bad = errf(e, "--features: a dimension is too long");
				else {
					memcpy(spec, s, n);
					spec[n] = '\0';
					bad = sel_feature_parse(spec, &o.feat[o.nfeat++], e);
				}
				s += n + (s[n] == ',');
			}
			break;
		case 'h': usage(0);
		default: usage(KSCI_EXIT_USAGE);
		}
		if (bad) {
			warnx_("%s", e);
			usage(KSCI_EXIT_USAGE);
		}
	}
	if (summary && !o.task)
		die(KSCI_EXIT_USAGE, "--summary needs --task");
	if (summary)
		o.strategy = SEL_TOURNAMENT; /* --strategy and its options play no part */
	if (o.strategy == SEL_LLM && (!provider || strcmp(provider, "mutate") == 0))
		die(KSCI_EXIT_USAGE, "--strategy llm needs a model provider (--provider ...)%s",
		    provider ? ": mutate is not a model" : "");
	if (o.strategy == SEL_LLM) {
		if (strcmp(provider, "openai") && strcmp(provider, "anthropic") && strcmp(provider, "cmd") &&
		    strcmp(provider, "replay"))
			die(KSCI_EXIT_USAGE, "--provider: unknown provider \"%s\" (openai, anthropic, cmd, replay)", provider);
		lc.provider = provider;
		llm_config_defaults(&lc);
		o.ask = ask;
		o.ask_ctx = &lc;
	}
	if (o.strategy == SEL_MAP && o.nfeat == 0)
		die(KSCI_EXIT_USAGE, "--strategy map-elites needs --features PATH:BINS[:LO:HI],...");
	if (!have_seed)
		o.seed = rng_os_seed() >> 11;

	struct run r = {0};
	int nfiles = argc - optind;
	char *dash[] = {"-"};
	char **files = nfiles ? argv + optind : dash;
	if (!nfiles)
		nfiles = 1;
	if (summary && !(r.sum = sel_sum_new(o.task, o.backend, o.generation)))
		die(KSCI_EXIT_FATAL, "out of memory");
	if (!summary && !(r.pop = sel_pop_new(&o, e)))
		die(KSCI_EXIT_USAGE, "%s", e);
	if (!(r.ar = calloc((size_t)nfiles, sizeof *r.ar)))
		die(KSCI_EXIT_FATAL, "out of memory");
	for (r.cur = 0; r.cur < nfiles; r.cur++) {
		if (!(r.ar[r.cur] = ar_open(files[r.cur], e)))
			die(KSCI_EXIT_FATAL, "%s", e);
		r.nar++;
		if (ar_scan(r.ar[r.cur], on_line, &r, e) != 0)
			die(KSCI_EXIT_FATAL, "%s", e);
	}
	/* One way out, as jq's main: the worst code wins (3 > 1 > 0), and
	 * everything is released on every path. */
	int rc = summary ? write_summary(&r) : choose_and_emit(&r, e);
	if (rc > r.status)
		r.status = rc;
	if (r.status != KSCI_EXIT_FATAL && (fflush(stdout) != 0 || ferror(stdout))) {
		warn_("write error");
		r.status = KSCI_EXIT_FATAL;
	}
	for (int i = 0; i < r.nar; i++)
		ar_close(r.ar[i]);
	free(r.ar);
	sel_pop_free(r.pop);
	sel_sum_free(r.sum);
	return r.status;
}
