/*
 * report_fmt: how kreport spells numbers, shared by the text, HTML and
 * graph writers so that they always agree (and the tests can pin one
 * spelling).  Unknown values (NAN) read "n/a".  Every function writes into
 * the caller's buffer (at least RP_FMT bytes) and returns it; nothing is
 * allocated.
 */
#ifndef KSCI_REPORT_FMT_H
#define KSCI_REPORT_FMT_H

#include <stddef.h>

#define RP_FMT 48

/* 2.50x */
char *rp_fmt_x(char *b, double v);
/* 45.0% */
char *rp_fmt_pct(char *b, double v);
/* 0.667 */
char *rp_fmt_frac(char *b, double v);
/* 0.0123 (dollars, four decimals) */
char *rp_fmt_usd(char *b, double v);
/* 12000 (rounded to a whole number) */
char *rp_fmt_int(char *b, double v);
/* 12.3 (seconds, one decimal) */
char *rp_fmt_sec(char *b, double v);
/* "g3", or "?" for a missing generation */
char *rp_fmt_gen(char *b, long gen);

/* Copy s into b (size n) cut at max bytes on a UTF-8 boundary, "..."
 * appended when cut.  Returns b. */
char *rp_fmt_cut(char *b, size_t n, const char *s, size_t max);
/* File-name-safe form of a task name: [A-Za-z0-9._-], others become '_'. */
char *rp_fmt_safe(char *b, size_t n, const char *s);

#endif
