/*
 * report_plot: the inputs of the report's pictures — a gnuplot data file and
 * script for the best speedup per generation, and one graphviz dot file per
 * task for the winner's lineage.  kreport only writes these; running gnuplot
 * and dot is pipelines/report.sh's job.  The file names are fixed
 * (docs/reports.md): speedup.dat, speedup.gp (which writes speedup.png and
 * speedup.svg when run in DIR), lineage-<task>.dot, <task> as rp_fmt_safe
 * spells it.  Nothing returned needs freeing.
 */
#ifndef KSCI_REPORT_PLOT_H
#define KSCI_REPORT_PLOT_H

#include <stdio.h>

#include "report_stats.h"

#define RP_PLOT_W 800
#define RP_PLOT_H 480

/* Write every plot input into dir (which must exist).  -1 with errbuf. */
int rp_plot_write(const struct rp_report *r, const char *dir, char *errbuf);
/* The pieces, to a stream: 0 or -1 on a write error. */
int rp_plot_data(FILE *out, const struct rp_report *r);
int rp_plot_script(FILE *out, const struct rp_report *r);
int rp_plot_dot(FILE *out, const struct rp_task *t);

#endif
