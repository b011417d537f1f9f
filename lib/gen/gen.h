/*
 * gen: kgen's work — turn one request record (status "selected") into child
 * candidate records, with the seed kernel, the built-in mutate generator or
 * a language-model provider.  The files of lib/gen/:
 *
 *   gen.c/gen.h        this dispatcher: gen_init/gen_free, gen_load_archive,
 *                      gen_request routing each request to a generator and
 *                      failed candidates to the fix stage
 *   gen_seed.c/.h      the seed request (base: null): the task's seed kernel
 *   gen_mutate.c/.h    the mutate generator: one- and two-knob moves
 *   gen_compose.c/.h   the compose generator: the archive's per-size winners
 *                      in one candidate that dispatches on the size
 *   gen_llm.c/.h       the model generators: plan, write, fix (lib/llm.h)
 *   gen_child.c/.h     the base the generators share: struct gen, the child
 *                      skeleton, gen_error/invalid records, emitting
 *   mutate.c/.h        knob parsing and move order (for gen_mutate)
 *   prompt.c/.h        templates, knowledge and the lab notebook (gen_llm)
 *   facts.c/.h         the device, timings and resources as prompt text (gen_llm)
 *   extract.c/.h       code out of a model's answer (gen_llm)
 *
 * Calls run dispatcher -> generators -> gen_child, never back.  struct gen
 * is defined in gen_child.h (the generators need it and must not depend on
 * the dispatcher); this header includes it so that a tool includes gen.h
 * (and gen_llm.h for the model options) and nothing else.
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

#include "err.h"
#include "gen_child.h"

/* Defaults (tool "kgen", one child, the tasks root) and empty state. */
void gen_init(struct gen *g);
/* Read an archive (plain or gzip NDJSON): ids go into the seen set, records
 * with an origin.hypothesis, origin.plan.title or origin.fixes feed the
 * notebook, and every time.speedup_vs_seed goes into g->speedups.
 * Unreadable lines are skipped with a warning.  -1 and errbuf if the file
 * cannot be opened or read; AR_DAMAGED (lib/archive.h) and errbuf when the
 * gzip archive is torn or truncated. */
int gen_load_archive(struct gen *g, const char *path, char *errbuf);
/* One input record at line `line`.  Records not in status "selected" pass
 * through unchanged (failed candidates go to the fix stage when it is on).
 * Returns 0; 1 when the request was invalid (it was emitted as "invalid");
 * -1 when emitting failed (stop). */
int gen_request(struct gen *g, json_t *req, long line);
/* kgen -j: a record one of the worker processes made, back in the process
 * that holds the run's seen set (the workers could not share theirs).  A
 * child whose id was already made in this run becomes a gen_error
 * "duplicate" (its origin, with the calls it was charged, kept); any other
 * child's id joins the set.  Emits it.  0, or -1 when emitting failed. */
int gen_collect(struct gen *g, json_t *rec);
void gen_free(struct gen *g);

#endif
