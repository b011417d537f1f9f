/*
 * report_text: fixed-width tables.  Column widths are fixed except the task
 * name's, so a diff of two reports lines up and the tests can compare the
 * output byte for byte.
 */
#include "report_text.h"

#include <math.h>
#include <string.h>

#include "report_fmt.h"

static void heading(FILE *out, const char *title)
{
	size_t n = strlen(title);
	fprintf(out, "\n%s\n", title);
	for (size_t i = 0; i < n; i++)
		fputc('-', out);
	fputc('\n', out);
}

static void data_section(FILE *out, const struct rp_report *r)
{
	const struct rp_counts *k = &r->data->count;
	fprintf(out, "records: %ld read, %ld requests skipped, %ld duplicate ids replaced, %zu candidates\n",
		k->records, k->requests, k->duplicates, r->data->n);
	fprintf(out, "missing: id %ld, task %ld, generation %ld, status %ld, speedup of a timed record %ld\n",
		k->no_id, k->no_task, k->no_gen, k->no_status, k->timed_no_speedup);
}

static void across(FILE *out, const struct rp_report *r)
{
	char b[RP_FMT];
	heading(out, "Across tasks");
	fprintf(out, "%-26s %zu\n", "tasks", r->ntasks);
	fprintf(out, "%-26s %ld\n", "with a correct candidate", r->solved);
	for (int i = 0; i < RP_NFAST; i++) {
		char name[32];
		snprintf(name, sizeof name, "fast_%g", rp_fast_p[i]);
		double f = r->ntasks ? (double)r->fast_n[i] / (double)r->ntasks : NAN;
		fprintf(out, "%-26s %s (%ld/%zu)\n", name, rp_fmt_frac(b, f), r->fast_n[i], r->ntasks);
	}
	fprintf(out, "%-26s %s (over %ld tasks)\n", "geomean speedup", rp_fmt_x(b, r->geomean), r->solved);
}

static int name_width(const struct rp_report *r)
{
	size_t w = 4;
	for (size_t i = 0; i < r->ntasks; i++)
		if (strlen(r->tasks[i].name) > w)
			w = strlen(r->tasks[i].name);
	return (int)(w > 40 ? 40 : w);
}

static void leaderboard(FILE *out, const struct rp_report *r)
{
	char b1[RP_FMT], b2[RP_FMT], b3[RP_FMT], b4[RP_FMT];
	int w = name_width(r);
	heading(out, "Leaderboard");
	fprintf(out, "%-*s  %-11s  %-8s  %-6s  %-3s  %-16s  %s\n", w, "task", "vs_baseline", "vs_seed", "%peak", "gen",
		"id", "candidates");
	for (size_t i = 0; i < r->ntasks; i++) {
		const struct rp_task *t = &r->tasks[i];
		const struct rp_cand *c = t->best;
		fprintf(out, "%-*s  %-11s  %-8s  %-6s  %-3s  %-16s  %ld\n", w, t->name, rp_fmt_x(b1, c ? c->sp_base : NAN),
			rp_fmt_x(b2, c ? c->sp_seed : NAN), rp_fmt_pct(b3, c ? c->pct_peak : NAN),
			c ? rp_fmt_gen(b4, c->gen) : "-", c && c->id ? c->id : "-", t->candidates);
	}
}

static void cost_rows(FILE *out, const struct rp_cost *k, long impr, const char *indent)
{
	char b1[RP_FMT], b2[RP_FMT];
	fprintf(out, "%s%-14s  %-12s  %s\n", indent, "", "total", "per improvement");
	fprintf(out, "%s%-14s  %-12s  %s\n", indent, "tokens in", rp_fmt_int(b1, k->tok_in),
		rp_fmt_int(b2, rp_per(k->tok_in, impr)));
	fprintf(out, "%s%-14s  %-12s  %s\n", indent, "tokens out", rp_fmt_int(b1, k->tok_out),
		rp_fmt_int(b2, rp_per(k->tok_out, impr)));
	int money = rp_cost_has_money(k);
	fprintf(out, "%s%-14s  %-12s  %s\n", indent, "money (USD)", rp_fmt_usd(b1, money ? k->money : NAN),
		rp_fmt_usd(b2, money ? rp_per(k->money, impr) : NAN));
	fprintf(out, "%s%-14s  %-12s  %s\n", indent, "GPU seconds", rp_fmt_sec(b1, k->seconds),
		rp_fmt_sec(b2, rp_per(k->seconds, impr)));
	fprintf(out, "%s%-14s  %ld\n", indent, "improvements", impr);
	fprintf(out, "%s%-14s  %ld priced, %ld with tokens but no price\n", indent, "model records", k->priced,
		k->unpriced);
	if (k->calls) {
		char b3[RP_FMT];
		fprintf(out, "%s%-14s  %ld (%ld by the selector), %ld without a price; %ld not bought (cache or replay): "
			"%s tokens in, %s out, %s USD saved\n",
			indent, "model calls", k->calls, k->sel_calls, k->unpriced_calls, k->cached,
			rp_fmt_int(b1, k->cached_in), rp_fmt_int(b2, k->cached_out), rp_fmt_usd(b3, k->saved));
	}
}

