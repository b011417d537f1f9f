/*
 * report_load: records in, flat candidates out; see report_load.h.
 *
 * The archive is appended to by every run and re-timing appends the same id
 * again, so rp_finish keeps the last record of each id (input order across
 * all archives).  Candidates are then sorted by task, generation and input
 * order, which is the order every report section walks them in; a second
 * array sorted by id answers the parent look-ups of the lineage.
 */
#include "report_load.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rec.h"
#include "strbuf.h"

#define NOTE_MAX 300

void rp_data_init(struct rp_data *d, struct rp_peak peak_override)
{
	memset(d, 0, sizeof *d);
	d->peak = peak_override;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static double num_at(const json_t *o, const char *path)
{
	json_t *v = rec_path(o, path);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* First numeric field among keys (NULL-terminated) of o; NAN if none. */
static double first_num(const json_t *o, const char *const *keys)
{
	for (; *keys; keys++) {
		json_t *v = json_object_get(o, *keys);
		if (json_is_number(v))
			return json_number_value(v);
	}
	return NAN;
}

/* One printable line: control characters become spaces, runs of spaces
 * collapse, and it is cut at NOTE_MAX bytes on a UTF-8 boundary. */
static char *one_line(char *s)
{
	if (!s)
		return NULL;
	size_t w = 0;
	for (size_t r = 0; s[r]; r++) {
		unsigned char ch = (unsigned char)s[r];
		if (ch < 0x20 || ch == 0x7f)
			ch = ' ';
		if (ch == ' ' && (w == 0 || s[w - 1] == ' '))
			continue;
		s[w++] = (char)ch;
	}
	while (w > 0 && s[w - 1] == ' ')
		w--;
	s[w] = '\0';
	if (w > NOTE_MAX) {
		size_t cut = NOTE_MAX;
		while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80)
			cut--;
		memcpy(s + cut, "...", 4);
	}
	if (w == 0) {
		free(s);
		return NULL;
	}
	return s;
}

/* The text of a string or an array of strings ("; "-joined). */
static void text_of(const json_t *v, struct strbuf *b)
{
	if (json_is_string(v))
		sb_add(b, json_string_value(v));
	size_t i;
	json_t *e;
	json_array_foreach(v, i, e) {
		if (!json_is_string(e))
			continue;
		if (b->len)
			sb_add(b, "; ");
		sb_add(b, json_string_value(e));
	}
}

/* origin.changes (mutate) as "TILE 32->64, UNROLL 1->4"; else the model's
 * hypothesis, else its plan (looked for in origin, then origin.llm).  NULL
 * when there is none (or memory ran out: a note is not worth failing for). */
static char *make_note(const json_t *origin)
{
	struct strbuf b = STRBUF_INIT;
	json_t *ch = json_object_get(origin, "changes");
	if (json_is_array(ch) && json_array_size(ch) > 0) {
		size_t i;
		json_t *e;
		json_array_foreach(ch, i, e) {
			const char *k = rec_str(e, "knob"), *f = rec_str(e, "from"), *t = rec_str(e, "to");
			sb_printf(&b, "%s%s %s->%s", b.len ? ", " : "", k ? k : "?", f ? f : "?", t ? t : "?");
		}
		return one_line(sb_detach(&b, NULL));
	}
	static const char *const where[] = {"", "llm."};
	static const char *const what[] = {"hypothesis", "plan"};
	for (size_t w = 0; w < 2; w++)
		for (size_t i = 0; i < 2; i++) {
			char path[32];
			snprintf(path, sizeof path, "%s%s", where[i], what[w]);
			text_of(rec_path(origin, path), &b);
			if (b.len || b.oom)
				return one_line(sb_detach(&b, NULL));
		}
	sb_release(&b);
	return NULL;
}

static double pct_of_peak(const json_t *rec, struct rp_peak ov)
{
	json_t *t = json_object_get(rec, "time");
	double pg = isnan(ov.gbps) ? num_at(t, "env.peak_gbps") : ov.gbps;
	double pf = isnan(ov.gflops) ? num_at(t, "env.peak_gflops") : ov.gflops;
	double best = NAN;
	size_t i;
	json_t *s;
	json_array_foreach(json_object_get(t, "sizes"), i, s) {
		double g = rec_num(s, "gbps"), f = rec_num(s, "gflops");
		double r[2] = {g / pg, f / pf};
		/* The recorded matrix peak is fp32; work meant for tensor cores is
		 * compared with it only when the user names a peak (--peak-gflops). */
		const char *unit = json_string_value(json_object_get(s, "flops_unit"));
		int fp32 = !unit || strcmp(unit, "fp32") == 0 || !isnan(ov.gflops);
		int ok[2] = {isfinite(g) && isfinite(pg) && pg > 0, fp32 && isfinite(f) && isfinite(pf) && pf > 0};
		for (int k = 0; k < 2; k++)
			if (ok[k] && (isnan(best) || r[k] > best))
				best = r[k];
	}
	return best * 100.0;
}

/* One accounting object: {"tokens_in","tokens_out","cost_usd"} or the
 * providers' own spellings; folded into c.  *all_cost stays 1 while every
 * object carried a cost. */
static void usage_one(struct rp_cand *c, const json_t *u, int *all_cost)
{
	static const char *const kin[] = {"tokens_in", "input_tokens", "prompt_tokens", NULL};
	static const char *const kout[] = {"tokens_out", "output_tokens", "completion_tokens", NULL};
	static const char *const kcost[] = {"cost_usd", "cost", NULL};
	if (json_is_object(json_object_get(u, "usage")))
		u = json_object_get(u, "usage");
	double i = first_num(u, kin), o = first_num(u, kout), k = first_num(u, kcost);
	c->tok_in += i > 0 ? i : 0;
	c->tok_out += o > 0 ? o : 0;
	if (isfinite(k) && k >= 0)
		c->cost = isnan(c->cost) ? k : c->cost + k;
	else
		*all_cost = 0;
}

/* Tokens and money of the model calls that made this candidate: origin.calls,
 * each call priced by lib/price.h's rule; in records without it,
 * origin.usage, else origin.llm (one accounting object, or an array of them,
 * one per call; each may nest its figures under "usage"), where the cost is
 * only kept when every call stated one; otherwise the price table prices the
 * tokens (report_stats). */
static void usage(struct rp_cand *c, const json_t *origin, const struct price_table *prices)
{
	const json_t *u = json_object_get(origin, "usage");
	json_t *calls = json_object_get(origin, "calls");
	const char *asked = rec_str(origin, "model");
	int all_cost = 1;
	c->cost = NAN;
	if (json_is_array(calls)) {
		size_t i;
		json_t *e;
		json_array_foreach(calls, i, e) {
			price_acct_add(&c->acct, e, prices, asked);
		}
		c->per_call = 1;
		c->tok_in = c->acct.tok_in;
		c->tok_out = c->acct.tok_out;
		c->cost = c->acct.cost;
		return;
	}
	if (json_is_object(u)) {
		usage_one(c, u, &all_cost);
	} else if (json_is_object(u = json_object_get(origin, "llm"))) {
		usage_one(c, u, &all_cost);
	} else if (json_is_array(u)) {
		size_t i;
		json_t *e;
		json_array_foreach(u, i, e) {
			if (json_is_object(e))
				usage_one(c, e, &all_cost);
		}
	} else {
		all_cost = 0;
	}
	if (!all_cost)
		c->cost = NAN;
}

/* The selector's call that chose this candidate's parent (kselect
 * --strategy llm: strategy.llm, which kgen copies into origin.strategy; a
 * gen_error keeps it in request.strategy).  -1 out of memory. */
static int selector_call(struct rp_cand *c, const json_t *rec, const json_t *origin, const struct price_table *prices)
{
	json_t *s = rec_path(origin, "strategy.llm");
	if (!json_is_object(s))
		s = rec_path(rec, "request.strategy.llm");
	const char *id = rec_str(s, "call_id");
	if (!json_is_object(s) || !id)
		return 0; /* without an id it could not be counted once */
	price_acct_add(&c->sel, s, prices, rec_str(s, "model"));
	return (c->sel_call = strdup(id)) ? 0 : -1;
}

struct rp_cand *rp_cand_from(const json_t *rec, struct rp_peak ov)
{
	return rp_cand_priced(rec, ov, NULL);
}

struct rp_cand *rp_cand_priced(const json_t *rec, struct rp_peak ov, const struct price_table *prices)
{
	struct rp_cand *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->id = dup_or_null(rec_str(rec, "id"));
	c->task = dup_or_null(rec_str(rec, "task"));
	/* A timed result above the device's peak (time.implausible) is held
	 * back everywhere: the report counts it as "implausible", not timed,
	 * so it never tops a table (docs/reports.md). */
	const char *st = rec_str(rec, "status");
	if (st && strcmp(st, ST_TIMED) == 0 && rec_path(rec, "time.implausible"))
		st = "implausible";
	c->status = dup_or_null(st);
	json_t *g = json_object_get(rec, "generation");
	c->gen = json_is_integer(g) && json_integer_value(g) >= 0 ? (long)json_integer_value(g) : -1;
	json_t *ps = json_object_get(rec, "parents");
	if (json_is_array(ps) && json_array_size(ps) > 0) {
		c->parents = calloc(json_array_size(ps), sizeof *c->parents);
		if (!c->parents)
			goto oom;
		size_t i;
		json_t *p;
		json_array_foreach(ps, i, p) {
			if (json_is_string(p) && !(c->parents[c->nparents++] = strdup(json_string_value(p))))
				goto oom;
		}
	}
	json_t *origin = json_object_get(rec, "origin");
	c->generator = dup_or_null(rec_str(origin, "generator"));
	c->note = make_note(origin);
	const char *model = rec_str(origin, "model");
	json_t *llm = json_object_get(origin, "llm");
	if (!model)
		model = rec_str(json_is_array(llm) ? json_array_get(llm, 0) : llm, "model");
	c->model = dup_or_null(model);
	usage(c, origin, prices);
	if (selector_call(c, rec, origin, prices) < 0)
		goto oom;
	c->sp_base = num_at(rec, "time.speedup_vs_baseline");
	json_t *ci = rec_path(rec, "time.speedup_vs_baseline_ci");
	c->sp_base_lo = c->sp_base_hi = NAN;
	if (json_array_size(ci) == 2 && json_is_number(json_array_get(ci, 0)) && json_is_number(json_array_get(ci, 1))) {
		c->sp_base_lo = json_number_value(json_array_get(ci, 0));
		c->sp_base_hi = json_number_value(json_array_get(ci, 1));
	}
	c->sp_seed = num_at(rec, "time.speedup_vs_seed");
	c->pct_peak = pct_of_peak(rec, ov);
	static const char *const stages[] = {"compile.seconds", "verify.seconds", "time.seconds"};
	for (size_t i = 0; i < 3; i++) {
		double s = num_at(rec, stages[i]);
		if (isfinite(s) && s > 0)
			c->seconds += s;
	}
	if ((rec_str(rec, "id") && !c->id) || (rec_str(rec, "task") && !c->task) ||
	    (rec_str(rec, "status") && !c->status) || (rec_str(origin, "generator") && !c->generator) ||
	    (model && !c->model))
		goto oom;
	return c;
oom:
	rp_cand_free(c);
	return NULL;
}

void rp_cand_free(struct rp_cand *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nparents; i++)
		free(c->parents[i]);
	free(c->parents);
	free(c->id);
	free(c->task);
	free(c->status);
	free(c->generator);
	free(c->note);
	free(c->model);
	free(c->sel_call);
	free(c);
}

