/*
 * select_pop: the population every strategy stands on; see select_pop.h.
 *
 * Each archive line becomes a struct sel_cand through the span scanner
 * (jscan.h): no JSON tree is built for the 100,000 lines of a large
 * archive, only for the few records chosen as parents (through the fetch
 * callback).  Names that repeat on every line (task and back end, status,
 * bandit arm) are interned once, so a candidate is a fixed-size struct.
 * After the last line, sel_pop_finish indexes ids (the last record of an id
 * wins) and ranks the eligible parents best first; the pick helpers at the
 * end are the pieces of choice every strategy shares.
 */
#include "select_pop.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jscan.h"
#include "rec.h"

enum { K_ID, K_TASK, K_BACKEND, K_STATUS, K_GEN, K_ISLAND, K_PARENTS, K_TIME, K_ORIGIN, K_SOURCE, K_BASE };

/* --- interning ----------------------------------------------------------- */

/* Index in *tab of the n bytes at s (which may hold a NUL, as "task\0backend"
 * does), added when new; -1 when out of memory. */
static int intern(struct sel_pop *p, int **tab, int *ntab, const char *s, size_t n)
{
	for (int i = 0; i < *ntab; i++) {
		int k = (*tab)[i];
		if (p->namelen[k] == n && memcmp(p->names[k], s, n) == 0)
			return i;
	}
	if (p->nnames == p->capnames) {
		int nc = p->capnames ? p->capnames * 2 : 32;
		char **nn = realloc(p->names, (size_t)nc * sizeof *nn);
		if (nn)
			p->names = nn;
		size_t *nl = realloc(p->namelen, (size_t)nc * sizeof *nl);
		if (nl)
			p->namelen = nl;
		if (!nn || !nl)
			return -1;
		p->capnames = nc;
	}
	int *nt = realloc(*tab, (size_t)(*ntab + 1) * sizeof *nt);
	if (nt)
		*tab = nt;
	char *copy = malloc(n + 1);
	if (!nt || !copy) {
		free(copy);
		return -1;
	}
	memcpy(copy, s, n);
	copy[n] = '\0';
	p->names[p->nnames] = copy;
	p->namelen[p->nnames] = n;
	(*tab)[(*ntab)++] = p->nnames++;
	return *ntab - 1;
}

static const char *tb_task(const struct sel_pop *p, int tb) { return p->names[p->tb_names[tb]]; }
const char *sel_status_name(const struct sel_pop *p, int s) { return p->names[p->status_names[s]]; }
const char *sel_arm_name(const struct sel_pop *p, int arm) { return p->names[p->arm_names[arm]]; }

/* --- options ------------------------------------------------------------- */

int sel_feature_parse(const char *spec, struct sel_feature *f, char *errbuf)
{
	memset(f, 0, sizeof *f);
	if (strlen(spec) >= sizeof f->spec)
		return errf(errbuf, "--features: \"%s\" is too long", spec);
	snprintf(f->spec, sizeof f->spec, "%s", spec);
	size_t n = strcspn(spec, ":");
	if (n == 0 || n >= sizeof f->path)
		return errf(errbuf, "--features: \"%s\": expected PATH:BINS[:LO:HI]", spec);
	memcpy(f->path, spec, n);
	f->path[n] = '\0';
	if (spec[n] != ':')
		return errf(errbuf, "--features: \"%s\": missing the number of bins (PATH:BINS)", spec);
	char *e;
	long bins = strtol(spec + n + 1, &e, 10);
	if (e == spec + n + 1 || bins < 1 || bins > 1000)
		return errf(errbuf, "--features: \"%s\": bins must be 1..1000", spec);
	f->bins = (int)bins;
	if (*e == '\0')
		return 0;
	char *e2;
	if (*e != ':' || (f->lo = strtod(e + 1, &e2), e2 == e + 1) || *e2 != ':' ||
	    (f->hi = strtod(e2 + 1, &e), e == e2 + 1) || *e != '\0' || !(f->hi > f->lo))
		return errf(errbuf, "--features: \"%s\": range must be :LO:HI with LO < HI", spec);
	f->have_range = 1;
	return 0;
}

uint64_t sel_child_seed(uint64_t seed, int child)
{
	uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (uint64_t)(child + 1);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return (z ^ (z >> 31)) >> 11;
}

/* --- population ---------------------------------------------------------- */

static int add_key(struct sel_pop *p, const char *k, size_t n)
{
	for (int i = 0; i < p->nkeys; i++)
		if (strlen(p->keys[i]) == n && memcmp(p->keys[i], k, n) == 0)
			return i;
	if (p->nkeys == SEL_MAXKEYS || n >= sizeof p->keybuf[0])
		return -1;
	memcpy(p->keybuf[p->nkeys], k, n);
	p->keybuf[p->nkeys][n] = '\0';
	p->keys[p->nkeys] = p->keybuf[p->nkeys];
	return p->nkeys++;
}

