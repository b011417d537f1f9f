/*
 * report_html: plain HTML 5 with a small inline style sheet and no script,
 * so it renders the same in any browser and in a mail client.  Every piece
 * of archive text goes through esc(); pictures are read whole and written
 * as data: URIs (SVG preferred, PNG when there is no SVG).
 */
#include "report_html.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"
#include "report_fmt.h"

void rp_base64(FILE *out, const unsigned char *b, size_t n)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i = 0;
	for (; i + 2 < n; i += 3) {
		unsigned long v = (unsigned long)b[i] << 16 | (unsigned long)b[i + 1] << 8 | b[i + 2];
		fputc(a[v >> 18 & 63], out);
		fputc(a[v >> 12 & 63], out);
		fputc(a[v >> 6 & 63], out);
		fputc(a[v & 63], out);
	}
	if (i < n) {
		unsigned long v = (unsigned long)b[i] << 16 | (i + 1 < n ? (unsigned long)b[i + 1] << 8 : 0);
		fputc(a[v >> 18 & 63], out);
		fputc(a[v >> 12 & 63], out);
		fputc(i + 1 < n ? a[v >> 6 & 63] : '=', out);
		fputc('=', out);
	}
}

static void esc(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		default: fputc(*s, out);
		}
	}
}

/* Whole file, or NULL (also when empty). *n gets its size. */
static unsigned char *slurp(const char *path, size_t *n)
{
	char e[ERRBUF], *buf;
	if (file_read(path, &buf, n, e) < 0)
		return NULL;
	if (*n == 0) {
		free(buf);
		return NULL;
	}
	return (unsigned char *)buf;
}

static void picture(FILE *out, const char *imgdir, const char *base, const char *alt)
{
	static const char *const ext[] = {"svg", "png"};
	static const char *const mime[] = {"image/svg+xml", "image/png"};
	for (int i = 0; imgdir && i < 2; i++) {
		char path[4096];
		size_t n;
		snprintf(path, sizeof path, "%s/%s.%s", imgdir, base, ext[i]);
		unsigned char *b = slurp(path, &n);
		if (!b)
			continue;
		fprintf(out, "<p><img alt=\"");
		esc(out, alt);
		fprintf(out, "\" src=\"data:%s;base64,", mime[i]);
		rp_base64(out, b, n);
		fprintf(out, "\"></p>\n");
		free(b);
		return;
	}
	fprintf(out, "<p class=\"none\">(picture %s not made: run pipelines/report.sh)</p>\n", base);
}

static void td(FILE *out, const char *s)
{
	fputs("<td>", out);
	esc(out, s);
	fputs("</td>", out);
}

static void th_row(FILE *out, const char *const *cols)
{
	fputs("<tr>", out);
	for (; *cols; cols++) {
		fputs("<th>", out);
		esc(out, *cols);
		fputs("</th>", out);
	}
	fputs("</tr>\n", out);
}

static void cost_table(FILE *out, const struct rp_cost *k, long impr)
{
	char b1[RP_FMT], b2[RP_FMT];
	static const char *const h[] = {"", "total", "per improvement", NULL};
	fputs("<table>\n", out);
	th_row(out, h);
	fputs("<tr><td>tokens in</td>", out);
	td(out, rp_fmt_int(b1, k->tok_in));
	td(out, rp_fmt_int(b2, rp_per(k->tok_in, impr)));
	fputs("</tr>\n<tr><td>tokens out</td>", out);
	td(out, rp_fmt_int(b1, k->tok_out));
	td(out, rp_fmt_int(b2, rp_per(k->tok_out, impr)));
	fputs("</tr>\n<tr><td>money (USD)</td>", out);
	int money = rp_cost_has_money(k);
	td(out, rp_fmt_usd(b1, money ? k->money : NAN));
	td(out, rp_fmt_usd(b2, money ? rp_per(k->money, impr) : NAN));
	fputs("</tr>\n<tr><td>GPU seconds</td>", out);
	td(out, rp_fmt_sec(b1, k->seconds));
	td(out, rp_fmt_sec(b2, rp_per(k->seconds, impr)));
	fprintf(out, "</tr>\n</table>\n<p>improvements: %ld; model records: %ld priced, %ld with tokens but no price</p>\n",
		impr, k->priced, k->unpriced);
	char b3[RP_FMT];
	if (k->calls)
		fprintf(out, "<p>model calls: %ld (%ld by the selector), %ld without a price; %ld not bought (cache or "
			"replay): %s tokens in, %s out, %s USD saved</p>\n",
			k->calls, k->sel_calls, k->unpriced_calls, k->cached, rp_fmt_int(b1, k->cached_in),
			rp_fmt_int(b2, k->cached_out), rp_fmt_usd(b3, k->saved));
}