static const char *step_note(const struct rp_cand *c)
{
	if (c->note)
		return c->note;
	if (c->generator && strcmp(c->generator, "seed") == 0)
		return "seed kernel";
	return "-";
}

static void task_section(FILE *out, const struct rp_task *t)
{
	char b1[RP_FMT], b2[RP_FMT], b3[RP_FMT], b4[RP_FMT];
	char title[300];
	snprintf(title, sizeof title, "Task %s", t->name);
	heading(out, title);
	const struct rp_cand *c = t->best;
	if (!c) {
		fprintf(out, "winner: none (no candidate was timed)\n");
		if (t->held)
			fprintf(out, "held back: %ld timed above the device's peak (time.implausible), not ranked\n", t->held);
	} else {
		char ci[64] = "";
		if (isfinite(c->sp_base_lo) && isfinite(c->sp_base_hi))
			snprintf(ci, sizeof ci, " [95 %% interval %.2f-%.2f]", c->sp_base_lo, c->sp_base_hi);
		fprintf(out, "winner: %s, generation %s: %s vs baseline%s, %s vs seed, %s of peak\n", c->id ? c->id : "(no id)",
			rp_fmt_gen(b1, c->gen), rp_fmt_x(b2, c->sp_base), ci, rp_fmt_x(b3, c->sp_seed),
			rp_fmt_pct(b4, c->pct_peak));
		if (t->held)
			fprintf(out, "held back: %ld timed above the device's peak (time.implausible), not ranked\n", t->held);
		fprintf(out, "lineage, root first (effect = speedup / parent's speedup):\n");
		fprintf(out, "  %-3s  %-16s  %-10s  %-7s  %-6s  %s\n", "gen", "id", "generator", "speedup", "effect",
			"change");
		if (t->missing_parent)
			fprintf(out, "  %-3s  %-16s  %s\n", "?", t->missing_parent, "(parent not in the archive)");
		if (t->cycle)
			fprintf(out, "  (parents loop; chain cut)\n");
		for (size_t i = 0; i < t->nlineage; i++) {
			const struct rp_cand *s = t->lineage[i].c;
			char eff[RP_FMT];
			if (i == 0)
				snprintf(eff, sizeof eff, "-");
			else if (isfinite(t->lineage[i].effect))
				snprintf(eff, sizeof eff, "x%.2f", t->lineage[i].effect);
			else
				snprintf(eff, sizeof eff, "n/a");
			fprintf(out, "  %-3s  %-16s  %-10s  %-7s  %-6s  %s\n", rp_fmt_gen(b1, s->gen), s->id ? s->id : "-",
				s->generator ? s->generator : "?", rp_fmt_x(b2, s->sp_base), eff, step_note(s));
		}
	}
	fprintf(out, "by generation:\n  %-3s  %-5s", "gen", "total");
	for (int k = 0; k < RP_NST; k++)
		fprintf(out, "  %s", rp_st_name[k]);
	fprintf(out, "  best_so_far\n");
	for (size_t i = 0; i < t->ngens; i++) {
		const struct rp_genrow *g = &t->gens[i];
		fprintf(out, "  %-3s  %-5ld", rp_fmt_gen(b1, g->gen), g->total);
		for (int k = 0; k < RP_NST; k++)
			fprintf(out, "  %-*ld", (int)strlen(rp_st_name[k]), g->st[k]);
		fprintf(out, "  %s\n", rp_fmt_x(b2, g->best));
	}
	fprintf(out, "cost:\n");
	cost_rows(out, &t->cost, t->improvements, "  ");
}

int rp_text_write(FILE *out, const struct rp_report *r)
{
	fprintf(out, "ksci report\n===========\n");
	data_section(out, r);
	across(out, r);
	leaderboard(out, r);
	heading(out, "Cost (all tasks)");
	cost_rows(out, &r->cost, r->improvements, "");
	for (size_t i = 0; i < r->ntasks; i++)
		task_section(out, &r->tasks[i]);
	return ferror(out) ? -1 : 0;
}