struct sel_pop *sel_pop_new(const struct sel_opts *o, char *errbuf)
{
	struct sel_pop *p = calloc(1, sizeof *p);
	if (!p) {
		errf(errbuf, "out of memory");
		return NULL;
	}
	p->o = o;
	p->tb = -1;
	static const char *const base[] = {"id", "task", "backend", "status", "generation", "island", "parents",
	                                   "time", "origin", "source"};
	for (int i = 0; i < K_BASE; i++)
		add_key(p, base[i], strlen(base[i]));
	for (int i = 0; i < o->nfeat; i++) {
		const char *path = o->feat[i].path;
		if (strcmp(path, "source_length") == 0 || strncmp(path, "knob.", 5) == 0)
			continue;
		if (add_key(p, path, strcspn(path, ".")) < 0) {
			errf(errbuf, "--features: too many distinct fields");
			sel_pop_free(p);
			return NULL;
		}
	}
	rng_seed(&p->rng, o->seed);
	return p;
}

void sel_pop_free(struct sel_pop *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->nnames; i++)
		free(p->names[i]);
	free(p->names);
	free(p->namelen);
	free(p->tb_names);
	free(p->status_names);
	free(p->arm_names);
	free(p->c);
	free(p->elig);
	free(p->hash);
	free(p);
}

const struct sel_cand *sel_pop_cand(const struct sel_pop *p, int i) { return &p->c[i]; }

/* "#define NAME value" in the source, looked for in the JSON text itself:
 * the directive holds no escapes, and decoding 100,000 sources costs. */
static double knob_value(struct js_span src, const char *name)
{
	if (src.n < 2 || src.p[0] != '"')
		return NAN;
	const char *s = src.p + 1, *end = src.p + src.n - 1;
	size_t nl = strlen(name);
	while ((s = memmem(s, (size_t)(end - s), "#define", 7)) != NULL) {
		const char *q = s + 7;
		s = q;
		while (q < end && (*q == ' ' || *q == '\t'))
			q++;
		if ((size_t)(end - q) <= nl + 1 || memcmp(q, name, nl) != 0 || (q[nl] != ' ' && q[nl] != '\t'))
			continue;
		char num[64];
		q += nl;
		while (q < end && (*q == ' ' || *q == '\t'))
			q++;
		size_t k = 0;
		while (q + k < end && k < sizeof num - 1 && strchr("+-.0123456789eExX", q[k]))
			k++;
		memcpy(num, q, k);
		num[k] = '\0';
		char *e;
		double v = strtod(num, &e);
		return k && e != num ? v : NAN;
	}
	return NAN;
}

static double feature_value(struct sel_pop *p, const struct sel_feature *f, const struct js_span *sp)
{
	double v;
	if (strcmp(f->path, "source_length") == 0) {
		long n = js_strlen(sp[K_SOURCE]);
		return n < 0 ? NAN : (double)n;
	}
	if (strncmp(f->path, "knob.", 5) == 0)
		return knob_value(sp[K_SOURCE], f->path + 5);
	size_t rn = strcspn(f->path, ".");
	int k = add_key(p, f->path, rn);
	struct js_span s = sp[k];
	if (f->path[rn] == '.' && js_path(s, f->path + rn + 1, &s) != 0)
		return NAN;
	if (s.n == 4 && memcmp(s.p, "true", 4) == 0)
		return 1;
	if (s.n == 5 && memcmp(s.p, "false", 5) == 0)
		return 0;
	return js_number(s, &v) == 0 ? v : NAN;
}

int sel_intern_arm(struct sel_pop *p, const char *name)
{
	return intern(p, &p->arm_names, &p->narm, name, strlen(name));
}

static int add_arm(struct sel_pop *p, struct sel_cand *c, const char *prefix, struct js_span v)
{
	char buf[SEL_IDLEN + 16], val[SEL_IDLEN];
	if (c->narms == 2 || js_string(v, val, sizeof val) != 0)
		return 0;
	snprintf(buf, sizeof buf, "%s:%s", prefix, val);
	int a = intern(p, &p->arm_names, &p->narm, buf, strlen(buf));
	if (a < 0)
		return -1;
	c->arm[c->narms++] = a;
	return 0;
}

/* The arms a child pulled: the knobs mutate changed, else the kind of
 * plan a model followed (origin.kind; origin.plan.kind in records made
 * before kgen copied it up), else the generator. */