int rp_add(struct rp_data *d, const json_t *rec, char *errbuf)
{
	d->count.records++;
	const char *st = rec_str(rec, "status");
	if (st && strcmp(st, ST_SELECTED) == 0) {
		d->count.requests++;
		return 0;
	}
	if (d->n == d->cap) {
		size_t nc = d->cap ? d->cap * 2 : 256;
		struct rp_cand **nb = realloc(d->c, nc * sizeof *nb);
		if (!nb)
			return errf(errbuf, "out of memory");
		d->c = nb;
		d->cap = nc;
	}
	struct rp_cand *c = rp_cand_priced(rec, d->peak, d->prices);
	if (!c)
		return errf(errbuf, "out of memory");
	c->order = (size_t)d->count.records - 1;
	d->c[d->n++] = c;
	return 0;
}

static int by_id_order(const void *a, const void *b)
{
	const struct rp_cand *x = *(struct rp_cand *const *)a, *y = *(struct rp_cand *const *)b;
	int r = strcmp(x->id, y->id);
	return r ? r : (x->order > y->order) - (x->order < y->order);
}

/* Missing task sorts first, missing generation before generation 0. */
static int by_task_gen(const void *a, const void *b)
{
	const struct rp_cand *x = *(struct rp_cand *const *)a, *y = *(struct rp_cand *const *)b;
	int r = (x->task != NULL) - (y->task != NULL);
	if (!r && x->task)
		r = strcmp(x->task, y->task);
	if (!r)
		r = (x->gen > y->gen) - (x->gen < y->gen);
	return r ? r : (x->order > y->order) - (x->order < y->order);
}

