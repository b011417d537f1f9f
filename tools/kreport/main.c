/*
 * kreport: what a run found, from one or more archives (docs/tools/kreport.md).
 *
 * Reads every record (plain or gzip NDJSON; stdin when no file is named),
 * keeps a flat summary of each candidate, computes the report once and
 * writes it as text (stdout), as one HTML page, and/or as the inputs of the
 * pictures.  pipelines/report.sh runs gnuplot and dot in between.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "report/report_html.h"
#include "report/report_load.h"
#include "report/report_plot.h"
#include "price.h"
#include "report/report_stats.h"
#include "report/report_text.h"
#include "tool.h"

static const char usage_text[] =
	"usage: kreport [--text] [--html FILE] [--images DIR] [--plots DIR] [--prices FILE]\n"
	"               [--peak-gbps N] [--peak-gflops N] [archive ...]\n";

static _Noreturn void usage(int code)
{
	fputs(usage_text, code ? stderr : stdout);
	if (code == 0)
		fputs("\n  --text          the report as plain text on stdout (the default without --html/--plots)\n"
		      "  --html FILE     the report as one self-contained HTML page\n"
		      "  --images DIR    where the pictures are (default: FILE's directory)\n"
		      "  --plots DIR     write speedup.dat, speedup.gp and lineage-<task>.dot into DIR\n"
		      "  --prices FILE   price table: \"MODEL USD_PER_MTOK_IN USD_PER_MTOK_OUT\" lines\n"
		      "  --peak-gbps N   memory bandwidth peak for %% of physical limit (overrides time.env)\n"
		      "  --peak-gflops N compute peak, likewise\n"
		      "Exit: 0 ok, 1 some lines were not JSON (reported, skipped), 2 usage, 3 fatal.\n",
		      stdout);
	exit(code);
}

static double peak_arg(const char *opt, const char *s)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v <= 0) {
		warnx_("%s: want a positive number, not \"%s\"", opt, s);
		usage(KSCI_EXIT_USAGE);
	}
	return v;
}

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
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 't': text = 1; break;
		case 'H': html = optarg; break;
		case 'i': images = optarg; break;
		case 'p': plots = optarg; break;
		case 'P': prices_path = optarg; break;
		case 'g': peak.gbps = peak_arg("--peak-gbps", optarg); break;
		case 'f': peak.gflops = peak_arg("--peak-gflops", optarg); break;
		case 'h': usage(0);
		default: usage(KSCI_EXIT_USAGE);
		}
	}
	if (!html && !plots)
		text = 1;

	char e[ERRBUF];
	struct price_table prices = {0};
	if (prices_path && price_load(&prices, prices_path, e) < 0) {
		warnx_("%s", e);
		usage(KSCI_EXIT_USAGE);
	}

	struct rp_data d;
	rp_data_init(&d, peak);
	struct tool t = {.out = stdout};
	int status = tool_run(&t, argv + optind, argc - optind, add_one, &d);
	if (status == KSCI_EXIT_FATAL)
		return status;
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
	if (text && (rp_text_write(stdout, &r) < 0 || fflush(stdout) != 0)) {
		warn_("write error");
		status = KSCI_EXIT_FATAL;
	}
	rp_report_free(&r);
	rp_data_free(&d);
	price_free(&prices);
	return status;
}
