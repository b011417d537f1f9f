/*
 * report_stats: one pass per task over its candidates, which rp_finish left
 * sorted by generation and input order — the order in which the search saw
 * them, so "best so far" and "improvement" are running maxima over it.
 */
#include "report_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rec.h"

const double rp_fast_p[RP_NFAST] = {0, 1, 1.5, 2};
const char *const rp_st_name[RP_NST] = {ST_COMPILE_ERROR, ST_WRONG, ST_CRASHED, ST_TIMEOUT, ST_TIMED, ST_SLOW, "other"};

double rp_per(double total, long n)
{
	return n > 0 ? total / (double)n : NAN;
}

static int st_index(const char *s)
{
	for (int i = 0; s && i < RP_ST_OTHER; i++)
		if (strcmp(s, rp_st_name[i]) == 0)
			return i;
	return RP_ST_OTHER;
}

/* A candidate that can win: timed, with a positive finite speedup. */
static int eligible(const struct rp_cand *c)
{
	return c->status && strcmp(c->status, ST_TIMED) == 0 && isfinite(c->sp_base) && c->sp_base > 0;
}

int rp_cost_has_money(const struct rp_cost *k)
{
	return k->priced > 0 || k->calls > k->unpriced_calls;
}

/* Calls priced one by one (lib/price.h's accounting). */
static void add_calls(struct rp_cost *k, const struct price_acct *a)
{
	k->tok_in += a->tok_in;
	k->tok_out += a->tok_out;
	k->money += a->cost;
	k->calls += a->calls;
	k->cached += a->cached;
	k->unpriced_calls += a->unpriced;
	k->cached_in += a->cached_in;
	k->cached_out += a->cached_out;
	k->saved += a->saved;
}

static void add_cost(struct rp_cost *k, const struct rp_cand *c, const struct price_table *prices)
{
	k->seconds += c->seconds;
	if (c->sel_call && !c->sel_dup) {
		add_calls(k, &c->sel);
		k->sel_calls += c->sel.calls;
	}
	if (c->per_call) {
		add_calls(k, &c->acct);
		if (c->acct.unpriced)
			k->unpriced++;
		else if (c->acct.calls > c->acct.cached)
			k->priced++;
		return;
	}
	k->tok_in += c->tok_in;
	k->tok_out += c->tok_out;
	double m = c->cost;
	if (!isfinite(m) && (c->tok_in > 0 || c->tok_out > 0)) {
		m = prices ? price_of(prices, c->model, c->generator, c->tok_in, c->tok_out) : NAN;
		if (!isfinite(m)) {
			k->unpriced++;
			return;
		}
	}
	if (isfinite(m)) {
		k->money += m;
		k->priced++;
	}
}

static void sum_cost(struct rp_cost *to, const struct rp_cost *k)
{
	to->tok_in += k->tok_in;
	to->tok_out += k->tok_out;
	to->money += k->money;
	to->priced += k->priced;
	to->unpriced += k->unpriced;
	to->seconds += k->seconds;
	to->calls += k->calls;
	to->sel_calls += k->sel_calls;
	to->cached += k->cached;
	to->unpriced_calls += k->unpriced_calls;
	to->cached_in += k->cached_in;
	to->cached_out += k->cached_out;
	to->saved += k->saved;
}

static int lineage(struct rp_task *t, const struct rp_data *d)
{
	size_t cap = 8, n = 0;
	const struct rp_cand **chain = malloc(cap * sizeof *chain);
	if (!chain)
		return -1;
	const struct rp_cand *c = t->best;
	while (c) {
		if (n > d->n) { /* longer than the archive: the parents loop */
			t->cycle = 1;
			break;
		}
		if (n == cap) {
			cap *= 2;
			const struct rp_cand **nc = realloc(chain, cap * sizeof *nc);
			if (!nc) {
				free(chain);
				return -1;
			}
			chain = nc;
		}
		chain[n++] = c;
		if (c->nparents == 0)
			break;
		const struct rp_cand *p = rp_find(d, c->parents[0]);
		if (!p)
			t->missing_parent = c->parents[0];
		c = p;
	}
	t->lineage = calloc(n ? n : 1, sizeof *t->lineage);
	if (!t->lineage) {
		free(chain);
		return -1;
	}
	t->nlineage = n;
	for (size_t i = 0; i < n; i++) {
		struct rp_step *s = &t->lineage[i];
		s->c = chain[n - 1 - i];
		s->effect = NAN;
		if (i > 0) {
			double a = t->lineage[i - 1].c->sp_base, b = s->c->sp_base;
			if (isfinite(a) && a > 0 && isfinite(b))
				s->effect = b / a;
		}
	}
	free(chain);
	return 0;
}

/* Candidates [lo, hi) of d->c all belong to task t. */
static int one_task(struct rp_task *t, const struct rp_data *d, size_t lo, size_t hi, const struct price_table *prices)
{
	t->name = d->c[lo]->task;
	t->candidates = (long)(hi - lo);
	t->gens = calloc(hi - lo, sizeof *t->gens);
	if (!t->gens)
		return -1;
	double best = NAN;
	for (size_t i = lo; i < hi; i++) {
		const struct rp_cand *c = d->c[i];
		if (t->ngens == 0 || t->gens[t->ngens - 1].gen != c->gen) {
			t->gens[t->ngens].gen = c->gen;
			t->gens[t->ngens].best = best;
			t->ngens++;
		}
		struct rp_genrow *g = &t->gens[t->ngens - 1];
		g->total++;
		g->st[st_index(c->status)]++;
		t->held += c->status && strcmp(c->status, "implausible") == 0;
		add_cost(&t->cost, c, prices);
		if (!eligible(c))
			continue;
		if (isnan(best) || c->sp_base > best) {
			if (!isnan(best))
				t->improvements++;
			best = c->sp_base;
			t->best = c;
		}
		g->best = best;
	}
	return t->best ? lineage(t, d) : 0;
}

int rp_report_make(struct rp_report *r, const struct rp_data *d, const struct price_table *prices, char *errbuf)
{
	memset(r, 0, sizeof *r);
	r->data = d;
	r->geomean = NAN;
	r->tasks = calloc(d->n ? d->n : 1, sizeof *r->tasks);
	if (!r->tasks)
		return errf(errbuf, "out of memory");
	double logsum = 0;
	for (size_t lo = 0, hi; lo < d->n; lo = hi) {
		hi = lo + 1;
		if (!d->c[lo]->task) {
			struct rp_cost k = {0};
			add_cost(&k, d->c[lo], prices);
			sum_cost(&r->cost, &k);
			r->no_task++;
			continue;
		}
		while (hi < d->n && d->c[hi]->task && strcmp(d->c[hi]->task, d->c[lo]->task) == 0)
			hi++;
		struct rp_task *t = &r->tasks[r->ntasks++];
		if (one_task(t, d, lo, hi, prices) < 0) {
			rp_report_free(r);
			return errf(errbuf, "out of memory");
		}
		sum_cost(&r->cost, &t->cost);
		r->improvements += t->improvements;
		if (!t->best)
			continue;
		r->solved++;
		logsum += log(t->best->sp_base);
		for (int k = 0; k < RP_NFAST; k++)
			r->fast_n[k] += t->best->sp_base > rp_fast_p[k];
	}
	if (r->solved)
		r->geomean = exp(logsum / (double)r->solved);
	return 0;
}

void rp_report_free(struct rp_report *r)
{
	for (size_t i = 0; i < r->ntasks; i++) {
		free(r->tasks[i].lineage);
		free(r->tasks[i].gens);
	}
	free(r->tasks);
	memset(r, 0, sizeof *r);
}