static void across(FILE *out, const struct rp_report *r)
{
	char b[RP_FMT];
	fprintf(out, "<h2>Across tasks</h2>\n<table>\n<tr><td>tasks</td><td>%zu</td></tr>\n"
		     "<tr><td>with a correct candidate</td><td>%ld</td></tr>\n",
		r->ntasks, r->solved);
	for (int i = 0; i < RP_NFAST; i++) {
		double f = r->ntasks ? (double)r->fast_n[i] / (double)r->ntasks : NAN;
		fprintf(out, "<tr><td>fast_%g</td><td>%s (%ld/%zu)</td></tr>\n", rp_fast_p[i], rp_fmt_frac(b, f),
			r->fast_n[i], r->ntasks);
	}
	fprintf(out, "<tr><td>geomean speedup</td><td>%s (over %ld tasks)</td></tr>\n</table>\n",
		rp_fmt_x(b, r->geomean), r->solved);
}

static void leaderboard(FILE *out, const struct rp_report *r)
{
	char b[RP_FMT];
	static const char *const h[] = {"task", "vs baseline", "vs seed", "% of peak", "gen", "id", "candidates", NULL};
	fputs("<h2>Leaderboard</h2>\n<table>\n", out);
	th_row(out, h);
	for (size_t i = 0; i < r->ntasks; i++) {
		const struct rp_task *t = &r->tasks[i];
		const struct rp_cand *c = t->best;
		fprintf(out, "<tr><td><a href=\"#task-%zu\">", i);
		esc(out, t->name);
		fputs("</a></td>", out);
		td(out, rp_fmt_x(b, c ? c->sp_base : NAN));
		td(out, rp_fmt_x(b, c ? c->sp_seed : NAN));
		td(out, rp_fmt_pct(b, c ? c->pct_peak : NAN));
		td(out, c ? rp_fmt_gen(b, c->gen) : "-");
		fputs("<td><code>", out);
		esc(out, c && c->id ? c->id : "-");
		fprintf(out, "</code></td><td>%ld</td></tr>\n", t->candidates);
	}
	fputs("</table>\n", out);
}

