/*
 * select_impl: what the strategy files (lib/select_*.c) share with
 * lib/select.c and nobody else: the population's layout, the pick a
 * strategy makes for one child, and the common helpers.  Picks own their
 * info object (strategy-specific request fields); sel_run frees it.
 */
#ifndef KSCI_SELECT_INT_H
#define KSCI_SELECT_INT_H

#include "rng.h"
#include "select.h"

#define SEL_MAXKEYS 16

struct sel_pop {
	const struct sel_opts *o;
	struct sel_cand *c;
	size_t n, cap;
	char **names; /* interned strings: tasks+backends ("task\0backend"), statuses, arms */
	size_t *namelen;
	int nnames, capnames;
	int *tb_names, *status_names, *arm_names; /* name indices per table */
	int ntb, nstatus, narm;
	const char *keys[SEL_MAXKEYS];
	char keybuf[SEL_MAXKEYS][64];
	int nkeys;

	/* after sel_pop_finish */
	int finished;
	int tb;                /* the chosen (task, backend), -1 when none */
	int *elig;             /* eligible parents, best first */
	int nelig;
	int *hash;             /* open addressing: id -> last candidate of the task */
	size_t hmask;
	long records, failed, other, maxgen;
	char task[128];
	struct rng rng;
	sel_fetch_fn fetch; /* during sel_run, for strategies that read records */
	void *fetch_ctx;
};

struct sel_pick {
	int base;
	int insp[SEL_MAXINSP];
	int ninsp;
	int island; /* -1: none */
	char reason[400];
	json_t *info; /* extra strategy fields, owned */
};

/* Strategy entry points: fill picks[0..o->population).  -1 + errbuf. */
int sel_best(struct sel_pop *p, struct sel_pick *picks, char *errbuf);
int sel_tournament(struct sel_pop *p, struct sel_pick *picks, char *errbuf);
int sel_islands(struct sel_pop *p, struct sel_pick *picks, char *errbuf);
int sel_map(struct sel_pop *p, struct sel_pick *picks, char *errbuf);
int sel_bandit(struct sel_pop *p, struct sel_pick *picks, char *errbuf);
int sel_llm(struct sel_pop *p, struct sel_pick *picks, char *errbuf);

/* Helpers over a list of candidate indices sorted best first. */
/* Winner of a tournament of size t drawn with replacement from list[0..n). */
int sel_tourney(struct sel_pop *p, const int *list, int n, int t);
/* Fill pick->insp with up to want others from list (best first), skipping
 * the base and ones already taken. */
void sel_add_best(struct sel_pick *pick, const int *list, int n, int want);
/* Index of id among the population's candidates of the task (last record of
 * that id), or -1. */
int sel_find(const struct sel_pop *p, const char *id);
/* The interned name of an arm. */
const char *sel_arm_name(const struct sel_pop *p, int arm);
/* Comparison helper: is candidate a better than b (speedup, then earlier). */
int sel_better(const struct sel_pop *p, int a, int b);
/* Intern an arm name given on the command line; its index or -1. */
int sel_intern_arm(struct sel_pop *p, const char *name);

/* MAP-Elites pieces (select_map.c), exposed for the unit tests. */
/* Bin of v in [lo, hi] cut into bins; NAN -> bins (the "none" bin). */
int sel_map_bin(int bins, double lo, double hi, double v);
/* Fill lo/hi per dimension and the elites (candidate indices) with their
 * cell keys, sorted by key; returns the number of occupied cells or -1. */
int sel_map_elites(struct sel_pop *p, double *lo, double *hi, int *elites, uint64_t *keys, char *errbuf);

/* Bandit pieces (select_bandit.c). */
/* clip(child / parent - 1, -1, 1); NAN -> -1. */
double sel_reward(double child, double parent);
/* Pulls and reward sums per arm (arrays of p->narm). */
int sel_bandit_pulls(struct sel_pop *p, long *n, double *sum);

#endif
