/*
 * mutate: knob parsing and the move list; see mutate.h.
 *
 * Parsing is line based and deliberately narrow: a line takes part only when
 * its comment begins with "ktune:", and then its code must be one of the two
 * documented forms, otherwise the whole parse fails with the line number (a
 * knob the author meant to mark but that silently never moves would waste a
 * whole evolution).  Moves are enumerated exhaustively so that duplicate
 * avoidance in kgen can tell "every child tried" from "unlucky draws".
 */
#include "mutate.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

uint64_t mut_mix(uint64_t h, uint64_t v)
{
	uint64_t z = h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t mut_hash_str(uint64_t h, const char *s)
{
	/* FNV-1a over the bytes, then mixed, so short strings spread well. */
	uint64_t f = 0xcbf29ce484222325ULL;
	for (; s && *s; s++)
		f = (f ^ (unsigned char)*s) * 0x100000001b3ULL;
	return mut_mix(h, f);
}

uint64_t mut_rng_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0; the modulo bias is irrelevant at these sizes. */
static size_t rng_below(uint64_t *st, size_t n)
{
	return (size_t)(mut_rng_next(st) % n);
}

static int is_ident0(int c) { return isalpha(c) || c == '_'; }
static int is_ident(int c) { return isalnum(c) || c == '_'; }

static char *dupn(const char *s, size_t n)
{
	char *d = malloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

static void knob_free(struct mut_knob *kb)
{
	free(kb->name);
	free(kb->value);
	for (size_t i = 0; i < kb->nchoices; i++)
		free(kb->choices[i]);
	free(kb->choices);
}

void mut_free(struct mut_knobs *k)
{
	for (size_t i = 0; i < k->n; i++)
		knob_free(&k->v[i]);
	free(k->v);
	k->v = NULL;
	k->n = 0;
}

/* Split the value list "8 16, 32 64" (up to end) into kb->choices. */
static int parse_choices(const char *p, const char *end, struct mut_knob *kb, int line, char *errbuf)
{
	kb->choices = calloc(MUT_MAX_CHOICES, sizeof *kb->choices);
	if (!kb->choices)
		return errf(errbuf, "out of memory");
	while (p < end) {
		while (p < end && (isspace((unsigned char)*p) || *p == ','))
			p++;
		const char *s = p;
		while (p < end && !isspace((unsigned char)*p) && *p != ',')
			p++;
		if (p == s)
			break;
		size_t n = (size_t)(p - s);
		if (n > MUT_MAX_TOKEN)
			return errf(errbuf, "line %d: ktune value longer than %d bytes", line, MUT_MAX_TOKEN);
		int dup = 0;
		for (size_t i = 0; i < kb->nchoices && !dup; i++)
			dup = strlen(kb->choices[i]) == n && memcmp(kb->choices[i], s, n) == 0;
		if (dup)
			continue;
		if (kb->nchoices == MUT_MAX_CHOICES)
			return errf(errbuf, "line %d: more than %d ktune values", line, MUT_MAX_CHOICES);
		if (!(kb->choices[kb->nchoices++] = dupn(s, n)))
			return errf(errbuf, "out of memory");
	}
	if (kb->nchoices == 0)
		return errf(errbuf, "line %d: ktune comment lists no values", line);
	return 0;
}

/* Code part [s, e) of a marked line: find NAME and VALUE. */
static int parse_code(const char *s, const char *e, const char **name, size_t *nname, const char **val,
		      size_t *nval)
{
	while (e > s && isspace((unsigned char)e[-1]))
		e--;
	const char *p = s;
	while (p < e && isspace((unsigned char)*p))
		p++;
	if (p < e && *p == '#') {
		/* #define NAME VALUE */
		p++;
		while (p < e && isspace((unsigned char)*p))
			p++;
		if ((size_t)(e - p) < 6 || strncmp(p, "define", 6) != 0)
			return -1;
		p += 6;
		if (p >= e || !isspace((unsigned char)*p))
			return -1;
		while (p < e && isspace((unsigned char)*p))
			p++;
		if (p >= e || !is_ident0((unsigned char)*p))
			return -1;
		*name = p;
		while (p < e && is_ident((unsigned char)*p))
			p++;
		*nname = (size_t)(p - *name);
		if (p >= e || !isspace((unsigned char)*p))
			return -1; /* function-like macro or no value */
		while (p < e && isspace((unsigned char)*p))
			p++;
		*val = p;
		while (p < e && !isspace((unsigned char)*p))
			p++;
		*nval = (size_t)(p - *val);
		return p == e && *nval > 0 ? 0 : -1;
	}
	/* ... NAME = VALUE; */
	const char *eq = NULL;
	for (const char *q = p; q < e; q++)
		if (*q == '=')
			eq = q;
	if (!eq || eq == s || strchr("=!<>+-*/%&|^", eq[-1]))
		return -1;
	const char *q = eq;
	while (q > s && isspace((unsigned char)q[-1]))
		q--;
	const char *ne = q;
	while (q > s && is_ident((unsigned char)q[-1]))
		q--;
	if (q == ne || !is_ident0((unsigned char)*q))
		return -1;
	*name = q;
	*nname = (size_t)(ne - q);
	p = eq + 1;
	while (p < e && isspace((unsigned char)*p))
		p++;
	*val = p;
	while (p < e && !isspace((unsigned char)*p) && *p != ';')
		p++;
	*nval = (size_t)(p - *val);
	while (p < e && isspace((unsigned char)*p))
		p++;
	if (p < e && *p == ';')
		p++;
	return p == e && *nval > 0 ? 0 : -1;
}

int mut_parse(const char *src, struct mut_knobs *k, char *errbuf)
{
	k->v = NULL;
	k->n = 0;
	int line = 0;
	for (const char *ls = src; *ls;) {
		const char *le = strchr(ls, '\n');
		if (!le)
			le = ls + strlen(ls);
		line++;
		const char *c = NULL;
		for (const char *q = ls; q + 1 < le; q++)
			if (q[0] == '/' && (q[1] == '/' || q[1] == '*')) {
				c = q;
				break;
			}
		const char *t = c ? c + 2 : NULL;
		while (t && t < le && isspace((unsigned char)*t))
			t++;
		if (t && (size_t)(le - t) >= 6 && strncmp(t, "ktune:", 6) == 0) {
			const char *vend = le;
			if (c[1] == '*') {
				const char *close = strstr(t, "*/");
				if (close && close < le)
					vend = close;
			}
			const char *name, *val;
			size_t nname, nval;
			if (parse_code(ls, c, &name, &nname, &val, &nval) != 0) {
				mut_free(k);
				return errf(errbuf, "line %d: ktune comment must follow '#define NAME VALUE' or 'NAME = VALUE;'", line);
			}
			if (nval > MUT_MAX_TOKEN || nname > MUT_MAX_TOKEN) {
				mut_free(k);
				return errf(errbuf, "line %d: knob name or value longer than %d bytes", line, MUT_MAX_TOKEN);
			}
			if (k->n == MUT_MAX_KNOBS) {
				mut_free(k);
				return errf(errbuf, "line %d: more than %d knobs", line, MUT_MAX_KNOBS);
			}
			if (!k->v && !(k->v = calloc(MUT_MAX_KNOBS, sizeof *k->v))) {
				return errf(errbuf, "out of memory");
			}
			struct mut_knob *kb = &k->v[k->n++];
			kb->name = dupn(name, nname);
			kb->value = dupn(val, nval);
			kb->line = line;
			kb->off = (size_t)(val - src);
			kb->len = nval;
			if (!kb->name || !kb->value) {
				mut_free(k);
				return errf(errbuf, "out of memory");
			}
			if (parse_choices(t + 6, vend, kb, line, errbuf) != 0) {
				mut_free(k);
				return -1;
			}
		}
		ls = *le ? le + 1 : le;
	}
	return 0;
}

static void shuffle(struct mut_move *m, size_t n, uint64_t *st)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = rng_below(st, i);
		struct mut_move t = m[i - 1];
		m[i - 1] = m[j];
		m[j] = t;
	}
}

