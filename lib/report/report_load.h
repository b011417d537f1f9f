/*
 * lib/report/ is kreport's work, in the order it runs: report_load (here)
 * reads archives into flat candidates, report_stats computes every number
 * of the report from them, and report_text, report_html and report_plot
 * write it out, sharing report_fmt's number spellings.  Prices and the
 * accounting rule come from the shared lib/price.h: a record's model calls
 * (origin.calls) are priced call by call as they are loaded, the way kgen
 * priced them, and the selector's call that chose its parent
 * (origin.strategy.llm) is counted once however many children carry it.
 *
 * report_load: the archive as kreport sees it — one flat, owned summary per
 * candidate record (docs/reports.md says which record fields feed which
 * number), collected from any number of archives.
 *
 * rp_add copies what it needs out of a record; the caller keeps ownership of
 * the json_t.  Every string and array inside struct rp_data belongs to it and
 * is released by rp_data_free.  After rp_finish, pointers to candidates
 * (rp_find, d->c[i]) stay valid until rp_data_free.  A record missing a field
 * is never an error: the field reads as unknown (NULL, -1 or NAN) and the
 * matching counter in struct rp_counts goes up.
 */
#ifndef KSCI_REPORT_LOAD_H
#define KSCI_REPORT_LOAD_H

#include <jansson.h>
#include <stddef.h>

#include "price.h"

/* Peak figures of the machine, for "% of physical limit"; NAN = unknown. */
struct rp_peak {
	double gbps, gflops;
};

struct rp_cand {
	char *id;          /* NULL when the record had none */
	char *task;        /* NULL when missing */
	long gen;          /* -1 when missing */
	char *status;      /* NULL when missing */
	char **parents;    /* parents[0] is the base parent */
	size_t nparents;
	char *generator;   /* origin.generator, NULL when missing */
	char *note;        /* one line: hypothesis, plan or knob changes; NULL if none */
	char *model;       /* origin.model or origin.llm.model, NULL if none */
	double sp_base;    /* time.speedup_vs_baseline, NAN if unknown */
	double sp_base_lo, sp_base_hi; /* its 95 % interval (time.speedup_vs_baseline_ci), NAN if none */
	double sp_seed;    /* time.speedup_vs_seed, NAN if unknown */
	double pct_peak;   /* best fraction of peak over time.sizes, in %, NAN if unknown */
	double tok_in, tok_out; /* model tokens bought, 0 when absent */
	double cost;       /* origin usage cost in USD, NAN when not given; per_call: the priced calls' */
	/* per_call: the record lists its calls (origin.calls), each priced by
	 * lib/price.h's rule (tok_in, tok_out and cost come from acct). */
	int per_call;
	struct price_acct acct;
	char *sel_call;    /* call_id of the selector's call (origin.strategy.llm), NULL if none */
	struct price_acct sel; /* that call, priced */
	int sel_dup;       /* after rp_finish: an earlier candidate counts the same selector call */
	double seconds;    /* compile + verify + time stage seconds */
	size_t order;      /* position in the input (all archives, 0-based) */
};

struct rp_counts {
	long records;          /* JSON objects read */
	long requests;         /* status "selected": not candidates, skipped */
	long duplicates;       /* same id seen again: the later record replaced it */
	long no_id, no_task, no_gen, no_status;
	long timed_no_speedup; /* status timed but time.speedup_vs_baseline missing */
};

struct rp_data {
	struct rp_cand **c;    /* candidates; after rp_finish sorted by task, gen, order */
	size_t n, cap;
	struct rp_cand **byid; /* after rp_finish: those with an id, sorted by id */
	size_t nbyid;
	struct rp_counts count;
	struct rp_peak peak;   /* from options; overrides time.env (NAN = use env) */
	/* Prices the calls that state no cost (borrowed; NULL: none); set it
	 * before the first rp_add. */
	const struct price_table *prices;
	int finished;
};

void rp_data_init(struct rp_data *d, struct rp_peak peak_override);
/* Take one record.  0, or -1 out of memory (errbuf). */
int rp_add(struct rp_data *d, const json_t *rec, char *errbuf);
/* Drop duplicates (the last record with an id wins), sort, index. -1 on OOM. */
int rp_finish(struct rp_data *d, char *errbuf);
/* Candidate by id (after rp_finish), NULL when not in the archive. */
struct rp_cand *rp_find(const struct rp_data *d, const char *id);
void rp_data_free(struct rp_data *d);

/* Extract one candidate from a record; exposed for tests.  NULL on OOM.
 * Free with rp_cand_free.  prices may be NULL. */
struct rp_cand *rp_cand_from(const json_t *rec, struct rp_peak peak_override);
struct rp_cand *rp_cand_priced(const json_t *rec, struct rp_peak peak_override, const struct price_table *prices);
void rp_cand_free(struct rp_cand *c);

#endif
