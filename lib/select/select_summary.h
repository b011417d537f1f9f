/*
 * select_summary: the counts of one task and back end over a whole archive
 * in one small JSON object (kselect --summary, docs/tools/kselect.md) —
 * what the pipelines ask between generations: the last generation, and how
 * generation G fared next to the best so far.
 *
 * Its own header because it stands apart from the rest of lib/select/: it
 * keeps no population and calls no strategy, only the span scanner; the
 * public select.h includes it so that kselect includes one header.
 *
 * Ownership: the caller owns a struct sel_sum (sel_sum_free); the task and
 * back end strings are borrowed and must outlive it; sel_sum_json returns a
 * new reference.  Nothing here prints.
 */
#ifndef KSCI_SELECT_SUMMARY_H
#define KSCI_SELECT_SUMMARY_H

#include <jansson.h>
#include <stddef.h>

#include "err.h"

/* Read line by line without building JSON trees: records, the last
 * generation, the statuses of one generation and the best timed candidate.
 * The best is the highest time.speedup_vs_baseline of a "timed" record (a
 * later record wins a tie); a repeated id counts as the lines it is on. */
struct sel_sum;

/* task and backend are borrowed (must outlive the summary); generation < 0:
 * the statuses of the last generation.  NULL when out of memory. */
struct sel_sum *sel_sum_new(const char *task, const char *backend, long generation);
void sel_sum_free(struct sel_sum *s);
/* Take one archive line: 0, or -1 + errbuf when it is not a JSON object
 * (the caller adds file and line). */
int sel_sum_line(struct sel_sum *s, const char *line, size_t n, char *errbuf);
/* {"task","backend","records","last_generation","generation","statuses":
 * {STATUS: N, ...},"best": null | {"id","generation","speedup_vs_baseline",
 * "speedup_vs_seed"}} (docs/tools/kselect.md); new reference, NULL when out
 * of memory. */
json_t *sel_sum_json(const struct sel_sum *s);

#endif