size_t mut_moves(const struct mut_knobs *k, uint64_t seed, struct mut_move **out)
{
	*out = NULL;
	size_t nalt = 0, npairs = 0;
	size_t *alts = calloc(k->n ? k->n : 1, sizeof *alts);
	if (!alts)
		return (size_t)-1;
	for (size_t i = 0; i < k->n; i++) {
		for (size_t c = 0; c < k->v[i].nchoices; c++)
			alts[i] += strcmp(k->v[i].choices[c], k->v[i].value) != 0;
		nalt += alts[i];
	}
	for (size_t i = 0; i < k->n; i++)
		for (size_t j = i + 1; j < k->n; j++)
			npairs += alts[i] * alts[j];
	int sampled = npairs > MUT_MAX_PAIRS;
	size_t np = sampled ? MUT_MAX_PAIRS : npairs;
	if (nalt == 0) {
		free(alts);
		return 0;
	}
	struct mut_move *s = malloc(nalt * sizeof *s), *p = malloc((np ? np : 1) * sizeof *p);
	struct mut_move *all = malloc((nalt + np) * sizeof *all);
	if (!s || !p || !all) {
		free(s);
		free(p);
		free(all);
		free(alts);
		return (size_t)-1;
	}
	uint64_t st = mut_mix(seed, 0x6b7475ULL);
	size_t ns = 0, npp = 0;
	for (size_t i = 0; i < k->n; i++)
		for (size_t c = 0; c < k->v[i].nchoices; c++)
			if (strcmp(k->v[i].choices[c], k->v[i].value) != 0)
				s[ns++] = (struct mut_move){.c = {{i, c}, {0, 0}}, .n = 1};
	if (!sampled) {
		for (size_t a = 0; a < ns; a++)
			for (size_t b = a + 1; b < ns; b++)
				if (s[a].c[0].knob != s[b].c[0].knob)
					p[npp++] = (struct mut_move){.c = {s[a].c[0], s[b].c[0]}, .n = 2};
	} else {
		while (npp < np) {
			size_t a = rng_below(&st, ns), b = rng_below(&st, ns);
			if (s[a].c[0].knob == s[b].c[0].knob)
				continue;
			if (s[a].c[0].knob > s[b].c[0].knob) {
				size_t t = a;
				a = b;
				b = t;
			}
			p[npp++] = (struct mut_move){.c = {s[a].c[0], s[b].c[0]}, .n = 2};
		}
	}
	shuffle(s, ns, &st);
	shuffle(p, npp, &st);
	/* Interleave: each slot takes a single or a pair with even odds, so
	 * early children explore both step sizes. */
	size_t n = 0, i = 0, j = 0;
	while (i < ns || j < npp) {
		int take_pair = j < npp && (i == ns || (mut_rng_next(&st) & 1));
		all[n++] = take_pair ? p[j++] : s[i++];
	}
	free(s);
	free(p);
	free(alts);
	*out = all;
	return n;
}

char *mut_apply(const char *src, const struct mut_knobs *k, const struct mut_move *m)
{
	size_t srclen = strlen(src), extra = 0;
	for (int i = 0; i < m->n; i++)
		extra += strlen(k->v[m->c[i].knob].choices[m->c[i].choice]);
	char *out = malloc(srclen + extra + 1);
	if (!out)
		return NULL;
	/* Apply in source order so earlier spans stay valid. */
	const struct mut_change *ord[2] = {&m->c[0], &m->c[1]};
	if (m->n == 2 && k->v[ord[0]->knob].off > k->v[ord[1]->knob].off) {
		ord[0] = &m->c[1];
		ord[1] = &m->c[0];
	}
	size_t o = 0, pos = 0;
	for (int i = 0; i < m->n; i++) {
		const struct mut_knob *kb = &k->v[ord[i]->knob];
		const char *nv = kb->choices[ord[i]->choice];
		memcpy(out + o, src + pos, kb->off - pos);
		o += kb->off - pos;
		memcpy(out + o, nv, strlen(nv));
		o += strlen(nv);
		pos = kb->off + kb->len;
	}
	memcpy(out + o, src + pos, srclen - pos);
	o += srclen - pos;
	out[o] = '\0';
	return out;
}
