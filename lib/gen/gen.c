/*
 * gen: the dispatcher; see gen.h.
 *
 * gen_request checks a request once and hands it to one generator: the seed
 * request (base: null) to gen_seed, a base to gen_mutate or to the model
 * stages of gen_llm.  gen_load_archive fills the state the generators read:
 * the seen ids and the lab notebook.
 */
#include "gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_llm.h"
#include "gen_mutate.h"
#include "gen_seed.h"
#include "ndjson.h"
#include "rec.h"
#include "task.h"

void gen_init(struct gen *g)
{
	if (!g->tool)
		g->tool = "kgen";
	if (g->children < 1)
		g->children = 1;
	if (!g->tasks || !*g->tasks)
		g->tasks = task_root();
	g->seen = json_object();
	g->notebook = json_array();
}

void gen_free(struct gen *g)
{
	json_decref(g->seen);
	json_decref(g->notebook);
	g->seen = g->notebook = NULL;
}

/* ---- the archive ---- */

/* Keep what a lab notebook can learn from: candidates with a measured
 * outcome and the hypothesis that produced them. */
static int notebook_worthy(const json_t *r)
{
	return json_is_object(rec_path(r, "origin.hypothesis")) || json_is_string(rec_path(r, "origin.hypothesis")) ||
	       json_is_string(rec_path(r, "origin.plan.title"));
}

int gen_load_archive(struct gen *g, const char *path, char *errbuf)
{
	struct nd_reader *r = nd_open(path, errbuf);
	if (!r)
		return -1;
	for (;;) {
		json_t *rec;
		char e[ERRBUF];
		int rc = nd_next(r, &rec, e);
		if (rc == 0)
			break;
		if (rc == -2) {
			nd_close(r);
			return errf(errbuf, "%s", e);
		}
		if (rc < 0) {
			gen_warnf(g, "archive %s; line skipped", e);
			continue;
		}
		const char *id = rec_str(rec, "id");
		if (id)
			json_object_set_new(g->seen, id, json_true());
		if (notebook_worthy(rec)) {
			/* The notebook needs the outcome, not the source. */
			json_t *slim = json_deep_copy(rec);
			json_object_del(slim, "source");
			json_object_del(slim, "request");
			json_array_append_new(g->notebook, slim);
		}
		json_decref(rec);
	}
	nd_close(r);
	return 0;
}

/* ---- requests ---- */

/* The fields a request must have; NULL when usable, else what is wrong. */
static const char *request_problem(const json_t *req, char *buf, size_t n)
{
	static const char *const strs[] = {"task", "backend", NULL};
	const char *m = rec_missing_str(req, strs);
	if (m)
		return snprintf(buf, n, "missing field \"%s\"", m), buf;
	if (!json_is_integer(json_object_get(req, "generation")))
		return "missing field \"generation\"";
	if (!json_is_array(json_object_get(req, "parents")))
		return "missing field \"parents\"";
	json_t *base = json_object_get(req, "base");
	if (!base)
		return "missing field \"base\"";
	if (!json_is_null(base) && !json_is_object(base))
		return "field \"base\" is neither an object nor null";
	if (json_is_object(base) && !json_is_string(json_object_get(base, "source")))
		return "missing field \"base.source\"";
	return NULL;
}

int gen_request(struct gen *g, json_t *req, long line)
{
	if (gen_llm_wants_fix(g, req))
		return gen_llm_fix_record(g, req) ? -1 : 0;
	const char *st = rec_str(req, "status");
	if (!st || strcmp(st, ST_SELECTED) != 0)
		return g->emit(g->ctx, req) ? -1 : 0;
	char buf[256];
	const char *bad = request_problem(req, buf, sizeof buf);
	int rc;
	if (bad)
		rc = gen_emit_invalid(g, req, line, bad);
	else if (json_is_null(json_object_get(req, "base")))
		rc = gen_seed_request(g, req, line);
	else if (strcmp(g->generator, "mutate") == 0)
		rc = gen_mutate_request(g, req);
	else
		rc = gen_llm_request(g, req, line);
	return rc < 0 ? -1 : rc;
}
