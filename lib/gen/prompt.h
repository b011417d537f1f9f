/*
 * prompt: the text kgen sends to a model — templates from data/prompts/
 * (plain files, "{{name}}" placeholders, editable without recompiling), the
 * knowledge base in data/knowledge/ (the files whose tags fit the request),
 * and the lab notebook (past experiments with their measured outcomes, from
 * archive records).  The facts about the device and a kernel's timings and
 * resources are lib/gen/facts.h.
 *
 * Text functions return a malloc'd NUL-terminated string the caller frees,
 * or NULL with errbuf filled (or, without an errbuf, out of memory).
 */
#ifndef KSCI_PROMPT_H
#define KSCI_PROMPT_H

#include <jansson.h>
#include <stddef.h>

#include "err.h"
#include "facts.h"

/* Prompt and knowledge roots: explicit, else $KSCI_PROMPTS / $KSCI_KNOWLEDGE,
 * else KSCI_DATADIR "/prompts" and "/knowledge". */
const char *prm_dir(const char *opt);
const char *prm_knowledge_dir(const char *opt);
/* dir/name. */
char *prm_load(const char *dir, const char *name, char *errbuf);
/* Replace each {{key}} by vars[key] (a string; numbers are printed).  An
 * unknown key is an error, so a typo in a template is found at once. */
char *prm_render(const char *tmpl, const json_t *vars, char *errbuf);
/* Which knowledge fits a request: its back end, the base's binding limit
 * (lib/gen/facts.h) and the detected architecture ("sm_90", "gfx942", or ""
 * when none was detected). */
struct prm_fit {
	const char *backend;
	enum fact_bound bound;
	const char *arch;
};
/* Whether a knowledge file's tag line fits: 1 yes, 0 no, -1 and errbuf when
 * the line is malformed (unknown key or value).  A line not starting with
 * "tags:" is no tag line and fits anything.  Format (docs/providers.md,
 * "Knowledge"): "tags: backend=cuda,hip; bottleneck=compute; arch=sm_90". */
int prm_tags_fit(const char *line, const struct prm_fit *fit, char *errbuf);
/* The knowledge files (*.md, sorted) that fit, tag lines removed, after one
 * line saying what they were chosen for, cut at max bytes.  NULL and errbuf
 * when the directory cannot be read or a file's tag line is malformed. */
char *prm_knowledge(const char *dir, const struct prm_fit *fit, size_t max, char *errbuf);
/* Lab notebook for a task on a back end (NULL: any): one line per past
 * experiment (records with a hypothesis, a plan or origin.fixes), newest
 * last, at most max entries,
 * each with its id and parent, plan title, status and why it failed, the
 * speedup over its parent and over the seed, and what fixing it gave.
 * speedups (id -> time.speedup_vs_seed, may be NULL) finds parents that are
 * not in records.  "(empty...)" when there is none. */
char *prm_notebook(const json_t *records, const json_t *speedups, const char *task, const char *backend,
		   size_t max);
/* The first line of a compiler log that reports an error, directories cut
 * from its file name, at most n - 1 bytes into buf; "" when none does. */
const char *prm_first_error(const char *log, char *buf, size_t n);

#endif
