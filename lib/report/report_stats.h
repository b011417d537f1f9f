/*
 * report_stats: every number kreport prints, computed once from the loaded
 * archive (report_load.h) so that the text, HTML and plot writers only
 * format.  Definitions (winner, fast_p, improvement, cost) are in
 * docs/reports.md; this header only names them.
 *
 * struct rp_report owns its arrays (rp_report_free); the candidate pointers
 * inside are borrowed from the struct rp_data it was computed from, which
 * must outlive it.
 */
#ifndef KSCI_REPORT_STATS_H
#define KSCI_REPORT_STATS_H

#include <stddef.h>

#include "err.h"
#include "report_load.h"
#include "price.h"

#define RP_NFAST 4
extern const double rp_fast_p[RP_NFAST]; /* 0, 1, 1.5, 2 */

/* Status columns of the per-generation table, in order; RP_ST_OTHER takes
 * every other status and records without one. */
enum { RP_ST_COMPILE_ERROR, RP_ST_WRONG, RP_ST_CRASHED, RP_ST_TIMEOUT, RP_ST_TIMED, RP_ST_SLOW, RP_ST_OTHER, RP_NST };
extern const char *const rp_st_name[RP_NST];

struct rp_cost {
	double tok_in, tok_out; /* tokens bought (answers from the cache or a replay not counted) */
	double money;       /* USD over the records and calls that had a price */
	long priced;        /* records with tokens or a cost that got a money figure */
	long unpriced;      /* records with tokens but no cost and no matching price */
	double seconds;     /* compile + verify + time stage seconds */
	/* Calls listed one by one (origin.calls, and the selector's, once). */
	long calls, sel_calls, cached, unpriced_calls;
	double cached_in, cached_out, saved; /* tokens and USD of the answers not bought */
};

/* Whether some record or call got a money figure (else money reads n/a). */
int rp_cost_has_money(const struct rp_cost *k);

struct rp_genrow {
	long gen;           /* -1: records without a generation */
	long total;
	long st[RP_NST];
	double best;        /* best speedup vs baseline so far (this and earlier), NAN if none */
};

struct rp_step {
	const struct rp_cand *c;
	double effect;      /* c->sp_base / parent's sp_base; NAN when either is unknown */
};

struct rp_task {
	const char *name;
	const struct rp_cand *best;   /* NULL when no candidate was timed with a speedup */
	struct rp_step *lineage;      /* root first, ends at best */
	size_t nlineage;
	const char *missing_parent;   /* the chain stopped at this id (not in the archive), or NULL */
	int cycle;                    /* the chain looped and was cut */
	struct rp_genrow *gens;
	size_t ngens;
	long candidates;
	long held;                    /* timed but held back: time.implausible (status "implausible") */
	long improvements;
	struct rp_cost cost;
};

struct rp_report {
	struct rp_task *tasks;        /* sorted by name */
	size_t ntasks;
	long no_task;                 /* candidates without a task, left out of tasks */
	long fast_n[RP_NFAST];        /* tasks whose winner's speedup > p */
	long solved;                  /* tasks with a winner */
	double geomean;               /* over the winners' speedups vs baseline, NAN if none */
	long improvements;
	struct rp_cost cost;
	const struct rp_data *data;
};

/* prices may be NULL (no table: only records' own costs count).  -1 on OOM. */
int rp_report_make(struct rp_report *r, const struct rp_data *d, const struct price_table *prices, char *errbuf);
void rp_report_free(struct rp_report *r);

/* Per-improvement figure: total / n, NAN when n is 0. */
double rp_per(double total, long n);

#endif