static int child_arms(struct sel_pop *p, struct sel_cand *c, struct js_span origin)
{
	struct js_span ch, el, v;
	if (js_path(origin, "changes", &ch) == 0) {
		for (size_t i = 0; i < 2 && js_index(ch, i, &el) == 0; i++)
			if (js_path(el, "knob", &v) == 0 && add_arm(p, c, "knob", v) != 0)
				return -1;
		if (c->narms)
			return 0;
	}
	if (js_path(origin, "kind", &v) == 0 || js_path(origin, "plan.kind", &v) == 0)
		return add_arm(p, c, "plan", v);
	if (js_path(origin, "generator", &v) == 0 && !(v.n == 6 && memcmp(v.p, "\"seed\"", 6) == 0))
		return add_arm(p, c, "gen", v);
	return 0;
}

int sel_pop_line(struct sel_pop *p, const char *line, size_t n, int file, long lineno, uint64_t off, char *errbuf)
{
	if (strspn(line, " \t") >= n)
		return 0;
	struct js_span sp[SEL_MAXKEYS];
	if (js_fields(line, n, p->keys, p->nkeys, sp, errbuf) != 0)
		return -1;
	char task[128], backend[16], status[32], tb[160];
	if (js_string(sp[K_TASK], task, sizeof task) != 0 || js_string(sp[K_STATUS], status, sizeof status) != 0) {
		p->other++;
		return 0;
	}
	if (js_string(sp[K_BACKEND], backend, sizeof backend) != 0)
		backend[0] = '\0';
	if (strcmp(status, ST_SELECTED) == 0 || (p->o->task && strcmp(task, p->o->task) != 0) ||
	    strcmp(backend, p->o->backend) != 0) {
		p->other++;
		return 0;
	}
	if (p->n == p->cap) {
		size_t nc = p->cap ? p->cap * 2 : 1024;
		struct sel_cand *c = realloc(p->c, nc * sizeof *c);
		if (!c)
			return errf(errbuf, "out of memory");
		p->c = c;
		p->cap = nc;
	}
	struct sel_cand *c = &p->c[p->n];
	memset(c, 0, sizeof *c);
	size_t tl = strlen(task), bl = strlen(backend);
	memcpy(tb, task, tl + 1);
	memcpy(tb + tl + 1, backend, bl + 1);
	c->tb = intern(p, &p->tb_names, &p->ntb, tb, tl + bl + 1);
	c->status = intern(p, &p->status_names, &p->nstatus, status, strlen(status));
	if (c->tb < 0 || c->status < 0)
		return errf(errbuf, "out of memory");
	if (sp[K_ID].n && js_string(sp[K_ID], c->id, sizeof c->id) != 0)
		return errf(errbuf, "\"id\" is not a string of at most %d bytes", SEL_IDLEN - 1);
	struct js_span v;
	double d;
	c->generation = js_number(sp[K_GEN], &d) == 0 && d >= 0 ? (long)d : -1;
	c->island = js_number(sp[K_ISLAND], &d) == 0 && d >= 0 && d < 1e6 ? (int)d : -1;
	if (js_index(sp[K_PARENTS], 0, &v) == 0 && js_string(v, c->parent, sizeof c->parent) != 0)
		c->parent[0] = '\0';
	c->speedup = NAN;
	/* A result above the device's peak (time.implausible) is held back:
	 * never a parent, never the best (docs/tools/ktime.md). */
	struct js_span held;
	if (strcmp(status, ST_TIMED) == 0 && js_path(sp[K_TIME], "speedup_vs_baseline", &v) == 0 &&
	    js_number(v, &d) == 0) {
		c->held = js_path(sp[K_TIME], "implausible", &held) == 0;
		c->speedup = d;
		c->timed = c->id[0] && isfinite(d) && d > 0 && !c->held;
	}
	if (p->o->strategy == SEL_BANDIT && sp[K_ORIGIN].n && child_arms(p, c, sp[K_ORIGIN]) != 0)
		return errf(errbuf, "out of memory");
	for (int i = 0; i < p->o->nfeat; i++)
		c->feat[i] = c->timed ? feature_value(p, &p->o->feat[i], sp) : NAN;
	c->file = file;
	c->line = lineno;
	c->off = off;
	c->len = n;
	p->n++;
	return 0;
}

