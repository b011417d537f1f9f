/*
 * gen: requests in, candidates out; see gen.h.
 *
 * The seed request and the mutate generator live here; model providers are
 * delegated to lib/gen/gen_llm.c, which shares the skeleton/error helpers below
 * so that every generator writes the same record shape.  Duplicate
 * avoidance is by id (docs/record.md): an id already in the archive or
 * already emitted in this run is never emitted again.
 */
#include "gen.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "mutate.h"
#include "ndjson.h"
#include "rec.h"
#include "gen_llm.h"

#ifndef KSCI_DATADIR
#define KSCI_DATADIR "data"
#endif

void gen_init(struct gen *g)
{
	if (!g->tool)
		g->tool = "kgen";
	if (g->children < 1)
		g->children = 1;
	g->seen = json_object();
	g->notebook = json_array();
}

void gen_free(struct gen *g)
{
	json_decref(g->seen);
	json_decref(g->notebook);
	g->seen = g->notebook = NULL;
}

const char *gen_tasks_root(const char *opt)
{
	static char def[4096];
	if (opt && *opt)
		return opt;
	const char *e = getenv("KSCI_TASKS");
	if (e && *e)
		return e;
	snprintf(def, sizeof def, "%s/tasks", KSCI_DATADIR);
	return def;
}

static void warnf(struct gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warnf(struct gen *g, const char *fmt, ...)
{
	char m[ERRBUF];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m, sizeof m, fmt, ap);
	va_end(ap);
	if (g->warn)
		g->warn(g->ctx, m);
}

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
			warnf(g, "archive %s; line skipped", e);
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

static char *read_file(const char *path, char *errbuf)
{
	char *b;
	return cache_read_file(path, &b, NULL, errbuf) < 0 ? NULL : b;
}

