/*
 * gen: kgen's work — turn one request record (status "selected") into child
 * candidate records, with the seed kernel, the built-in mutate generator or
 * a language-model provider (lib/llm.h via lib/gen/gen_llm.h).
 *
 * The caller fills a struct gen (options), calls gen_init, optionally
 * gen_load_archive, then gen_request for each record read, and gen_free.
 * Children are handed to an emit callback and are owned by gen (the callback
 * must not keep them; it writes them out).  Every request ends as at least
 * one emitted record: children ("generated"), or the request turned into a
 * "gen_error" (generator failed, reason word in gen.status) or "invalid"
 * (unusable request) record.  gen never prints: problems worth telling a
 * person go through the warn callback.
 */
#ifndef KSCI_GEN_H
#define KSCI_GEN_H

#include <jansson.h>
#include <stdint.h>

#include "err.h"

struct llm_config;
struct gen_llm_config;

typedef int (*gen_emit_fn)(void *ctx, const json_t *rec);
typedef void (*gen_warn_fn)(void *ctx, const char *msg);

struct gen {
	/* options (borrowed) */
	const char *generator; /* "mutate" or a provider name */
	const char *tasks;     /* tasks root */
	const char *tool;      /* name for error.tool, "kgen" */
	uint64_t seed;
	int have_seed; /* else the request's strategy.seed, else 0 */
	int children;  /* children per request (>= 1) */
	const struct gen_llm_config *stages; /* model providers; NULL for mutate */

	/* state (owned) */
	json_t *seen;     /* ids in the archive or already emitted: object as a set */
	json_t *notebook; /* archive records kept for the lab notebook (model providers) */
	gen_emit_fn emit;
	gen_warn_fn warn;
	void *ctx;
};

void gen_init(struct gen *g);
/* Read an archive (plain or gzip NDJSON): ids go into the seen set, records
 * with an origin.hypothesis or a time/verify result feed the notebook.
 * Unreadable lines are skipped with a warning.  -1 and errbuf if the file
 * cannot be opened. */
int gen_load_archive(struct gen *g, const char *path, char *errbuf);
/* One input record at line `line`.  Records not in status "selected" pass
 * through unchanged.  Returns 0; 1 when the request was invalid (it was
 * emitted as "invalid"); -1 when emitting failed (stop). */
int gen_request(struct gen *g, json_t *req, long line);
void gen_free(struct gen *g);

/* The seed that drives a request's choices: --seed, else strategy.seed, else 0. */
uint64_t gen_request_seed(const struct gen *g, const json_t *req);
/* Tasks root: explicit, else $KSCI_TASKS, else KSCI_DATADIR "/tasks". */
const char *gen_tasks_root(const char *opt);
/* Seed file text for task/backend (malloc'd, caller frees) or NULL with
 * *reason ("unknown_task" or "no_seed") and errbuf. */
char *gen_seed_source(const char *tasks, const char *task, const char *backend, const char **reason,
		      char *errbuf);
/* A child record skeleton from a request: request fields minus
 * base/inspirations/strategy/status (new reference). */
json_t *gen_child_skeleton(const json_t *req);
/* Turn skel into a gen_error record for req with reason word and message. */
void gen_set_error(json_t *skel, const json_t *req, const char *generator, const char *reason, const char *msg);

#endif
