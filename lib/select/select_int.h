/*
 * select_int: the strategies of lib/select/ as the dispatcher (select.c)
 * and the unit tests see them — one entry point per strategy, and the
 * inner pieces of MAP-Elites, the bandit and the llm selector that the
 * tests check on their own.  No code is behind this header itself: each
 * name is defined in its strategy's file, and every strategy builds only on
 * the population base (select_pop.h, included here), never on select.c.
 * Picks own their info object (strategy-specific request fields); the
 * dispatcher frees it.  Returned text is malloc'd for the caller.
 */
#ifndef KSCI_SELECT_INT_H
#define KSCI_SELECT_INT_H

#include <jansson.h>

#include "select_pop.h"

/* Strategy entry points: fill picks[0..o->population), each already
 * sel_pick_init'ed, with p's generator seeded.  -1 + errbuf. */
int sel_best(struct sel_pop *p, struct sel_pick *picks, char *errbuf);       /* select_best.c */
int sel_tournament(struct sel_pop *p, struct sel_pick *picks, char *errbuf); /* select_best.c */
int sel_islands(struct sel_pop *p, struct sel_pick *picks, char *errbuf);    /* select_islands.c */
int sel_map(struct sel_pop *p, struct sel_pick *picks, char *errbuf);        /* select_map.c */
int sel_bandit(struct sel_pop *p, struct sel_pick *picks, char *errbuf);     /* select_bandit.c */
int sel_llm(struct sel_pop *p, struct sel_pick *picks, char *errbuf);        /* select_llm.c */

/* MAP-Elites pieces (select_map.c). */
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

/* llm pieces (select_llm.c). */
#define SEL_LLM_RECENT 12 /* recent experiments shown to the model */
/* What the model is shown besides the counts: the shortlist (candidate
 * indices, fastest first, with their whole records) and the recent
 * experiments (oldest first, with theirs); a NULL record is shown from
 * the population's summary alone.  All borrowed. */
struct sel_llm_view {
	const int *best;
	json_t *const *best_recs;
	int nbest;
	const int *recent;
	json_t *const *recent_recs;
	int nrecent;
};
/* The last max experiments of the task — children (records with a parent)
 * that were timed, slow, failed or a gen_error, the last record of an id —
 * into out, oldest first; returns how many. */
int sel_llm_recent(const struct sel_pop *p, int *out, int max);
/* The prompt (malloc'd, caller frees; NULL when out of memory): counts,
 * failures by status, the shortlist with kinds, hypotheses, speedups over
 * the seed with their standard errors, per-size times and how each one's
 * children fared, the recent experiments with their outcomes and failure
 * reasons, and the picks already made this generation (text, may be
 * empty). */
char *sel_llm_prompt(const struct sel_pop *p, const struct sel_llm_view *v, const char *taken);
/* Read the model's answer: the first JSON object in the text with "base"
 * (an eligible id), optional "reference" (an eligible id, not the base) and
 * "reasoning".  0 with candidate indices (*ref -1 when none) and a copy of
 * the reasoning (caller frees); -1 + errbuf. */
int sel_llm_parse(const struct sel_pop *p, const char *answer, int *base, int *ref, char **reasoning, char *errbuf);

#endif
