/*
 * select: kselect's work — read candidates from archive lines, keep the
 * population of one task and back end, and choose the parents of the next
 * generation with one of the strategies (best-k, tournament, islands,
 * MAP-Elites, UCB bandit, a language model), emitting request records
 * (docs/record.md, "Request fields"); or sum an archive up in one small
 * object (sel_sum_*, kselect --summary).
 *
 * The files of lib/select/, from the top down (arrows run down only):
 *   select.h / select.c    this public API and the dispatcher: strategy
 *                          names, sel_run (choose, fetch, build and emit
 *                          the requests);
 *   select_int.h           the strategies' entry points, for the
 *                          dispatcher and the unit tests;
 *   select_best.c          best-k and tournament;
 *   select_islands.c       the island model with ring migration;
 *   select_map.c           MAP-Elites over feature dimensions;
 *   select_bandit.c        UCB1 over optimisation arms;
 *   select_llm.c           a language model chooses base and reference;
 *   select_pop.h / .c      the base every strategy stands on: options, the
 *                          population and its ranking, the pick helpers;
 *   select_summary.h / .c  the archive summary (kselect --summary): it needs
 *                          no population, so it is a leaf over jscan.h.
 * This header includes select_pop.h (the tool fills struct sel_opts and
 * feeds the population) and select_summary.h, so that a tool includes one
 * header; the strategies include only select_int.h (which includes
 * select_pop.h) and the summary only its own header, never this one.
 *
 * Lines go in through sel_pop_line, which keeps a small summary of each
 * record (id, status, speedup, generation, island, parent, arms, features,
 * where the line is) and never the line itself; sel_run then chooses, asks
 * the caller's fetch callback for the whole records of the chosen parents,
 * and hands each request to the emit callback.  The population owns its
 * summaries; fetched records belong to sel_run, which releases them after
 * emitting; emitted requests are borrowed by the callback for the call.
 * The summary owns its counts; sel_sum_json returns a new object the caller
 * releases.  lib code never prints: problems come back in errbuf or
 * through the fetch callback, which reports them itself.
 */
#ifndef KSCI_SELECT_H
#define KSCI_SELECT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "select_pop.h"
#include "select_summary.h"

typedef int (*sel_emit_fn)(void *ctx, const json_t *rec);

/* What sel_run did.  The tool's exit code follows from this value, never
 * from the message in errbuf. */
enum sel_result {
	SEL_DONE = 0,    /* every request emitted */
	SEL_PARTIAL = 1, /* emitted, but some chosen candidate could not be
	                  * re-read and was left out (the fetch reported it) */
	SEL_NONE = -1,   /* nothing could be chosen: no timed candidate, or the
	                  * strategy failed (the model call); errbuf says why */
	SEL_FATAL = -2,  /* emit failed ("write error") or out of memory; errbuf */
};

/* Choose and emit o->population requests (or the one seed request when the
 * archive has no record of the task).  fetch returns a new reference to the
 * whole record, or NULL after reporting why (that candidate is then left
 * out and the choice made again).  Returns an enum sel_result. */
int sel_run(struct sel_pop *p, sel_fetch_fn fetch, sel_emit_fn emit, void *ctx, char *errbuf);

/* "best" -> SEL_BEST ...; -1 when unknown. */
int sel_strategy_parse(const char *name);
const char *sel_strategy_name(enum sel_strategy s);

#endif
