/*
 * select_summary: one small object that sums an archive up for one task
 * and back end (kselect --summary; see select_summary.h).
 *
 * The pipelines ask two questions per generation — which generation is the
 * last, and how did generation G fare next to the best so far — and used
 * to answer them with jq over the whole decompressed archive (jq -s held
 * all of it in memory).  Here each line goes through the span scanner once
 * and leaves only counters behind, so memory does not grow with the
 * archive.  The semantics are the jq ones the pipelines had: every line of
 * the task counts (a repeated id too), generations are numbers >= 0,
 * and the best is the highest time.speedup_vs_baseline among "timed"
 * records (those held back as implausible left out), a later record
 * winning a tie — except that a record with an interval takes the crown
 * only when its interval's lower end is above the holder's speedup.  Without a generation asked for,
 * the statuses counted are those of the highest generation seen so far,
 * restarted whenever a higher one appears.  best_sizes: per benchmark size
 * (its label as task_size_str writes it), the highest speedup over the seed
 * at that size among timed records and the sizes slow records finished
 * (implausible ones left out) — ktime --best-sizes, so that early rejection
 * at a size measures against that size's best, not the best over all.
 */
#include "select_summary.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jscan.h"
#include "rec.h"
#include "task.h"

enum { S_ID, S_TASK, S_BACKEND, S_STATUS, S_GEN, S_TIME, S_NKEYS };
static const char *const sum_keys[S_NKEYS] = {"id", "task", "backend", "status", "generation", "time"};

struct sum_status {
	char name[48]; /* "null" when the status is not a string */
	long n;
};

struct sel_sum {
	const char *task, *backend;
	long want;     /* generation whose statuses are counted; < 0: the last */
	long records;
	long last;     /* -1: none */
	long counted;  /* the generation the statuses are of; -1: none yet */
	struct sum_status *st;
	int nst, capst;
	int oom;
	/* the best timed record so far */
	int have_best;
	char best_id[128];
	int best_has_id, best_has_gen, best_has_seed;
	double best_gen, best_speedup, best_seed;
	json_t *best_sizes; /* label -> best speedup over the seed there */
};

struct sel_sum *sel_sum_new(const char *task, const char *backend, long generation)
{
	struct sel_sum *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->task = task;
	s->backend = backend;
	s->want = generation;
	s->last = -1;
	s->counted = generation >= 0 ? generation : -1;
	if (!(s->best_sizes = json_object())) {
		free(s);
		return NULL;
	}
	return s;
}

void sel_sum_free(struct sel_sum *s)
{
	if (!s)
		return;
	free(s->st);
	json_decref(s->best_sizes);
	free(s);
}

/* Whether span v is the JSON string want (no escapes in ours). */
static int span_is(struct js_span v, const char *want)
{
	char buf[256];
	return js_string(v, buf, sizeof buf) == 0 && strcmp(buf, want) == 0;
}

static void count_status(struct sel_sum *s, struct js_span v)
{
	char name[sizeof s->st->name];
	if (js_string(v, name, sizeof name) != 0)
		memcpy(name, "null", 5);
	for (int i = 0; i < s->nst; i++)
		if (strcmp(s->st[i].name, name) == 0) {
			s->st[i].n++;
			return;
		}
	if (s->nst == s->capst) {
		int nc = s->capst ? s->capst * 2 : 16;
		struct sum_status *ns = realloc(s->st, (size_t)nc * sizeof *ns);
		if (!ns) {
			s->oom = 1;
			return;
		}
		s->st = ns;
		s->capst = nc;
	}
	memcpy(s->st[s->nst].name, name, sizeof name);
	s->st[s->nst++].n = 1;
}

/* The per-size speedups over the seed of a timed record, or of the sizes
 * a slow one finished, into best_sizes (the caller has left out records
 * held back as implausible). */
static void take_sizes(struct sel_sum *s, const struct js_span *sp)
{
	struct js_span sizes, el, v;
	if (js_path(sp[S_TIME], "sizes", &sizes) != 0)
		return;
	for (size_t i = 0; i < 64 && js_index(sizes, i, &el) == 0; i++) {
		double d;
		if (js_path(el, "speedup_vs_seed", &v) != 0 || js_number(v, &d) != 0 || !(d > 0) ||
		    js_path(el, "size", &v) != 0)
			continue;
		json_t *size = json_loadb(v.p, v.n, 0, NULL);
		char lab[256];
		if (!json_is_object(size)) {
			json_decref(size);
			continue;
		}
		task_size_str(size, lab, sizeof lab);
		json_decref(size);
		json_t *have = json_object_get(s->best_sizes, lab);
		if ((!have || d > json_real_value(have)) && json_object_set_new(s->best_sizes, lab, json_real(d)) != 0)
			s->oom = 1;
	}
}

