/*
 * gen_llm: the language-model generators of kgen — plan, write, fix — built
 * on lib/llm.h, lib/gen/prompt.h and lib/gen/extract.h (docs/tools/kgen.md).
 *
 * gen_request (lib/gen/gen.c) hands every non-seed request to
 * gen_llm_request when the generator is a model provider, and failed
 * candidates to gen_llm_fix_record when the fix stage is on.  Like the other
 * generators this file builds on lib/gen/gen_child.h (struct gen, the
 * record helpers) and never on the dispatcher.  The tool fills a struct
 * gen_llm_config and points struct gen's `stages` at it.  Records go out
 * through the gen's emit callback; nothing returned here is owned by the
 * caller.
 */
#ifndef KSCI_GEN_LLM_H
#define KSCI_GEN_LLM_H

#include <jansson.h>

#include "gen_child.h"
#include "llm.h"

struct gen_llm_config {
	struct llm_config llm;
	const char *stage;     /* "auto" (plan then write; fix for failed bases), "plan", "write", "fix" */
	const char *prompts;   /* template directory */
	const char *knowledge; /* knowledge directory */
	int max_fix;           /* fix attempts per lineage */
	int keep;              /* plans kept from a plan call (3) */
	int notebook_max;      /* notebook lines in a prompt */
	const char *findings;  /* findings directory (lib/gen/findings.h), NULL: none */
};

/* The kinds of plan, NULL-terminated: "memory", "compute", "parallelism",
 * "algorithm", "precision", "fusion", "tuning", "other".  data/prompts/
 * plan.txt asks the model for one per plan; a word not listed becomes
 * "other".  A child keeps its plan's kind as origin.kind, kselect's bandit
 * makes it the arm "plan:KIND", and a request whose strategy.arm names a
 * kind has its children written from plans of that kind where one was
 * planned (docs/tools/kgen.md). */
extern const char *const gen_plan_kinds[];

/* 0 done (children or a gen_error emitted), 1 request invalid (emitted
 * marked), -1 emitting failed. */
int gen_llm_request(struct gen *g, const json_t *req, long line);
/* --stage findings: req names a task and back end (and its generation);
 * one call updates the findings file of that task, back end and device
 * from the notebook (lib/gen/findings.h), and one record says what it did:
 * {"status": "findings", task, backend, generation, "findings": {"file",
 * "kept", "dropped", "dropped_ids"}, "origin": {"stage": "findings", calls,
 * usage}}, or a gen_error.  0, or -1 when emitting failed. */
int gen_llm_findings(struct gen *g, const json_t *req);
/* Whether rec (not a request) is a failed candidate the fix stage takes. */
int gen_llm_wants_fix(const struct gen *g, const json_t *rec);
/* Emit rec unchanged, then a fixed child (or nothing past the attempt
 * bound).  0, or -1 when emitting failed. */
int gen_llm_fix_record(struct gen *g, const json_t *rec);

#endif
