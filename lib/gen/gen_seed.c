/*
 * gen_seed: the seed request; see gen_seed.h.
 *
 * An unknown task is bad input (the request is "invalid" and kgen exits 1);
 * a known task without a seed for the back end is a generator result
 * ("gen_error" / "no_seed"), since kselect cannot know which back ends a
 * task seeds.
 */
#include "gen_seed.h"

#include <stdlib.h>
#include <string.h>

#include "rec.h"
#include "task.h"

char *gen_seed_source(const char *tasks, const char *task, const char *backend, const char **reason, char *errbuf)
{
	*reason = "unknown_task";
	const struct task *t = task_get(tasks, task, errbuf);
	if (!t)
		return NULL;
	*reason = "no_seed";
	return task_read(t, "seed", backend, errbuf);
}

int gen_seed_request(struct gen *g, const json_t *req, long line)
{
	char e[ERRBUF];
	const char *reason;
	char *src = gen_seed_source(g->tasks, rec_str(req, "task"), rec_str(req, "backend"), &reason, e);
	if (!src && strcmp(reason, "unknown_task") == 0)
		return gen_emit_invalid(g, req, line, e);
	if (!src)
		return gen_emit_error(g, req, "seed", reason, e);
	json_t *c = gen_child_skeleton(req);
	json_object_set_new(c, "generation", json_integer(0));
	json_object_set_new(c, "parents", json_array());
	json_object_set_new(c, "source", json_string(src));
	free(src);
	if (!json_is_string(json_object_get(c, "source"))) {
		json_decref(c);
		return gen_emit_error(g, req, "seed", "bad_source", "seed kernel is not valid UTF-8");
	}
	json_object_set_new(c, "origin", json_pack("{s:s}", "generator", "seed"));
	return gen_emit_child(g, c, NULL);
}
