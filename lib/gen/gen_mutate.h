/*
 * gen_mutate: the built-in offline generator — children of a request's base
 * that move one or two of its "ktune:" knobs (lib/gen/mutate.h does the knob
 * parsing and the move order; docs/tools/kgen.md the syntax and the record).
 *
 * Records go out through the gen's emit callback; nothing returned here is
 * owned by the caller.
 */
#ifndef KSCI_GEN_MUTATE_H
#define KSCI_GEN_MUTATE_H

#include "gen_child.h"

/* Up to g->children children of req (a checked request with a base), or
 * one gen_error (bad_knob, no_knobs, exhausted, internal).  0, or -1 when
 * emitting failed. */
int gen_mutate_request(struct gen *g, const json_t *req);

#endif
