/*
 * gen_seed: the seed request — a request with "base": null is answered with
 * the task's seed kernel for its back end (task.json "seed", read through
 * lib/task.h), as generation 0 with no parents (docs/tools/kgen.md).
 *
 * gen_seed_source returns malloc'd text the caller frees; gen_seed_request
 * emits through the gen's callback and keeps nothing.
 */
#ifndef KSCI_GEN_SEED_H
#define KSCI_GEN_SEED_H

#include "gen_child.h"

/* Seed file text for task/backend under the tasks root (NULL: task_root()),
 * or NULL with *reason ("unknown_task": no such task or its task.json is
 * invalid; "no_seed") and errbuf. */
char *gen_seed_source(const char *tasks, const char *task, const char *backend, const char **reason,
		      char *errbuf);
/* Emit the seed child, or a gen_error.  0 done, 1 the request named an
 * unknown task (emitted "invalid"), -1 emitting failed. */
int gen_seed_request(struct gen *g, const json_t *req, long line);

#endif