static int by_sel_call(const void *a, const void *b)
{
	const struct rp_cand *x = *(struct rp_cand *const *)a, *y = *(struct rp_cand *const *)b;
	int r = strcmp(x->sel_call, y->sel_call);
	return r ? r : (x->order > y->order) - (x->order < y->order);
}

/* One selector call chooses the parent of every child of its request (kgen
 * --children, --n): the first candidate in input order counts it. */
static int mark_selector_dups(struct rp_data *d)
{
	size_t n = 0;
	for (size_t i = 0; i < d->n; i++)
		n += d->c[i]->sel_call != NULL;
	if (n < 2)
		return 0;
	struct rp_cand **v = malloc(n * sizeof *v);
	if (!v)
		return -1;
	n = 0;
	for (size_t i = 0; i < d->n; i++)
		if (d->c[i]->sel_call)
			v[n++] = d->c[i];
	qsort(v, n, sizeof *v, by_sel_call);
	v[0]->sel_dup = 0;
	for (size_t i = 1; i < n; i++)
		v[i]->sel_dup = strcmp(v[i]->sel_call, v[i - 1]->sel_call) == 0;
	free(v);
	return 0;
}

int rp_finish(struct rp_data *d, char *errbuf)
{
	struct rp_counts *k = &d->count;
	size_t nid = 0;
	for (size_t i = 0; i < d->n; i++)
		nid += d->c[i]->id != NULL;
	free(d->byid);
	d->byid = malloc((nid ? nid : 1) * sizeof *d->byid);
	if (!d->byid)
		return errf(errbuf, "out of memory");
	d->nbyid = 0;
	for (size_t i = 0; i < d->n; i++)
		if (d->c[i]->id)
			d->byid[d->nbyid++] = d->c[i];
	if (d->nbyid > 1)
		qsort(d->byid, d->nbyid, sizeof *d->byid, by_id_order);
	/* keep the last of each run of equal ids; drop the others from d->c too */
	size_t w = 0;
	for (size_t i = 0; i < d->nbyid; i++) {
		if (i + 1 < d->nbyid && strcmp(d->byid[i]->id, d->byid[i + 1]->id) == 0) {
			d->byid[i]->gen = -2; /* marked for removal below */
			k->duplicates++;
			continue;
		}
		d->byid[w++] = d->byid[i];
	}
	d->nbyid = w;
	w = 0;
	for (size_t i = 0; i < d->n; i++) {
		if (d->c[i]->gen == -2) {
			rp_cand_free(d->c[i]);
			continue;
		}
		d->c[w++] = d->c[i];
	}
	d->n = w;
	if (d->n > 1)
		qsort(d->c, d->n, sizeof *d->c, by_task_gen);
	if (mark_selector_dups(d) < 0)
		return errf(errbuf, "out of memory");
	k->no_id = k->no_task = k->no_gen = k->no_status = k->timed_no_speedup = 0;
	for (size_t i = 0; i < d->n; i++) {
		const struct rp_cand *c = d->c[i];
		k->no_id += !c->id;
		k->no_task += !c->task;
		k->no_gen += c->gen < 0;
		k->no_status += !c->status;
		k->timed_no_speedup += c->status && strcmp(c->status, ST_TIMED) == 0 && !isfinite(c->sp_base);
	}
	d->finished = 1;
	return 0;
}

struct rp_cand *rp_find(const struct rp_data *d, const char *id)
{
	size_t lo = 0, hi = d->nbyid;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int r = strcmp(d->byid[mid]->id, id);
		if (r == 0)
			return d->byid[mid];
		if (r < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void rp_data_free(struct rp_data *d)
{
	for (size_t i = 0; i < d->n; i++)
		rp_cand_free(d->c[i]);
	free(d->c);
	free(d->byid);
	memset(d, 0, sizeof *d);
}
