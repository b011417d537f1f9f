/*
 * report_text: the report as plain text for a terminal — the same sections
 * and the same numbers as the HTML page (docs/reports.md shows a sample).
 * Writes to a caller's stream; allocates nothing that outlives the call.
 */
#ifndef KSCI_REPORT_TEXT_H
#define KSCI_REPORT_TEXT_H

#include <stdio.h>

#include "report_stats.h"

/* 0, or -1 when the stream reports a write error. */
int rp_text_write(FILE *out, const struct rp_report *r);

#endif
