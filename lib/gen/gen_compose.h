/*
 * gen_compose: the `compose` generator (kgen --generator compose) — one
 * candidate made of the archive's per-size winners, whose solve dispatches
 * on the problem size (docs/tools/kgen.md, "compose").
 *
 * Two parts: compose_source writes the composed text from variants a caller
 * chose (pure, for the unit test), and gen_compose_request reads the
 * archive for a request's task and back end, picks the variants and emits
 * the child (or a gen_error saying why there is nothing to compose).
 *
 * Ownership: the variants' sources and ids are borrowed; compose_source's
 * result is malloc'd and the caller's.  Records passed in are borrowed.
 */
#ifndef KSCI_GEN_COMPOSE_H
#define KSCI_GEN_COMPOSE_H

#include <jansson.h>

#include "gen_child.h"
#include "task.h"

/* The first line of every composed source: a composition is never taken as
 * a variant of another (its variants' names would meet twice). */
#define COMPOSE_MARK "// ksci compose:"

struct compose_variant {
	const char *id, *source;
};

/* The composed source for task t and backend ("cuda" or "hip"): variants
 * v[0..nv) each in a namespace of its own (#include lines hoisted, its
 * macros #undef'd after it, its solve renamed), and a solve that calls
 * v[pick[i]] for a problem within a factor of 2 of benchmark size i in
 * every integer scalar (sizes in task order, first match), else v[0].
 * NULL and errbuf when the back end has no namespaces or out of memory. */
char *compose_source(const struct task *t, const char *backend, const struct compose_variant *v, int nv,
		     const int *pick, char *errbuf);

/* One compose request: task, backend, generation and parents as in any
 * request; base is not needed.  The archive is g->archive_path.  0, or -1
 * when emitting failed. */
int gen_compose_request(struct gen *g, const json_t *req, long line);

#endif
