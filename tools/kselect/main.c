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
#include "kselect-help.h" /* HELP_USAGE, HELP_BODY: made from docs/tools/kselect.md */
#include "llm.h"
#include "ndjson.h"
#include "opt.h"
#include "rec.h"
#include "rng.h"
#include "select/select.h"
#include "tool.h"

struct run {
	struct sel_pop *pop;
	struct sel_sum *sum; /* --summary: lines go here instead */
	struct ar_file **ar;
	int nar, cur, status;
	int write_failed; /* emit reported a write error (once, through tool_write_error) */
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

/* The selector's call: through the answer cache and into the transcript
 * like kgen's, tagged with the library's replay key and cache sample. */
static char *ask(void *ctx, const char *prompt, const char *key, const char *sample, json_t **acct, char *errbuf)
{
	struct llm_config cfg = *(const struct llm_config *)ctx, *c = &cfg;
	cfg.replay_key = key;
	cfg.sample = sample;
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
	struct run *r = ctx;
	if (nd_write(stdout, rec) == 0)
		return 0;
	r->write_failed = 1;
	tool_write_error();
	return -1;
}

/* --summary: the one object.  An exit code. */
static int write_summary(struct run *r)
{
	json_t *sum = sel_sum_json(r->sum);
	if (!sum)
		die(KSCI_EXIT_FATAL, "out of memory");
	int rc = nd_write(stdout, sum);
	json_decref(sum);
	return rc == 0 ? KSCI_EXIT_OK : tool_write_error();
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
	default: /* SEL_FATAL: the write failed (emit reported it) or out of memory */
		if (!r->write_failed)
			warnx_("%s", e);
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
		{"cache", required_argument, NULL, 'c'}, {"no-cache", no_argument, NULL, 'D'},
		{"prices", required_argument, NULL, 'p'},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
	struct sel_opts o = {.backend = "c", .population = 4, .strategy = SEL_TOURNAMENT, .k = 4, .tournament = 3,
	                     .inspirations = 1, .islands = 4, .migrate_every = 5, .ucb_c = 1.414, .generation = -1};
	const char *provider = NULL, *cache = NULL;
	struct llm_config lc = {.temperature = -1, .max_retries = -1, .n = 1};
	struct llm_store store; /* lc's cache and transcript paths */
	int have_seed = 0, summary = 0, c;
	long v;
	double d;
	char e[ERRBUF];
	while ((c = getopt_long(argc, argv, "n:t:b:s:k:h", lo, NULL)) != -1) {
		int bad = 0;
		switch (c) {
		case 'n': bad = opt_long("--population", optarg, 1, 100000, &v, e); o.population = (int)v; break;
		case 't': o.task = optarg; break;
		case 'b': {
			int which;
			bad = opt_choice("--backend", optarg, rec_backends, &which, e);
			o.backend = optarg;
			break;
		}
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
		case 'c': cache = optarg; break;
		case 'D': lc.no_cache = 1; break;
		case 'p': lc.prices = optarg; break;
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
		case 'h': return tool_usage(KSCI_EXIT_OK, HELP_USAGE, HELP_BODY);
		default: return tool_usage(KSCI_EXIT_USAGE, HELP_USAGE, HELP_BODY);
		}
		if (bad) {
			warnx_("%s", e);
			return tool_usage(KSCI_EXIT_USAGE, HELP_USAGE, HELP_BODY);
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
		if (!llm_provider_known(provider))
			die(KSCI_EXIT_USAGE, "--provider: unknown provider \"%s\" (openai, anthropic, cmd, replay)", provider);
		lc.provider = provider;
		lc.stage = "select"; /* the ledger's stage (lib/llm.h) */
		int usage_err;
		if (llm_config_setup(&lc, cache, &store, &usage_err, e) != 0)
			die(usage_err ? KSCI_EXIT_USAGE : KSCI_EXIT_FATAL, "%s", e);
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
		int rc = ar_scan(r.ar[r.cur], on_line, &r, e);
		if (rc != 0)
			die(rc == AR_DAMAGED ? KSCI_EXIT_DAMAGED : KSCI_EXIT_FATAL, "%s", e);
	}
	/* One way out, as jq's main: the worst code wins (3 > 1 > 0), and
	 * everything is released on every path. */
	int rc = summary ? write_summary(&r) : choose_and_emit(&r, e);
	if (rc > r.status)
		r.status = rc;
	for (int i = 0; i < r.nar; i++)
		ar_close(r.ar[i]);
	free(r.ar);
	sel_pop_free(r.pop);
	sel_sum_free(r.sum);
	return tool_exit(r.status);
}
