/*
 * kreport: what a run found, from one or more archives (docs/tools/kreport.md).
 *
 * Reads every record (plain or gzip NDJSON; stdin when no file is named),
 * keeps a flat summary of each candidate, computes the report once and
 * writes it as text (stdout), as one HTML page, and/or as the inputs of the
 * pictures.  pipelines/report.sh runs gnuplot and dot in between.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "kreport-help.h" /* HELP_USAGE, HELP_BODY: made from docs/tools/kreport.md */
#include "opt.h"
#include "report/report_html.h"
#include "report/report_load.h"
#include "report/report_plot.h"
#include "price.h"
#include "report/report_stats.h"
#include "report/report_text.h"
#include "tool.h"

/* --peak-gbps, --peak-gflops: positive; the bounds only keep out nonsense. */
#define PEAK_MIN 1e-6
#define PEAK_MAX 1e12

static int add_one(struct tool *t, json_t *rec, void *ctx)
{
	char e[ERRBUF];
	(void)t;
	if (rp_add(ctx, rec, e) < 0)
		die(KSCI_EXIT_FATAL, "%s", e);
	return 0;
}

static char *dir_of(const char *path)
{
	const char *s = strrchr(path, '/');
	if (!s)
		return strdup(".");
	if (s == path)
		return strdup("/");
	return strndup(path, (size_t)(s - path));
}

int main(int argc, char **argv)
{
	err_init(argv[0]);
	static const struct option opts[] = {
		{"text", no_argument, NULL, 't'},      {"html", required_argument, NULL, 'H'},
		{"images", required_argument, NULL, 'i'}, {"plots", required_argument, NULL, 'p'},
		{"prices", required_argument, NULL, 'P'}, {"peak-gbps", required_argument, NULL, 'g'},
		{"peak-gflops", required_argument, NULL, 'f'}, {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int text = 0;
	const char *html = NULL, *images = NULL, *plots = NULL, *prices_path = NULL;
	struct rp_peak peak = {NAN, NAN};
	int ch;
	char e[ERRBUF];
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		int bad = 0;
		switch (ch) {
		case 't': text = 1; break;
		case 'H': html = optarg; break;
		case 'i': images = optarg; break;
		case 'p': plots = optarg; break;
		case 'P': prices_path = optarg; break;
		case 'g': bad = opt_double("--peak-gbps", optarg, PEAK_MIN, PEAK_MAX, &peak.gbps, e); break;
		case 'f': bad = opt_double("--peak-gflops", optarg, PEAK_MIN, PEAK_MAX, &peak.gflops, e); break;
		case 'h': return tool_usage(KSCI_EXIT_OK, HELP_USAGE, HELP_BODY);
		default: return tool_usage(KSCI_EXIT_USAGE, HELP_USAGE, HELP_BODY);
		}
		if (bad) {
			warnx_("%s", e);
			return tool_usage(KSCI_EXIT_USAGE, HELP_USAGE, HELP_BODY);
		}
	}
	if (!html && !plots)
		text = 1;

	struct price_table prices = {0};
	if (prices_path && price_load(&prices, prices_path, e) < 0) {
		warnx_("%s", e);
		return tool_usage(KSCI_EXIT_USAGE, HELP_USAGE, HELP_BODY);
	}

	struct rp_data d;
	rp_data_init(&d, peak);
	d.prices = prices_path ? &prices : NULL;
	struct tool t = {.out = stdout};
	int status = tool_run(&t, argv + optind, argc - optind, add_one, &d);
	if (status >= KSCI_EXIT_FATAL) /* fatal, or a damaged archive: no report from part of it */
		goto out;
	struct rp_report r;
	if (rp_finish(&d, e) < 0 || rp_report_make(&r, &d, prices_path ? &prices : NULL, e) < 0)
		die(KSCI_EXIT_FATAL, "%s", e);

	if (plots && rp_plot_write(&r, plots, e) < 0) {
		warnx_("%s", e);
		status = KSCI_EXIT_FATAL;
	}
	if (html) {
		char *dir = images ? NULL : dir_of(html);
		FILE *f = fopen(html, "w");
		if (!f) {
			warn_("%s", html);
			status = KSCI_EXIT_FATAL;
		} else if ((rp_html_write(f, &r, images ? images : dir) < 0) | (fclose(f) != 0)) {
			warnx_("%s: write error", html);
			status = KSCI_EXIT_FATAL;
		}
		free(dir);
	}
	if (text && (rp_text_write(stdout, &r) < 0 || fflush(stdout) != 0))
		status = tool_write_error();
	rp_report_free(&r);
out:
	rp_data_free(&d);
	price_free(&prices);
	return tool_exit(status);
}
