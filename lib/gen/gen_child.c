/*
 * gen_child: the record shapes every generator shares; see gen_child.h.
 *
 * Duplicate avoidance is by id (docs/record.md): an id already in the
 * archive or already emitted in this run is never emitted again, which is
 * why every child goes out through gen_emit_child.
 */
#include "gen_child.h"

#include <stdarg.h>
#include <stdio.h>

#include "rec.h"

uint64_t gen_request_seed(const struct gen *g, const json_t *req)
{
	if (g->have_seed)
		return g->seed;
	json_t *s = rec_path(req, "strategy.seed");
	return json_is_integer(s) ? (uint64_t)json_integer_value(s) : 0;
}

int gen_seen(const struct gen *g, const char *id) { return json_object_get(g->seen, id) != NULL; }

void gen_warnf(const struct gen *g, const char *fmt, ...)
{
	char m[ERRBUF];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m, sizeof m, fmt, ap);
	va_end(ap);
	if (g->warn)
		g->warn(g->ctx, m);
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

static int emit_drop(struct gen *g, json_t *rec)
{
	int rc = g->emit(g->ctx, rec);
	json_decref(rec);
	return rc ? -1 : 0;
}

int gen_emit_child(struct gen *g, json_t *child, const char *id)
{
	if (id)
		json_object_set_new(child, "id", json_string(id));
	else
		rec_set_id(child);
	rec_set_status(child, ST_GENERATED);
	json_object_set_new(g->seen, rec_str(child, "id"), json_true());
	return emit_drop(g, child);
}

int gen_emit_error(struct gen *g, const json_t *req, const char *generator, const char *reason, const char *msg)
{
	json_t *c = gen_child_skeleton(req);
	gen_set_error(c, req, generator, reason, msg);
	return emit_drop(g, c);
}

int gen_emit_invalid(struct gen *g, const json_t *req, long line, const char *msg)
{
	json_t *c = json_copy((json_t *)req);
	rec_invalid(c, g->tool, line, msg);
	int rc = emit_drop(g, c);
	gen_warnf(g, "%s", msg);
	return rc ? -1 : 1;
}
