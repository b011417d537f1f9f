/*
 * report_plot: gnuplot reads one data block per task (blocks separated by
 * two blank lines, addressed with "index"), only for tasks that have a
 * timed candidate; generations before the first timed one have no point.
 * The script draws the same plot twice, PNG then SVG, at a fixed size so
 * the tests can check it.
 */
#include "report_plot.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_fmt.h"

static int has_points(const struct rp_task *t)
{
	for (size_t i = 0; i < t->ngens; i++)
		if (t->gens[i].gen >= 0 && isfinite(t->gens[i].best))
			return 1;
	return 0;
}

int rp_plot_data(FILE *out, const struct rp_report *r)
{
	int first = 1;
	for (size_t i = 0; i < r->ntasks; i++) {
		const struct rp_task *t = &r->tasks[i];
		if (!has_points(t))
			continue;
		fprintf(out, "%s# task %s\n# generation best_speedup_vs_baseline\n", first ? "" : "\n\n", t->name);
		first = 0;
		for (size_t g = 0; g < t->ngens; g++)
			if (t->gens[g].gen >= 0 && isfinite(t->gens[g].best))
				fprintf(out, "%ld %.6g\n", t->gens[g].gen, t->gens[g].best);
	}
	return ferror(out) ? -1 : 0;
}

/* A gnuplot single-quoted string: ' doubles. */
static void gp_str(FILE *out, const char *s)
{
	fputc('\'', out);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', out);
		fputc(*s, out);
	}
	fputc('\'', out);
}

int rp_plot_script(FILE *out, const struct rp_report *r)
{
	long maxgen = 0;
	size_t nplot = 0;
	for (size_t i = 0; i < r->ntasks; i++) {
		nplot += has_points(&r->tasks[i]);
		for (size_t g = 0; g < r->tasks[i].ngens; g++)
			if (r->tasks[i].gens[g].gen > maxgen)
				maxgen = r->tasks[i].gens[g].gen;
	}
	fprintf(out, "# made by kreport: cd to this directory and run gnuplot speedup.gp\n"
		     "set terminal pngcairo size %d,%d noenhanced font 'sans,10'\n"
		     "set output 'speedup.png'\n"
		     "set title 'Best speedup vs baseline so far, per generation'\n"
		     "set xlabel 'generation'\nset ylabel 'speedup (x baseline)'\n"
		     "set grid\nset key top left\nset yrange [0:*]\nset xrange [0:%ld]\n"
		     "set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb 'gray40'\n",
		RP_PLOT_W, RP_PLOT_H, maxgen > 0 ? maxgen : 1);
	if (maxgen <= 20)
		fprintf(out, "set xtics 1\n");
	if (nplot == 0) {
		fprintf(out, "set label 'no timed candidates' at graph 0.5,0.5 center\nset yrange [0:1]\n"
			     "plot -1 notitle\n");
	} else {
		fprintf(out, "plot ");
		size_t idx = 0;
		for (size_t i = 0; i < r->ntasks; i++) {
			if (!has_points(&r->tasks[i]))
				continue;
			fprintf(out, "%s'speedup.dat' index %zu using 1:2 with steps lw 2 lt %zu title ",
				idx ? ", \\\n     " : "", idx, idx + 1);
			gp_str(out, r->tasks[i].name);
			fprintf(out, ", '' index %zu using 1:2 with points pt 7 lt %zu notitle", idx, idx + 1);
			idx++;
		}
		fprintf(out, "\n");
	}
	fprintf(out, "set terminal svg size %d,%d noenhanced font 'sans,10'\nset output 'speedup.svg'\nreplot\n"
		     "unset output\n",
		RP_PLOT_W, RP_PLOT_H);
	return ferror(out) ? -1 : 0;
}

/* A dot double-quoted string; \n in s is kept as dot's line break. */
static void dot_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"' || (*s == '\\' && s[1] != 'n'))
			fputc('\\', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

int rp_plot_dot(FILE *out, const struct rp_task *t)
{
	char b1[RP_FMT], b2[RP_FMT], note[64], label[512];
	snprintf(label, sizeof label, "%s: the winner's lineage", t->name);
	fprintf(out, "digraph lineage {\n  graph [rankdir=TB, labelloc=t, fontname=\"sans\", label=");
	dot_str(out, label);
	fprintf(out, "];\n  node [shape=box, style=\"rounded,filled\", fillcolor=\"#eef3fb\", fontname=\"sans\", "
		     "fontsize=10];\n  edge [fontname=\"sans\", fontsize=9];\n");
	if (t->missing_parent) {
		snprintf(label, sizeof label, "%s\\n(not in the archive)", t->missing_parent);
		fprintf(out, "  missing [style=dashed, label=");
		dot_str(out, label);
		fprintf(out, "];\n");
	}
	for (size_t i = 0; i < t->nlineage; i++) {
		const struct rp_cand *c = t->lineage[i].c;
		const char *n = c->note ? c->note : (c->generator && strcmp(c->generator, "seed") == 0) ? "seed kernel" : "";
		rp_fmt_cut(note, sizeof note, n, 40);
		snprintf(label, sizeof label, "gen %s  %s\\n%s%s%s\\n%s", rp_fmt_gen(b1, c->gen), c->id ? c->id : "?",
			 c->generator ? c->generator : "?", *note ? ": " : "", note, rp_fmt_x(b2, c->sp_base));
		fprintf(out, "  n%zu [label=", i);
		dot_str(out, label);
		if (i + 1 == t->nlineage)
			fprintf(out, ", fillcolor=\"#c8e6c9\", penwidth=2");
		fprintf(out, "];\n");
	}
	if (t->missing_parent && t->nlineage)
		fprintf(out, "  missing -> n0 [style=dashed];\n");
	for (size_t i = 1; i < t->nlineage; i++) {
		fprintf(out, "  n%zu -> n%zu", i - 1, i);
		if (isfinite(t->lineage[i].effect))
			fprintf(out, " [label=\"x%.2f\"]", t->lineage[i].effect);
		fprintf(out, ";\n");
	}
	fprintf(out, "}\n");
	return ferror(out) ? -1 : 0;
}

static int write_file(const char *dir, const char *name, int (*fn)(FILE *, const void *), const void *arg,
		      char *errbuf)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (!f)
		return errf(errbuf, "%s: %s", path, strerror(errno));
	int rc = fn(f, arg);
	if (fclose(f) != 0 || rc < 0)
		return errf(errbuf, "%s: write error", path);
	return 0;
}

static int data_fn(FILE *f, const void *a) { return rp_plot_data(f, a); }
static int script_fn(FILE *f, const void *a) { return rp_plot_script(f, a); }
static int dot_fn(FILE *f, const void *a) { return rp_plot_dot(f, a); }

int rp_plot_write(const struct rp_report *r, const char *dir, char *errbuf)
{
	if (write_file(dir, "speedup.dat", data_fn, r, errbuf) < 0 ||
	    write_file(dir, "speedup.gp", script_fn, r, errbuf) < 0)
		return -1;
	for (size_t i = 0; i < r->ntasks; i++) {
		if (!r->tasks[i].best)
			continue;
		char safe[256], name[300];
		rp_fmt_safe(safe, sizeof safe, r->tasks[i].name);
		snprintf(name, sizeof name, "lineage-%s.dot", safe);
		if (write_file(dir, name, dot_fn, &r->tasks[i], errbuf) < 0)
			return -1;
	}
	return 0;
}
