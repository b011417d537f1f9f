/*
 * gen: the dispatcher; see gen.h.
 *
 * gen_request checks a request once and hands it to one generator: the seed
 * request (base: null) to gen_seed, a base to gen_mutate or to the model
 * stages of gen_llm.  gen_load_archive fills the state the generators read:
 * the seen ids, the lab notebook and the speedups of timed records.
 *
 * The archive is read through lib/archive.h (decompression on a second
 * thread) and each line is walked with lib/jscan.h, not parsed: an archive
 * is mostly kernel sources and logs, and only the id, its speedup over the
 * seed and whether the record feeds the notebook matter here.  A line is
 * parsed by jansson only when it feeds the notebook, or when the walk cannot
 * vouch that jansson would take it (js_strict): then the parse decides, and
 * its message is the warning, exactly as when every line was parsed.
 */
#include "gen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive.h"
#include "gen_compose.h"
#include "gen_llm.h"
#include "gen_mutate.h"
#include "gen_seed.h"
#include "jscan.h"
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
	g->speedups = json_object();
}

void gen_free(struct gen *g)
{
	json_decref(g->seen);
	json_decref(g->notebook);
	json_decref(g->speedups);
	g->seen = g->notebook = g->speedups = NULL;
}

/* ---- the archive ---- */

/* Keep what a lab notebook can learn from: candidates with a measured
 * outcome and the hypothesis that produced them, and fixes (origin.fixes)
 * with theirs.  The same rule on a walked line's origin and on a parsed
 * record. */
static int notebook_worthy(struct js_span origin)
{
	struct js_span v;
	return (js_path(origin, "hypothesis", &v) == 0 && (v.p[0] == '{' || v.p[0] == '"')) ||
	       (js_path(origin, "plan.title", &v) == 0 && v.p[0] == '"') ||
	       (js_path(origin, "fixes", &v) == 0 && v.p[0] == '"');
}

static int notebook_worthy_rec(const json_t *r)
{
	json_t *h = rec_path(r, "origin.hypothesis");
	return json_is_object(h) || json_is_string(h) || json_is_string(rec_path(r, "origin.plan.title")) ||
	       json_is_string(rec_path(r, "origin.fixes"));
}

/* A timed record's speedup over the seed, for the notebook's "vs parent"
 * (the parent of an experiment need not be one itself: the seed, a mutate
 * child). */
static void note_speedup(struct gen *g, const char *id, double sp)
{
	if (id && isfinite(sp))
		json_object_set_new(g->speedups, id, json_real(sp));
}

static void see(struct gen *g, const char *id)
{
	if (id)
		json_object_set_new(g->seen, id, json_true());
}

/* The id of a walked line into the seen set (a non-string id counts not),
 * and its time.speedup_vs_seed when it has one. */
static void see_span(struct gen *g, struct js_span id, struct js_span time)
{
	char buf[256];
	long n = id.p && id.p[0] == '"' ? js_strlen(id) : -1;
	if (n < 0)
		return;
	char *s = (size_t)n < sizeof buf ? buf : malloc((size_t)n + 1);
	if (s && js_string(id, s, (size_t)n + 1) == 0) {
		struct js_span v;
		double sp;
		see(g, s);
		if (time.n && time.p[0] == '{' && js_path(time, "speedup_vs_seed", &v) == 0 && js_number(v, &sp) == 0)
			note_speedup(g, s, sp);
	}
	if (s != buf)
		free(s);
}

struct load {
	struct gen *g;
	const char *name;
};

