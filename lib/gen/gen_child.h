/*
 * gen_child: the base every kgen generator builds on — struct gen (the
 * options the caller fills and the state the generators share), and the
 * helpers that give every child and every failure the same record shape:
 * the child skeleton, gen_error and invalid records, the request's seed,
 * warnings, and emitting a finished child.
 *
 * Why a header of its own rather than gen.h: the generators (gen_seed.c,
 * gen_mutate.c, gen_llm.c) need struct gen and these helpers, and gen.c
 * (the dispatcher) needs the generators.  Were struct gen defined in gen.h,
 * every generator would take names from the dispatcher's files and the two
 * would call each other.  Here the arrows run one way: dispatcher ->
 * generators -> gen_child.  gen.h includes this file, so a tool sees one
 * public header.
 *
 * Ownership: records passed in are borrowed; gen_child_skeleton returns a new
 * reference; gen_emit_child takes the child it is given (it decrefs it).
 * Emitted records are the callback's to write, not to keep.  Nothing here
 * prints: warnings go to the warn callback.
 */
#ifndef KSCI_GEN_CHILD_H
#define KSCI_GEN_CHILD_H

#include <jansson.h>
#include <stdint.h>

#include "err.h"

struct gen_llm_config;

typedef int (*gen_emit_fn)(void *ctx, const json_t *rec);
typedef void (*gen_warn_fn)(void *ctx, const char *msg);

struct gen {
	/* options (borrowed) */
	const char *generator; /* "mutate", "compose" or a provider name */
	const char *archive;   /* --archive (compose reads it again per request); may be NULL */
	const char *tasks;     /* tasks root; NULL or "": task_root() */
	const char *tool;      /* name for error.tool, "kgen" */
	uint64_t seed;
	int have_seed; /* else the request's strategy.seed, else 0 */
	int children;  /* children per request (>= 1) */
	const struct gen_llm_config *stages; /* model providers (lib/gen/gen_llm.h); NULL for mutate */

	/* state (owned) */
	json_t *seen;     /* ids in the archive or already emitted: object as a set */
	json_t *notebook; /* archive records kept for the lab notebook (model providers) */
	json_t *speedups; /* id -> time.speedup_vs_seed of every timed archive record (the notebook's "vs parent") */
	gen_emit_fn emit;
	gen_warn_fn warn;
	void *ctx;
};

/* The seed that drives a request's choices: --seed, else strategy.seed, else 0. */
uint64_t gen_request_seed(const struct gen *g, const json_t *req);
/* Whether id is in the archive or was emitted in this run. */
int gen_seen(const struct gen *g, const char *id);
/* A message through the warn callback (none set: dropped). */
void gen_warnf(const struct gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A child record skeleton from a request: request fields minus
 * base/inspirations/strategy/status/id (new reference). */
json_t *gen_child_skeleton(const json_t *req);
/* Turn skel into a gen_error record for req with reason word and message. */
void gen_set_error(json_t *skel, const json_t *req, const char *generator, const char *reason, const char *msg);
/* Give child (a skeleton with source and origin set) its id (computed when
 * id is NULL) and status "generated", add the id to the seen set, emit it
 * and drop it.  0, or -1 when emitting failed. */
int gen_emit_child(struct gen *g, json_t *child, const char *id);
/* Emit req as a gen_error record.  0 or -1 (emitting failed). */
int gen_emit_error(struct gen *g, const json_t *req, const char *generator, const char *reason, const char *msg);
/* Emit a copy of req marked "invalid" (error.line, msg) and warn with msg.
 * 1 (the request was bad input), or -1 when emitting failed. */
int gen_emit_invalid(struct gen *g, const json_t *req, long line, const char *msg);

#endif
