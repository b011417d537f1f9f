/*
 * select: the dispatcher of lib/select/ — strategy names, the request
 * records and the loop that turns picks into them; see select.h.
 *
 * Strategies (select_best.c, select_islands.c, select_map.c,
 * select_bandit.c, select_llm.c) fill one struct sel_pick per child from
 * the ranked population (select_pop.c); this file fetches the chosen whole
 * records and writes one request per pick.  A record that cannot be re-read
 * is marked bad and the choice is made again without it.  All randomness
 * comes from one generator seeded with --seed, consumed in a fixed order,
 * so the same archive and seed give the same requests.
 */
#include "select.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec.h"
#include "select_int.h"

/* --- options ------------------------------------------------------------- */

static const char *const strategy_names[] = {"best", "tournament", "islands", "map-elites", "bandit", "llm"};

int sel_strategy_parse(const char *name)
{
	for (int i = 0; i < (int)(sizeof strategy_names / sizeof *strategy_names); i++)
		if (strcmp(name, strategy_names[i]) == 0)
			return i;
	if (strcmp(name, "best-k") == 0)
		return SEL_BEST;
	return -1;
}

const char *sel_strategy_name(enum sel_strategy s) { return strategy_names[s]; }

/* --- requests ------------------------------------------------------------ */

static json_t *population_json(const struct sel_pop *p)
{
	return json_pack("{sI,sI,sI}", "records", (json_int_t)p->records, "timed", (json_int_t)p->nelig, "failed",
	                 (json_int_t)p->failed);
}

static json_t *request(const struct sel_pop *p, const char *name, const char *reason, int child, long gen)
{
	return json_pack("{ss,ss,ss,sI,s[],so,s[],s{ss,ss,sI,sI,so},si}", "status", ST_SELECTED, "task", p->task, "backend",
	                 p->o->backend, "generation", (json_int_t)gen, "parents", "base", json_null(), "inspirations",
	                 "strategy", "name", name, "reason", reason, "seed", (json_int_t)sel_child_seed(p->o->seed, child),
	                 "run_seed", (json_int_t)p->o->seed, "population", population_json(p), "child", child);
}

static int choose(struct sel_pop *p, struct sel_pick *picks, char *errbuf)
{
	rng_seed(&p->rng, p->o->seed);
	for (int i = 0; i < p->o->population; i++)
		sel_pick_init(&picks[i]);
	switch (p->o->strategy) {
	case SEL_BEST:
		return sel_best(p, picks, errbuf);
	case SEL_TOURNAMENT:
		return sel_tournament(p, picks, errbuf);
	case SEL_ISLANDS:
		return sel_islands(p, picks, errbuf);
	case SEL_MAP:
		return sel_map(p, picks, errbuf);
	case SEL_BANDIT:
		return sel_bandit(p, picks, errbuf);
	case SEL_LLM:
		if (p->o->ask)
			return sel_llm(p, picks, errbuf);
		break;
	}
	return errf(errbuf, "--strategy llm needs a model provider (--provider ...)");
}

static void free_picks(struct sel_pick *picks, int n)
{
	for (int i = 0; i < n; i++) {
		json_decref(picks[i].info);
		picks[i].info = NULL;
	}
}

/* Hand r to emit and release it: SEL_DONE, or SEL_FATAL + errbuf when r
 * could not be built (out of memory) or emit failed. */
static int emit_one(json_t *r, sel_emit_fn emit, void *ctx, char *errbuf)
{
	if (!r)
		return errf(errbuf, "out of memory"), SEL_FATAL;
	int rc = emit(ctx, r);
	json_decref(r);
	return rc == 0 ? SEL_DONE : (errf(errbuf, "write error"), SEL_FATAL);
}

/* Fetch the whole record of every candidate the picks name into recs (kept
 * across rounds); 0, or -1 after marking the first one that failed bad. */
static int fetch_picked(struct sel_pop *p, const struct sel_pick *picks, json_t **recs)
{
	for (int i = 0; i < p->o->population; i++)
		for (int j = -1; j < picks[i].ninsp; j++) {
			int c = j < 0 ? picks[i].base : picks[i].insp[j];
			if (!recs[c] && !(recs[c] = p->fetch(p->fetch_ctx, &p->c[c]))) {
				p->c[c].bad = 1;
				return -1;
			}
		}
	return 0;
}

static json_t *pick_request(const struct sel_pop *p, const struct sel_pick *pk, int child, long gen, json_t *const *recs)
{
	json_t *r = request(p, sel_strategy_name(p->o->strategy), pk->reason, child, gen);
	if (!r)
		return NULL;
	json_t *parents = json_object_get(r, "parents"), *insp = json_object_get(r, "inspirations");
	json_array_append_new(parents, json_string(p->c[pk->base].id));
	json_object_set(r, "base", recs[pk->base]);
	for (int j = 0; j < pk->ninsp; j++) {
		json_array_append_new(parents, json_string(p->c[pk->insp[j]].id));
		json_array_append(insp, recs[pk->insp[j]]);
	}
	if (pk->info)
		json_object_update(json_object_get(r, "strategy"), pk->info);
	if (pk->island >= 0)
		json_object_set_new(r, "island", json_integer(pk->island));
	return r;
}

int sel_run(struct sel_pop *p, sel_fetch_fn fetch, sel_emit_fn emit, void *ctx, char *errbuf)
{
	struct sel_stats st;
	sel_pop_stats(p, &st);
	if (p->records == 0) {
		char reason[300];
		snprintf(reason, sizeof reason, "no candidate of task %s (back end %s) in the archive: start from the seed kernel",
		         p->task, p->o->backend);
		return emit_one(request(p, "seed", reason, 0, p->o->generation >= 0 ? p->o->generation : 0), emit, ctx, errbuf);
	}
	int P = p->o->population, left_out = 0;
	struct sel_pick *picks = calloc((size_t)P, sizeof *picks);
	json_t **recs = calloc(p->n, sizeof *recs);
	if (!picks || !recs) {
		free(picks);
		free(recs);
		return errf(errbuf, "out of memory"), SEL_FATAL;
	}
	int rc = SEL_NONE;
	p->fetch = fetch;
	p->fetch_ctx = ctx;
	for (;;) {
		if (p->nelig == 0) {
			errf(errbuf, "no timed candidate of task %s (back end %s) to select from: %ld records, %ld failed, %s",
			     p->task, p->o->backend, p->records, p->failed,
			     p->held ? "the timed ones held back as above the device's peak (time.implausible)" : "none timed");
			break;
		}
		if (choose(p, picks, errbuf) != 0)
			break;
		if (fetch_picked(p, picks, recs) != 0) {
			left_out = 1;
			free_picks(picks, P);
			sel_pop_rank(p);
			continue;
		}
		rc = SEL_DONE;
		for (int i = 0; i < P && rc == SEL_DONE; i++)
			rc = emit_one(pick_request(p, &picks[i], i, st.next_generation, recs), emit, ctx, errbuf);
		break;
	}
	free_picks(picks, P);
	for (size_t i = 0; i < p->n; i++)
		json_decref(recs[i]);
	free(recs);
	free(picks);
	return rc == SEL_DONE && left_out ? SEL_PARTIAL : rc;
}
