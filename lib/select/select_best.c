/*
 * select_best: the two plain strategies.  best-k cycles the children over
 * the K fastest eligible parents (ranked by select_pop), each taking the
 * fastest others as inspirations; tournament gives every base and every
 * inspiration to the winner of its own tournament of --tournament-size
 * candidates drawn with replacement.
 */
#include "select_int.h"

#include <stdio.h>

int sel_best(struct sel_pop *p, struct sel_pick *picks, char *errbuf)
{
	(void)errbuf;
	int k = p->o->k < p->nelig ? p->o->k : p->nelig;
	for (int i = 0; i < p->o->population; i++) {
		struct sel_pick *pk = &picks[i];
		pk->base = p->elig[i % k];
		sel_add_best(pk, p->elig, p->nelig, p->o->inspirations);
		snprintf(pk->reason, sizeof pk->reason,
		         "best-k: rank %d of the top %d by speedup_vs_baseline (%.4gx) among %d timed candidates", i % k + 1,
		         k, p->c[pk->base].speedup, p->nelig);
		pk->info = json_pack("{si,si}", "k", k, "rank", i % k + 1);
	}
	return 0;
}

int sel_tournament(struct sel_pop *p, struct sel_pick *picks, char *errbuf)
{
	(void)errbuf;
	int t = p->o->tournament;
	for (int i = 0; i < p->o->population; i++) {
		struct sel_pick *pk = &picks[i];
		pk->base = sel_tourney(p, p->elig, p->nelig, t);
		/* Inspirations win their own tournaments; a few retries avoid the base. */
		for (int j = 0; j < p->o->inspirations && pk->ninsp < SEL_MAXINSP; j++)
			for (int tries = 0; tries < 8; tries++)
				if (sel_pick_add(pk, sel_tourney(p, p->elig, p->nelig, t)))
					break;
		snprintf(pk->reason, sizeof pk->reason,
		         "tournament of %d among %d timed candidates: won with speedup_vs_baseline %.4gx", t, p->nelig,
		         p->c[pk->base].speedup);
		pk->info = json_pack("{si}", "size", t);
	}
	return 0;
}

