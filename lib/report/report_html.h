/*
 * report_html: the report as one self-contained HTML page — the sections
 * of the text report as tables, and the pictures pipelines/report.sh made
 * (speedup.svg/png, lineage-<task>.svg/png in imgdir) embedded as base64
 * data: URIs, so the page is a single file with no outside references.
 * A missing picture is said so on the page, not an error.  Writes to a
 * caller's stream; allocates nothing that outlives the call.
 */
#ifndef KSCI_REPORT_HTML_H
#define KSCI_REPORT_HTML_H

#include <stddef.h>
#include <stdio.h>

#include "report_stats.h"

/* imgdir NULL: no pictures.  0, or -1 when the stream reports an error. */
int rp_html_write(FILE *out, const struct rp_report *r, const char *imgdir);
/* Base64 (RFC 4648, padded, no line breaks) of buf to out. */
void rp_base64(FILE *out, const unsigned char *buf, size_t n);

#endif