/* A timed record (not held back as implausible: the caller's) as the best
 * so far, where it is. */
static void take_best(struct sel_sum *s, const struct js_span *sp)
{
	struct js_span v;
	double d;
	if (js_path(sp[S_TIME], "speedup_vs_baseline", &v) != 0 || js_number(v, &d) != 0)
		return;
	/* The crown passes only when the difference exceeds the noise: a
	 * challenger with an interval (time.speedup_vs_baseline_ci) must have
	 * its lower end above the holder's speedup; one without, its speedup
	 * at least the holder's (a later record wins a tie). */
	struct js_span ci, lo_span;
	double lo;
	int has_ci = js_path(sp[S_TIME], "speedup_vs_baseline_ci", &ci) == 0 && js_index(ci, 0, &lo_span) == 0 &&
		     js_number(lo_span, &lo) == 0;
	if (s->have_best && (has_ci ? !(lo > s->best_speedup) : d < s->best_speedup))
		return;
	s->have_best = 1;
	s->best_speedup = d;
	s->best_has_id = js_string(sp[S_ID], s->best_id, sizeof s->best_id) == 0;
	s->best_has_gen = js_number(sp[S_GEN], &s->best_gen) == 0;
	s->best_has_seed = js_path(sp[S_TIME], "speedup_vs_seed", &v) == 0 && js_number(v, &s->best_seed) == 0;
}

int sel_sum_line(struct sel_sum *s, const char *line, size_t n, char *errbuf)
{
	if (strspn(line, " \t") >= n)
		return 0;
	struct js_span sp[S_NKEYS];
	if (js_fields(line, n, sum_keys, S_NKEYS, sp, errbuf) != 0)
		return -1;
	if (!span_is(sp[S_TASK], s->task) || !span_is(sp[S_BACKEND], s->backend))
		return 0;
	s->records++;
	double d;
	long g = js_number(sp[S_GEN], &d) == 0 && d >= 0 && d < 1e15 ? (long)d : -1;
	int exact = g >= 0 && (double)g == d;
	if (g > s->last)
		s->last = g;
	if (s->want < 0 && exact && g > s->counted) {
		s->counted = g;
		s->nst = 0;
	}
	if (exact && g == s->counted)
		count_status(s, sp[S_STATUS]);
	/* Timed, and the sizes a slow one finished; one held back as
	 * implausible (above the device's peak) is neither the best nor a size's. */
	int timed = span_is(sp[S_STATUS], ST_TIMED);
	struct js_span v;
	if ((timed || span_is(sp[S_STATUS], ST_SLOW)) && js_path(sp[S_TIME], "implausible", &v) != 0) {
		if (timed)
			take_best(s, sp);
		take_sizes(s, sp);
	}
	return 0;
}

static int by_name(const void *x, const void *y)
{
	return strcmp(((const struct sum_status *)x)->name, ((const struct sum_status *)y)->name);
}

/* An integral number as an integer (generation 3, not 3.0), else a real. */
static json_t *number(double d) { return d == floor(d) && fabs(d) < 1e15 ? json_integer((json_int_t)d) : json_real(d); }

json_t *sel_sum_json(const struct sel_sum *s)
{
	if (s->oom)
		return NULL;
	struct sum_status *st = malloc(((size_t)s->nst + 1) * sizeof *st);
	json_t *statuses = json_object(), *best = json_null();
	if (!st || !statuses) {
		free(st);
		json_decref(statuses);
		return NULL;
	}
	if (s->nst) { /* s->st is NULL until a status is counted */
		memcpy(st, s->st, (size_t)s->nst * sizeof *st);
		qsort(st, (size_t)s->nst, sizeof *st, by_name);
	}
	for (int i = 0; i < s->nst; i++)
		json_object_set_new(statuses, st[i].name, json_integer(st[i].n));
	free(st);
	if (s->have_best)
		best = json_pack("{so,so,so,so}", "id", s->best_has_id ? json_string(s->best_id) : json_null(), "generation",
		                 s->best_has_gen ? number(s->best_gen) : json_null(), "speedup_vs_baseline",
		                 json_real(s->best_speedup), "speedup_vs_seed",
		                 s->best_has_seed ? json_real(s->best_seed) : json_null());
	return json_pack("{ss,ss,sI,sI,sI,so,so,sO}", "task", s->task, "backend", s->backend, "records",
	                 (json_int_t)s->records, "last_generation", (json_int_t)s->last, "generation",
	                 (json_int_t)s->counted, "statuses", statuses, "best", best, "best_sizes", s->best_sizes);
}
