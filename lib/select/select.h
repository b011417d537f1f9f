/*
 * select: kselect's work — read candidates from archive lines, keep the
 * population of one task and back end, and choose the parents of the next
 * generation with one of the strategies (best-k, tournament, islands,
 * MAP-Elites, UCB bandit, a language model), emitting request records
 * (docs/record.md, "Request fields").
 *
 * Lines go in through sel_pop_line, which keeps a small summary of each
 * record (id, status, speedup, generation, island, parent, arms, features,
 * where the line is) and never the line itself; sel_run then chooses, asks
 * the caller's fetch callback for the whole records of the chosen parents,
 * and hands each request to the emit callback.  The population owns its
 * summaries; fetched records belong to sel_run, which releases them after
 * emitting; emitted requests are borrowed by the callback for the call.
 * lib code never prints: problems come back in errbuf or through the fetch
 * callback, which reports them itself.
 */
#ifndef KSCI_SELECT_H
#define KSCI_SELECT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define SEL_MAXFEAT 4 /* MAP-Elites feature dimensions */
#define SEL_MAXINSP 8 /* inspirations per request */
#define SEL_IDLEN 48  /* longest id kept, NUL included */

enum sel_strategy { SEL_BEST, SEL_TOURNAMENT, SEL_ISLANDS, SEL_MAP, SEL_BANDIT, SEL_LLM };

/* One MAP-Elites dimension: "path:bins[:lo:hi]". */
struct sel_feature {
	char spec[160];  /* as given, for messages and the request */
	char path[128];  /* dotted record path, "source_length", or "knob.NAME" */
	int bins;
	int have_range;  /* lo/hi given; else the eligible population's min/max */
	double lo, hi;
};

struct sel_opts {
	const char *task;    /* NULL: the archive's only task */
	const char *backend; /* "c", "cuda", "hip" */
	int population;      /* children to request (>= 1) */
	enum sel_strategy strategy;
	uint64_t seed;
	int k;            /* best-k */
	int tournament;   /* tournament size */
	int inspirations; /* inspirations per request (0..SEL_MAXINSP) */
	int islands, migrate_every;
	struct sel_feature feat[SEL_MAXFEAT];
	int nfeat;
	double ucb_c;        /* bandit exploration weight */
	const char *arms;    /* bandit: comma-separated arms known before any pull, or NULL */
	long generation;     /* < 0: max generation in the archive + 1 */
	/* llm: the model call, supplied by the tool.  Returns the answer text
	 * (malloc'd; the caller frees) and sets *acct to a new accounting
	 * object or NULL; NULL + errbuf when the call failed. */
	char *(*ask)(void *ctx, const char *prompt, json_t **acct, char *errbuf);
	void *ask_ctx;
	int shortlist; /* llm: candidates shown to the model (default 20) */
};

/* The summary kept for every record of the archive. */
struct sel_cand {
	char id[SEL_IDLEN];
	char parent[SEL_IDLEN]; /* parents[0], "" for none */
	int tb;                 /* index of its (task, backend) pair */
	int status;             /* index into the population's status names */
	int timed;              /* status "timed" with a finite speedup > 0 */
	int dup;                /* a later record has the same id */
	int bad;                /* the whole line could not be re-read as JSON */
	double speedup;         /* time.speedup_vs_baseline */
	long generation;        /* -1 when missing */
	int island;             /* -1 when missing */
	int arm[2], narms;      /* bandit arms of this child (origin) */
	double feat[SEL_MAXFEAT]; /* NAN when missing */
	int file;
	long line;
	uint64_t off;
	size_t len;
};

struct sel_pop;

/* A population for options o (borrowed; must outlive the population).  NULL
 * + errbuf on a bad option (a feature spec, say). */
struct sel_pop *sel_pop_new(const struct sel_opts *o, char *errbuf);
void sel_pop_free(struct sel_pop *p);
/* Take one archive line.  0: kept (or blank); -1: not a JSON object or
 * unusable (errbuf without file/line, the caller adds them). */
int sel_pop_line(struct sel_pop *p, const char *line, size_t n, int file, long lineno, uint64_t off, char *errbuf);
/* After the last line: settle the task (when not given), drop duplicate ids
 * (the last record of an id wins) and rank the eligible parents.  -1 + errbuf
 * when the task is ambiguous. */
int sel_pop_finish(struct sel_pop *p, char *errbuf);

/* Counts for messages and the request's strategy.population. */
struct sel_stats {
	long records;   /* lines that were records of this task and back end */
	long timed;     /* eligible parents (distinct ids) */
	long failed;    /* records of the task in a final status other than timed */
	long other;     /* records of other tasks or back ends */
	long next_generation;
	const char *task;
};
void sel_pop_stats(const struct sel_pop *p, struct sel_stats *s);
const struct sel_cand *sel_pop_cand(const struct sel_pop *p, int i);

typedef json_t *(*sel_fetch_fn)(void *ctx, const struct sel_cand *c);
typedef int (*sel_emit_fn)(void *ctx, const json_t *rec);

/* Choose and emit o->population requests (or the one seed request when the
 * archive has no record of the task).  fetch returns a new reference to the
 * whole record, or NULL after reporting why (that candidate is then left
 * out and the choice made again).  Returns 0, 1 when some candidate had to
 * be left out, -1 + errbuf when nothing could be chosen (no timed candidate)
 * or emit failed. */
int sel_run(struct sel_pop *p, sel_fetch_fn fetch, sel_emit_fn emit, void *ctx, char *errbuf);

/* Parse "path:bins[:lo:hi]" into f; -1 + errbuf. */
int sel_feature_parse(const char *spec, struct sel_feature *f, char *errbuf);
/* "best" -> SEL_BEST ...; -1 when unknown. */
int sel_strategy_parse(const char *name);
const char *sel_strategy_name(enum sel_strategy s);

/* --- the llm strategy (lib/select_llm.c), exposed for the tests --------- */

/* The prompt (malloc'd, caller frees): the population's best candidates with
 * ids, parents, generation, speedup and per-size timings taken from recs
 * (whole records of the candidates listed in idx[0..n)), and the picks
 * already made this generation (text, may be empty). */
char *sel_llm_prompt(const struct sel_pop *p, const int *idx, json_t *const *recs, int n, const char *taken);
/* Read the model's answer: the first JSON object in the text with "base"
 * (an eligible id), optional "reference" (an eligible id, not the base) and
 * "reasoning".  0 with candidate indices (*ref -1 when none) and a copy of
 * the reasoning (caller frees); -1 + errbuf. */
int sel_llm_parse(const struct sel_pop *p, const char *answer, int *base, int *ref, char **reasoning, char *errbuf);

#endif