static int safe_name(const char *s)
{
	return *s && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

char *gen_seed_source(const char *tasks, const char *task, const char *backend, const char **reason, char *errbuf)
{
	char path[4096];
	*reason = "unknown_task";
	if (!safe_name(task)) {
		errf(errbuf, "unknown task \"%s\"", task);
		return NULL;
	}
	snprintf(path, sizeof path, "%s/%s/task.json", tasks, task);
	json_error_t je;
	json_t *tj = json_load_file(path, 0, &je);
	if (!tj) {
		errf(errbuf, "unknown task \"%s\": %s: %s", task, path, je.text);
		return NULL;
	}
	*reason = "no_seed";
	const char *file = json_string_value(json_object_get(json_object_get(tj, "seed"), backend));
	char *src = NULL;
	if (!file || !safe_name(file)) {
		errf(errbuf, "task \"%s\" has no seed kernel for back end \"%s\"", task, backend);
	} else {
		snprintf(path, sizeof path, "%s/%s/%s", tasks, task, file);
		src = read_file(path, errbuf);
	}
	json_decref(tj);
	return src;
}

json_t *gen_child_skeleton(const json_t *req)
{
	json_t *c = json_copy((json_t *)req);
	json_object_del(c, "base");
	json_object_del(c, "inspirations");
	json_object_del(c, "strategy");
	json_object_del(c, "status");
	json_object_del(c, "id");
	return c;
}

void gen_set_error(json_t *skel, const json_t *req, const char *generator, const char *reason, const char *msg)
{
	json_t *o = json_object_get(skel, "origin");
	if (!json_is_object(o)) {
		o = json_object();
		json_object_set_new(skel, "origin", o);
	}
	json_object_set_new(o, "generator", json_string(generator));
	json_t *st = json_object_get(req, "strategy");
	if (st && !json_object_get(o, "strategy"))
		json_object_set(o, "strategy", st);
	json_object_del(skel, "source");
	json_object_del(skel, "id");
	rec_fail(skel, "gen", reason, ST_GEN_ERROR, msg);
	json_object_set(skel, "request", (json_t *)req);
}

static int emit_error(struct gen *g, const json_t *req, const char *generator, const char *reason, const char *msg)
{
	json_t *c = gen_child_skeleton(req);
	gen_set_error(c, req, generator, reason, msg);
	int rc = g->emit(g->ctx, c);
	json_decref(c);
	return rc;
}

/* 0 done, 1 the request named an unknown task (emitted invalid), -1 write error */
static int do_seed(struct gen *g, const json_t *req, long line)
{
	char e[ERRBUF];
	const char *reason;
	const char *task = rec_str(req, "task"), *backend = rec_str(req, "backend");
	char *src = gen_seed_source(g->tasks, task, backend, &reason, e);
	if (!src && strcmp(reason, "unknown_task") == 0) {
		json_t *c = json_copy((json_t *)req);
		rec_invalid(c, g->tool, line, e);
		int rc = g->emit(g->ctx, c);
		json_decref(c);
		warnf(g, "%s", e);
		return rc ? -1 : 1;
	}
	if (!src)
		return emit_error(g, req, "seed", reason, e);
	json_t *c = gen_child_skeleton(req);
	json_object_set_new(c, "generation", json_integer(0));
	json_object_set_new(c, "parents", json_array());
	json_object_set_new(c, "source", json_string(src));
	free(src);
	if (!json_is_string(json_object_get(c, "source"))) {
		json_decref(c);
		return emit_error(g, req, "seed", "bad_source", "seed kernel is not valid UTF-8");
	}
	json_object_set_new(c, "origin", json_pack("{s:s}", "generator", "seed"));
	rec_set_id(c);
	rec_set_status(c, ST_GENERATED);
	json_object_set_new(g->seen, rec_str(c, "id"), json_true());
	int rc = g->emit(g->ctx, c);
	json_decref(c);
	return rc;
}

uint64_t gen_request_seed(const struct gen *g, const json_t *req)
{
	if (g->have_seed)
		return g->seed;
	json_t *s = rec_path(req, "strategy.seed");
	return json_is_integer(s) ? (uint64_t)json_integer_value(s) : 0;
}

static int do_mutate(struct gen *g, const json_t *req)
{
	char e[ERRBUF];
	const json_t *base = json_object_get(req, "base");
	const char *src = rec_str(base, "source");
	const char *task = rec_str(req, "task"), *backend = rec_str(req, "backend");
	struct mut_knobs k;
	if (mut_parse(src, &k, e) != 0)
		return emit_error(g, req, "mutate", "bad_knob", e);
	if (k.n == 0) {
		mut_free(&k);
		return emit_error(g, req, "mutate", "no_knobs", "the base source marks no tunable constant (// ktune:)");
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
		return emit_error(g, req, "mutate", "internal", "out of memory");
	}
	int made = 0, rc = 0;
	size_t tried = 0;
	for (size_t i = 0; i < nm && made < g->children && rc == 0; i++) {
		char *child = mut_apply(src, &k, &moves[i]);
		if (!child) {
			rc = emit_error(g, req, "mutate", "internal", "out of memory");
			made = -1;
			break;
		}
		tried++;
		char id[REC_ID_LEN + 1];
		rec_make_id(task, backend, child, id);
		if (json_object_get(g->seen, id) || strcmp(id, base_id) == 0) {
			free(child);
			continue;
		}
		json_t *changes = json_array();
		for (int j = 0; j < moves[i].n; j++) {
			const struct mut_knob *kb = &k.v[moves[i].c[j].knob];
			json_array_append_new(changes, json_pack("{s:s, s:s, s:s, s:i}", "knob", kb->name, "from", kb->value,
								 "to", kb->choices[moves[i].c[j].choice], "line", kb->line));
		}
		json_t *c = gen_child_skeleton(req);
		json_object_set_new(c, "source", json_string(child));
		free(child);
		json_t *origin = json_pack("{s:s, s:o, s:I}", "generator", "mutate", "changes", changes, "seed",
					   (json_int_t)seed);
		json_t *st = json_object_get(req, "strategy");
		if (st)
			json_object_set(origin, "strategy", st);
		json_object_set_new(c, "origin", origin);
		json_object_set_new(c, "id", json_string(id));
		rec_set_status(c, ST_GENERATED);
		json_object_set_new(g->seen, id, json_true());
		rc = g->emit(g->ctx, c);
		json_decref(c);
		made++;
	}
	free(moves);
	mut_free(&k);
	if (rc == 0 && made == 0) {
		snprintf(e, sizeof e, "knob space exhausted: all %zu one- and two-knob changes are already in the archive",
			 tried);
		rc = emit_error(g, req, "mutate", "exhausted", e);
	} else if (rc == 0 && made > 0 && made < g->children) {
		warnf(g, "only %d of %d children: knob space exhausted", made, g->children);
	}
	return rc;
}

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
	const char *st = rec_str(req, "status");
	if (gen_llm_wants_fix(g, req))
		return gen_llm_fix_record(g, req) ? -1 : 0;
	if (!st || strcmp(st, ST_SELECTED) != 0)
		return g->emit(g->ctx, req) ? -1 : 0;
	char buf[256];
	const char *bad = request_problem(req, buf, sizeof buf);
	if (bad) {
		json_t *c = json_copy(req);
		rec_invalid(c, g->tool, line, bad);
		int rc = g->emit(g->ctx, c);
		json_decref(c);
		warnf(g, "%s", bad);
		return rc ? -1 : 1;
	}
	int rc;
	if (json_is_null(json_object_get(req, "base")))
		return do_seed(g, req, line);
	if (strcmp(g->generator, "mutate") == 0)
		rc = do_mutate(g, req);
	else
		rc = gen_llm_request(g, req, line);
	return rc < 0 ? -1 : rc;
}
