/*
 * stages: the language-model generators of kgen (plan, write, fix), built
 * on lib/llm.h.  gen_request hands every non-seed request to stages_request
 * when the generator is a model provider.  Records are emitted through the
 * gen's callback; nothing returned here is owned by the caller.
 */
#ifndef KSCI_STAGES_H
#define KSCI_STAGES_H

#include <jansson.h>

struct gen;

/* 0 done (children or a gen_error emitted), 1 request invalid (emitted
 * marked), -1 emitting failed. */
int stages_request(struct gen *g, const json_t *req, long line);

#endif