static int load_line(void *ctx, const char *line, size_t n, long lineno, uint64_t off)
{
	static const char *const keys[] = {"id", "origin", "time"};
	struct load *l = ctx;
	struct js_span sp[3];
	char e[ERRBUF];
	size_t i = 0;
	(void)off;
	while (i < n && (line[i] == ' ' || line[i] == '\t'))
		i++;
	if (i == n)
		return 0; /* blank lines are no records */
	int walked = js_fields(line, n, keys, 3, sp, e) == 0 && js_strict(line, n);
	if (walked && !notebook_worthy(sp[1])) {
		see_span(l->g, sp[0], sp[2]);
		return 0;
	}
	/* The readers' one line rule (lib/ndjson.h): an integer beyond 64 bits
	 * is a real, not a reason to drop the record. */
	json_t *rec = nd_parse(line, n, e);
	if (!rec) {
		gen_warnf(l->g, "archive %s: line %ld: %s; line skipped", l->name, lineno, e);
		return 0;
	}
	{
		see(l->g, rec_str(rec, "id"));
		note_speedup(l->g, rec_str(rec, "id"), rec_num(json_object_get(rec, "time"), "speedup_vs_seed"));
		if (notebook_worthy_rec(rec)) {
			/* The notebook needs the outcome, not the source. */
			json_object_del(rec, "source");
			json_object_del(rec, "request");
			json_array_append(l->g->notebook, rec);
		}
	}
	json_decref(rec);
	return 0;
}

int gen_collect(struct gen *g, json_t *rec)
{
	const char *id = rec_str(rec, "id"), *st = rec_str(rec, "status");
	if (id && st && strcmp(st, ST_GENERATED) == 0) {
		if (gen_seen(g, id)) {
			char m[ERRBUF];
			snprintf(m, sizeof m, "the answer's code is that of %s, made at the same time for another request", id);
			json_object_set_new(rec, "duplicate_of", json_string(id));
			json_object_del(rec, "source");
			json_object_del(rec, "id");
			rec_fail(rec, "gen", "duplicate", ST_GEN_ERROR, m);
		} else {
			see(g, id);
		}
	}
	return g->emit(g->ctx, rec) ? -1 : 0;
}

int gen_load_archive(struct gen *g, const char *path, char *errbuf)
{
	struct ar_file *a = ar_open(path, errbuf);
	if (!a)
		return -1;
	struct load l = {g, ar_name(a)};
	int rc = ar_scan(a, load_line, &l, errbuf);
	ar_close(a);
	return rc == AR_DAMAGED ? AR_DAMAGED : rc ? -1 : 0;
}

/* ---- requests ---- */

/* Whether s is a plain name: 1..64 of letters, digits, _ and -.  A task
 * name becomes a path under the tasks root and goes into messages, so
 * "../x", a newline or a page of text never gets that far. */
static int plain_name(const char *s)
{
	size_t i;
	for (i = 0; s[i]; i++) {
		char c = s[i];
		if (i >= 64 || !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
				 c == '_' || c == '-'))
			return 0;
	}
	return i > 0;
}

/* The fields a request must have; NULL when usable, else what is wrong.
 * The message quotes no field that could hold a newline. */
static const char *request_problem(const json_t *req, int compose, char *buf, size_t n)
{
	static const char *const strs[] = {"task", "backend", NULL};
	const char *m = rec_missing_str(req, strs);
	if (m)
		return snprintf(buf, n, "missing field \"%s\"", m), buf;
	if (!plain_name(rec_str(req, "task")))
		return "field \"task\" is not a plain name (letters, digits, _ and -, at most 64)";
	const char *b = rec_str(req, "backend");
	if (!rec_backend_known(b))
		return plain_name(b) ? (snprintf(buf, n, "unknown back end \"%s\" (c, cuda or hip)", b), buf)
				     : "unknown back end (c, cuda or hip)";
	if (!json_is_integer(json_object_get(req, "generation")))
		return "missing field \"generation\"";
	if (!json_is_array(json_object_get(req, "parents")))
		return "missing field \"parents\"";
	if (compose) /* the archive's winners are its bases */
		return NULL;
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
	if (g->stages && strcmp(g->stages->stage, "findings") == 0)
		return gen_llm_findings(g, req) < 0 ? -1 : 0;
	char buf[256];
	int compose = strcmp(g->generator, "compose") == 0;
	const char *bad = request_problem(req, compose, buf, sizeof buf);
	int rc;
	if (bad)
		rc = gen_emit_invalid(g, req, line, bad);
	else if (compose)
		rc = gen_compose_request(g, req, line);
	else if (json_is_null(json_object_get(req, "base")))
		rc = gen_seed_request(g, req, line);
	else if (strcmp(g->generator, "mutate") == 0)
		rc = gen_mutate_request(g, req);
	else
		rc = gen_llm_request(g, req, line);
	return rc < 0 ? -1 : rc;
}
