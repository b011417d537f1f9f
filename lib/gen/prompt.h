/*
 * prompt: the text kgen sends to a model — templates from data/prompts/
 * (plain files, "{{name}}" placeholders, editable without recompiling), the
 * knowledge base in data/knowledge/, and the lab notebook (past hypotheses
 * with their measured outcomes, from archive records).
 *
 * Every function returns a malloc'd NUL-terminated string the caller frees,
 * or NULL with errbuf filled.
 */
#ifndef KSCI_PROMPT_H
#define KSCI_PROMPT_H

#include <jansson.h>
#include <stddef.h>

#include "err.h"

/* Prompt and knowledge roots: explicit, else $KSCI_PROMPTS / $KSCI_KNOWLEDGE,
 * else KSCI_DATADIR "/prompts" and "/knowledge". */
const char *prm_dir(const char *opt);
const char *prm_knowledge_dir(const char *opt);
/* dir/name. */
char *prm_load(const char *dir, const char *name, char *errbuf);
/* Replace each {{key}} by vars[key] (a string; numbers are printed).  An
 * unknown key is an error, so a typo in a template is found at once. */
char *prm_render(const char *tmpl, const json_t *vars, char *errbuf);
/* The knowledge files (*.md, sorted), arch-*.md only when they match the
 * back end (arch-nvidia-* for cuda, arch-amd-* for hip), cut at max bytes. */
char *prm_knowledge(const char *dir, const char *backend, size_t max, char *errbuf);
/* Lab notebook for a task: one line per past hypothesis with its outcome,
 * newest last, at most max entries.  "(empty)" when there is none. */
char *prm_notebook(const json_t *records, const char *task, size_t max);
/* A candidate's timings as text lines ("size {...}: 12.3 us, 1.45x vs seed"). */
char *prm_timings(const json_t *rec);

#endif