static void task_section(FILE *out, const struct rp_task *t, size_t idx, const char *imgdir)
{
	char b[RP_FMT], safe[256], base[300];
	fprintf(out, "<h2 id=\"task-%zu\">Task ", idx);
	esc(out, t->name);
	fputs("</h2>\n", out);
	const struct rp_cand *c = t->best;
	if (t->held)
		fprintf(out, "<p>held back: %ld timed above the device's peak (time.implausible), not ranked</p>\n", t->held);
	if (!c) {
		fputs("<p>winner: none (no candidate was timed)</p>\n", out);
	} else {
		fputs("<p>winner: <code>", out);
		esc(out, c->id ? c->id : "(no id)");
		fprintf(out, "</code>, generation %s: ", rp_fmt_gen(b, c->gen));
		fprintf(out, "<b>%s</b> vs baseline", rp_fmt_x(b, c->sp_base));
		if (isfinite(c->sp_base_lo) && isfinite(c->sp_base_hi))
			fprintf(out, " [95 %% interval %.2f-%.2f]", c->sp_base_lo, c->sp_base_hi);
		fputs(", ", out);
		fprintf(out, "%s vs seed, ", rp_fmt_x(b, c->sp_seed));
		fprintf(out, "%s of peak</p>\n", rp_fmt_pct(b, c->pct_peak));
		static const char *const h[] = {"gen", "id", "generator", "speedup", "effect", "change", NULL};
		fputs("<h3>Lineage, root first</h3>\n<table>\n", out);
		th_row(out, h);
		if (t->missing_parent) {
			fputs("<tr><td>?</td><td><code>", out);
			esc(out, t->missing_parent);
			fputs("</code></td><td colspan=\"4\">(parent not in the archive)</td></tr>\n", out);
		}
		for (size_t i = 0; i < t->nlineage; i++) {
			const struct rp_cand *s = t->lineage[i].c;
			fputs("<tr>", out);
			td(out, rp_fmt_gen(b, s->gen));
			fputs("<td><code>", out);
			esc(out, s->id ? s->id : "-");
			fputs("</code></td>", out);
			td(out, s->generator ? s->generator : "?");
			td(out, rp_fmt_x(b, s->sp_base));
			if (i == 0)
				td(out, "-");
			else if (isfinite(t->lineage[i].effect))
				fprintf(out, "<td>x%.2f</td>", t->lineage[i].effect);
			else
				td(out, "n/a");
			td(out, s->note ? s->note : (s->generator && strcmp(s->generator, "seed") == 0) ? "seed kernel" : "-");
			fputs("</tr>\n", out);
		}
		fputs("</table>\n", out);
		if (t->cycle)
			fputs("<p>(parents loop; chain cut)</p>\n", out);
		rp_fmt_safe(safe, sizeof safe, t->name);
		snprintf(base, sizeof base, "lineage-%s", safe);
		picture(out, imgdir, base, "lineage graph");
	}
	fputs("<h3>By generation</h3>\n<table>\n<tr><th>gen</th><th>total</th>", out);
	for (int k = 0; k < RP_NST; k++)
		fprintf(out, "<th>%s</th>", rp_st_name[k]);
	fputs("<th>best so far</th></tr>\n", out);
	for (size_t i = 0; i < t->ngens; i++) {
		const struct rp_genrow *g = &t->gens[i];
		fprintf(out, "<tr><td>%s</td><td>%ld</td>", rp_fmt_gen(b, g->gen), g->total);
		for (int k = 0; k < RP_NST; k++)
			fprintf(out, "<td>%ld</td>", g->st[k]);
		fprintf(out, "<td>%s</td></tr>\n", rp_fmt_x(b, g->best));
	}
	fputs("</table>\n<h3>Cost</h3>\n", out);
	cost_table(out, &t->cost, t->improvements);
}

int rp_html_write(FILE *out, const struct rp_report *r, const char *imgdir)
{
	const struct rp_counts *k = &r->data->count;
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>ksci report</title>\n"
	      "<style>\nbody{font-family:sans-serif;margin:2em;max-width:1100px;color:#222}\n"
	      "table{border-collapse:collapse;margin:.5em 0}\n"
	      "td,th{border:1px solid #ccc;padding:.2em .6em;text-align:left;vertical-align:top}\n"
	      "th{background:#f0f0f0}\nimg{max-width:100%}\n.none{color:#888}\n"
	      "</style>\n</head>\n<body>\n<h1>ksci report</h1>\n",
	      out);
	fprintf(out, "<p>records: %ld read, %ld requests skipped, %ld duplicate ids replaced, %zu candidates<br>\n"
		     "missing: id %ld, task %ld, generation %ld, status %ld, speedup of a timed record %ld</p>\n",
		k->records, k->requests, k->duplicates, r->data->n, k->no_id, k->no_task, k->no_gen, k->no_status,
		k->timed_no_speedup);
	across(out, r);
	leaderboard(out, r);
	fputs("<h2>Best speedup per generation</h2>\n", out);
	picture(out, imgdir, "speedup", "best speedup per generation");
	fputs("<h2>Cost (all tasks)</h2>\n", out);
	cost_table(out, &r->cost, r->improvements);
	for (size_t i = 0; i < r->ntasks; i++)
		task_section(out, &r->tasks[i], i, imgdir);
	fputs("</body>\n</html>\n", out);
	return ferror(out) ? -1 : 0;
}