static uint64_t hash_id(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

int sel_find(const struct sel_pop *p, const char *id)
{
	if (!p->hash || !*id)
		return -1;
	for (size_t h = hash_id(id) & p->hmask;; h = (h + 1) & p->hmask) {
		int i = p->hash[h];
		if (i < 0)
			return -1;
		if (strcmp(p->c[i].id, id) == 0)
			return i;
	}
}

int sel_better(const struct sel_pop *p, int a, int b)
{
	if (p->c[a].speedup != p->c[b].speedup)
		return p->c[a].speedup > p->c[b].speedup;
	return a < b;
}

static const struct sel_pop *sort_pop;
static int by_speedup(const void *x, const void *y)
{
	int a = *(const int *)x, b = *(const int *)y;
	return a == b ? 0 : sel_better(sort_pop, a, b) ? -1 : 1;
}

void sel_pop_rank(struct sel_pop *p)
{
	p->nelig = 0;
	for (size_t i = 0; i < p->n; i++) {
		const struct sel_cand *c = &p->c[i];
		if (c->tb == p->tb && c->timed && !c->dup && !c->bad)
			p->elig[p->nelig++] = (int)i;
	}
	sort_pop = p;
	qsort(p->elig, (size_t)p->nelig, sizeof *p->elig, by_speedup);
}

int sel_pop_finish(struct sel_pop *p, char *errbuf)
{
	if (p->o->task) {
		snprintf(p->task, sizeof p->task, "%s", p->o->task);
		p->tb = p->ntb ? 0 : -1;
	} else if (p->ntb == 1) {
		snprintf(p->task, sizeof p->task, "%s", tb_task(p, 0));
		p->tb = 0;
	} else if (p->ntb == 0) {
		return errf(errbuf, "no --task given and the archive holds no record of back end %s to take it from",
		            p->o->backend);
	} else {
		char list[300] = "";
		for (int i = 0; i < p->ntb && strlen(list) < 200; i++)
			snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", tb_task(p, i));
		return errf(errbuf, "the archive holds several tasks (%s); choose one with --task", list);
	}
	size_t hn = 16;
	while (hn < 2 * p->n + 16)
		hn *= 2;
	p->hash = malloc(hn * sizeof *p->hash);
	p->elig = malloc((p->n + 1) * sizeof *p->elig);
	if (!p->hash || !p->elig)
		return errf(errbuf, "out of memory");
	memset(p->hash, -1, hn * sizeof *p->hash);
	p->hmask = hn - 1;
	p->maxgen = -1;
	for (size_t i = 0; i < p->n; i++) {
		struct sel_cand *c = &p->c[i];
		if (c->tb != p->tb) {
			p->other++;
			continue;
		}
		p->records++;
		if (c->generation > p->maxgen)
			p->maxgen = c->generation;
		if (c->held)
			p->held++;
		else if (rec_status_final(sel_status_name(p, c->status)) && !c->timed)
			p->failed++;
		if (!c->id[0])
			continue;
		for (size_t h = hash_id(c->id) & p->hmask;; h = (h + 1) & p->hmask) {
			int j = p->hash[h];
			if (j < 0 || strcmp(p->c[j].id, c->id) == 0) {
				if (j >= 0)
					p->c[j].dup = 1;
				p->hash[h] = (int)i;
				break;
			}
		}
	}
	p->finished = 1;
	sel_pop_rank(p);
	return 0;
}

void sel_pop_stats(const struct sel_pop *p, struct sel_stats *s)
{
	s->records = p->records;
	s->timed = p->nelig;
	s->failed = p->failed;
	s->held = p->held;
	s->other = p->other;
	s->next_generation = p->o->generation >= 0 ? p->o->generation : p->maxgen + 1;
	s->task = p->task;
}

/* --- the pick helpers every strategy shares ------------------------------ */

int sel_tourney(struct sel_pop *p, const int *list, int n, int t)
{
	int best = list[rng_below(&p->rng, (uint64_t)n)];
	for (int i = 1; i < t; i++) {
		int c = list[rng_below(&p->rng, (uint64_t)n)];
		if (sel_better(p, c, best))
			best = c;
	}
	return best;
}

int sel_pick_has(const struct sel_pick *pick, int c)
{
	if (c == pick->base)
		return 1;
	for (int i = 0; i < pick->ninsp; i++)
		if (pick->insp[i] == c)
			return 1;
	return 0;
}

int sel_pick_add(struct sel_pick *pick, int c)
{
	if (pick->ninsp == SEL_MAXINSP || sel_pick_has(pick, c))
		return 0;
	pick->insp[pick->ninsp++] = c;
	return 1;
}

void sel_add_best(struct sel_pick *pick, const int *list, int n, int want)
{
	for (int i = 0; i < n && pick->ninsp < want && pick->ninsp < SEL_MAXINSP; i++)
		sel_pick_add(pick, list[i]);
}

void sel_pick_init(struct sel_pick *pick)
{
	memset(pick, 0, sizeof *pick);
	pick->island = -1;
}
