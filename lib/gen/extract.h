/*
 * extract: find the kernel in a model's answer.
 *
 * Accepts a whole file in a fenced block (several blocks: the longest that
 * mentions solve wins; a missing closing fence or no fence at all, with
 * prose around the code, are tolerated) or SEARCH/REPLACE edits applied to
 * the base source:
 *
 *     <<<<<<< SEARCH
 *     old lines
 *     =======
 *     new lines
 *     >>>>>>> REPLACE
 *
 * On success *out is the new source (malloc'd; caller frees) and *how says
 * which form was found ("fenced", "unclosed_fence", "unfenced", "edits").
 * On failure -1, *reason is a static word ("no_code", "bad_edit") and
 * errbuf says why, for the record.
 */
#ifndef KSCI_EXTRACT_H
#define KSCI_EXTRACT_H

#include "err.h"

int ext_code(const char *reply, const char *base, char **out, const char **how, const char **reason, char *errbuf);
/* Apply SEARCH/REPLACE edits in text to base (exposed for tests).  Returns
 * the number of edits applied (> 0) with *out, 0 when text holds none, -1
 * with errbuf when one does not apply. */
int ext_apply_edits(const char *text, const char *base, char **out, char *errbuf);

#endif
