/*
 * gen_mutate: the knob-search generator; see gen_mutate.h.
 *
 * The moves are listed in an order fixed by the seed, the base id and the
 * request's child index, and the first ones whose child is not yet known are
 * taken: repeated requests for one parent (the same generation's other
 * children, or later generations reading the archive) walk the whole
 * neighbourhood without repeats.  A request whose strategy names a knob
 * (kselect's bandit over knobs: strategy.knob) gets that knob's moves first,
 * so the bandit's arms are the knobs that paid off.
 */
#include "gen_mutate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mutate.h"
#include "rec.h"

/* origin.changes of a move. */
static json_t *changes_of(const struct mut_knobs *k, const struct mut_move *m)
{
	json_t *changes = json_array();
	for (int j = 0; j < m->n; j++) {
		const struct mut_knob *kb = &k->v[m->c[j].knob];
		json_array_append_new(changes, json_pack("{s:s, s:s, s:s, s:i}", "knob", kb->name, "from", kb->value, "to",
							 kb->choices[m->c[j].choice], "line", kb->line));
	}
	return changes;
}

/* 2: a single move of knob a, 1: a pair with it, 0: neither. */
static int arm_rank(const struct mut_move *m, size_t a)
{
	for (int j = 0; j < m->n; j++)
		if (m->c[j].knob == a)
			return m->n == 1 ? 2 : 1;
	return 0;
}

/* Stable: the moves of knob a first (singles, then pairs), each group in
 * its seeded order. */
static void arm_first(struct mut_move *mv, size_t n, size_t a)
{
	size_t o = 0;
	for (int want = 2; want >= 1; want--)
		for (size_t i = o; i < n; i++)
			if (arm_rank(&mv[i], a) == want) {
				struct mut_move t = mv[i];
				memmove(&mv[o + 1], &mv[o], (i - o) * sizeof *mv);
				mv[o++] = t;
			}
}

int gen_mutate_request(struct gen *g, const json_t *req)
{
	char e[ERRBUF];
	const json_t *base = json_object_get(req, "base");
	const char *src = rec_str(base, "source");
	const char *task = rec_str(req, "task"), *backend = rec_str(req, "backend");
	struct mut_knobs k;
	if (mut_parse(src, &k, e) != 0)
		return gen_emit_error(g, req, "mutate", "bad_knob", e);
	if (k.n == 0) {
		mut_free(&k);
		return gen_emit_error(g, req, "mutate", "no_knobs", "the base source marks no tunable constant (// ktune:)");
	}
	uint64_t seed = gen_request_seed(g, req);
	char bid[REC_ID_LEN + 1];
	const char *base_id = rec_str(base, "id");
	if (!base_id) {
		rec_make_id(task, backend, src, bid);
		base_id = bid;
	}
	json_t *ci = json_object_get(req, "child");
	uint64_t ms = mut_mix(mut_hash_str(seed, base_id), json_is_integer(ci) ? (uint64_t)json_integer_value(ci) : 0);
	struct mut_move *moves;
	size_t nm = mut_moves(&k, ms, &moves);
	if (nm == (size_t)-1) {
		mut_free(&k);
		return gen_emit_error(g, req, "mutate", "internal", "out of memory");
	}
	/* kselect's bandit over knobs names the knob its arm pulls
	 * (strategy.knob): the moves that change it go first, in the seeded
	 * order, its single moves before its pairs; the rest follow. */
	const char *arm = rec_str(json_object_get(req, "strategy"), "knob");
	int armk = -1;
	for (size_t i = 0; arm && i < k.n; i++)
		if (strcmp(k.v[i].name, arm) == 0)
			armk = (int)i;
	if (armk >= 0)
		arm_first(moves, nm, (size_t)armk);
	int made = 0, rc = 0;
	size_t tried = 0;
	for (size_t i = 0; i < nm && made < g->children && rc == 0; i++) {
		char *child = mut_apply(src, &k, &moves[i]);
		if (!child) {
			rc = gen_emit_error(g, req, "mutate", "internal", "out of memory");
			made = -1;
			break;
		}
		tried++;
		char id[REC_ID_LEN + 1];
		rec_make_id(task, backend, child, id);
		if (gen_seen(g, id) || strcmp(id, base_id) == 0) {
			free(child);
			continue;
		}
		json_t *c = gen_child_skeleton(req);
		json_object_set_new(c, "source", json_string(child));
		free(child);
		json_t *origin = json_pack("{s:s, s:o, s:I}", "generator", "mutate", "changes", changes_of(&k, &moves[i]),
					   "seed", (json_int_t)seed);
		json_t *st = json_object_get(req, "strategy");
		if (st)
			json_object_set(origin, "strategy", st);
		if (arm)
			json_object_set_new(origin, "knob_arm",
					    json_pack("{s:s, s:b}", "knob", arm, "changed", armk >= 0 && arm_rank(&moves[i], (size_t)armk) > 0));
		json_object_set_new(c, "origin", origin);
		rc = gen_emit_child(g, c, id);
		made++;
	}
	free(moves);
	mut_free(&k);
	if (rc == 0 && made == 0) {
		snprintf(e, sizeof e, "knob space exhausted: all %zu one- and two-knob changes are already in the archive",
			 tried);
		rc = gen_emit_error(g, req, "mutate", "exhausted", e);
	} else if (rc == 0 && made > 0 && made < g->children) {
		gen_warnf(g, "only %d of %d children: knob space exhausted", made, g->children);
	}
	return rc;
}
