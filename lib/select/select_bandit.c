/*
 * select_bandit: UCB1 over optimisation arms (KernelBand style).
 *
 * An arm is what a child tried: "knob:NAME" for each knob mutate changed
 * (origin.changes[].knob, at most two), else "plan:KIND" for a model child
 * that followed a plan of that kind (origin.kind, which kgen copies from
 * the plan: docs/tools/kgen.md lists the kinds), else "gen:GENERATOR".
 * Every child in the archive whose parent (parents[0]) is a timed
 * candidate is one pull of each of its arms, with reward
 *     timed child:  clip(child_speedup / parent_speedup - 1, -1, 1)
 *     failed child (compile_error, wrong, crashed, timeout): -1
 * (children still in flight, gen_error and unsupported are not counted).
 * The arms offered are those pulled at least once and those named with
 * --arms.  The arm of the next child maximises mean + c * sqrt(ln N / n)
 * (N pulls in all, n of this arm; an arm never pulled goes first).
 * Each choice counts as a pull at the arm's mean, so the P children of one
 * generation spread over arms as UCB1's bound shrinks.  The base is a
 * tournament winner; strategy.arm (and strategy.knob) tell the generator
 * what to try: kgen's model stages write a plan of a "plan:KIND" arm's
 * kind (mutate does not read strategy.knob yet).
 */
#include "select_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec.h"

double sel_reward(double child, double parent)
{
	double r = child / parent - 1;
	return isnan(r) ? -1 : r < -1 ? -1 : r > 1 ? 1 : r;
}

int sel_bandit_pulls(struct sel_pop *p, long *n, double *sum)
{
	for (int a = 0; a < p->narm; a++)
		n[a] = 0, sum[a] = 0;
	for (size_t i = 0; i < p->n; i++) {
		const struct sel_cand *c = &p->c[i];
		if (c->tb != p->tb || c->dup || !c->narms)
			continue;
		int par = sel_find(p, c->parent);
		if (par < 0 || !p->c[par].timed)
			continue;
		double r;
		if (c->timed)
			r = sel_reward(c->speedup, p->c[par].speedup);
		else if (rec_status_failed(sel_status_name(p, c->status)))
			r = -1;
		else
			continue;
		for (int k = 0; k < c->narms; k++) {
			n[c->arm[k]]++;
			sum[c->arm[k]] += r;
		}
	}
	return 0;
}

int sel_bandit(struct sel_pop *p, struct sel_pick *picks, char *errbuf)
{
	const struct sel_opts *o = p->o;
	/* Arms named with --arms are offered even before any pull. */
	size_t nnamed = 0, maxnamed = o->arms ? strlen(o->arms) / 2 + 1 : 1;
	int *named = malloc(maxnamed * sizeof *named);
	if (!named)
		return errf(errbuf, "out of memory");
	for (const char *s = o->arms ? o->arms : ""; *s;) {
		size_t k = strcspn(s, ",");
		char name[SEL_IDLEN + 16];
		if (k && k < sizeof name && nnamed < maxnamed) {
			memcpy(name, s, k);
			name[k] = '\0';
			if ((named[nnamed++] = sel_intern_arm(p, name)) < 0) {
				free(named);
				return errf(errbuf, "out of memory");
			}
		}
		s += k + (s[k] == ',');
	}
	int A = p->narm, offered = 0;
	long *n = calloc((size_t)A + 1, sizeof *n);
	double *sum = calloc((size_t)A + 1, sizeof *sum);
	char *live = calloc((size_t)A + 1, 1);
	if (!n || !sum || !live) {
		free(n);
		free(sum);
		free(live);
		free(named);
		return errf(errbuf, "out of memory");
	}
	sel_bandit_pulls(p, n, sum);
	long N = 0;
	for (int a = 0; a < A; a++)
		N += n[a];
	/* An arm seen only on children that were no pulls (a plan call that
	 * failed, a child of an unknown parent) is not offered: never pulled,
	 * its bound would stay infinite and it would take every child. */
	for (int a = 0; a < A; a++)
		live[a] = n[a] > 0;
	for (size_t i = 0; i < nnamed; i++)
		live[named[i]] = 1;
	free(named);
	for (int a = 0; a < A; a++)
		offered += live[a];
	for (int ch = 0; ch < o->population; ch++) {
		struct sel_pick *pk = &picks[ch];
		int best = -1;
		double bs = -INFINITY;
		for (int a = 0; a < A; a++) {
			if (!live[a])
				continue;
			double s = n[a] == 0 ? INFINITY : sum[a] / n[a] + o->ucb_c * sqrt(log((double)(N > 1 ? N : 1)) / n[a]);
			if (best < 0 || s > bs)
				best = a, bs = s;
		}
		pk->base = sel_tourney(p, p->elig, p->nelig, o->tournament);
		sel_add_best(pk, p->elig, p->nelig, o->inspirations);
		if (best < 0) {
			snprintf(pk->reason, sizeof pk->reason,
			         "bandit: no arm observed yet (no child with a timed parent; --arms names some): "
			         "base by tournament of %d, %.4gx",
			         o->tournament, p->c[pk->base].speedup);
			pk->info = json_pack("{sn,si}", "arm", "arms", 0);
			continue;
		}
		const char *name = sel_arm_name(p, best);
		double mean = n[best] ? sum[best] / n[best] : 0;
		snprintf(pk->reason, sizeof pk->reason,
		         "bandit: arm %s has the highest UCB (%s; mean reward %.3g over %ld children) of %d arms; "
		         "base by tournament of %d, %.4gx",
		         name, n[best] ? "finite" : "never tried", mean, n[best], offered, o->tournament, p->c[pk->base].speedup);
		pk->info = json_pack("{ss,so,sI,sf,si}", "arm", name, "ucb", isfinite(bs) ? json_real(bs) : json_null(),
		                     "pulls", (json_int_t)n[best], "mean_reward", mean, "arms", offered);
		if (strncmp(name, "knob:", 5) == 0)
			json_object_set_new(pk->info, "knob", json_string(name + 5));
		/* a virtual pull at the arm's mean: spreads the generation over arms */
		n[best]++;
		sum[best] += mean;
		N++;
	}
	free(n);
	free(sum);
	free(live);
	return 0;
}
