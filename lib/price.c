/* price: the price-table parser, the lookup and the accounting rule; see price.h. */
#include "price.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"
#include "err.h"

static int parse_price(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || v < 0)
		return -1;
	*out = v;
	return 0;
}

int price_parse(struct price_table *t, const char *text, const char *name, char *errbuf)
{
	memset(t, 0, sizeof *t);
	long line = 0;
	const char *p = text;
	while (*p) {
		size_t n = strcspn(p, "\n");
		line++;
		char buf[512];
		if (n >= sizeof buf) {
			price_free(t);
			return errf(errbuf, "%s: line %ld: line too long", name, line);
		}
		memcpy(buf, p, n);
		buf[n] = '\0';
		p += n + (p[n] == '\n');
		char *hash = strchr(buf, '#');
		if (hash)
			*hash = '\0';
		char *f[4];
		int nf = 0;
		for (char *tok = buf; nf < 4;) {
			tok += strspn(tok, " \t\r");
			if (!*tok)
				break;
			f[nf++] = tok;
			tok += strcspn(tok, " \t\r");
			if (*tok)
				*tok++ = '\0';
		}
		if (nf == 0)
			continue;
		struct price pr;
		if (nf != 3 || parse_price(f[1], &pr.in) < 0 || parse_price(f[2], &pr.out) < 0) {
			price_free(t);
			return errf(errbuf, "%s: line %ld: want \"NAME USD_PER_MTOK_IN USD_PER_MTOK_OUT\"", name, line);
		}
		struct price *np = realloc(t->p, (t->n + 1) * sizeof *np);
		if (!np || !(pr.name = strdup(f[0]))) {
			if (np)
				t->p = np;
			price_free(t);
			return errf(errbuf, "out of memory");
		}
		t->p = np;
		t->p[t->n++] = pr;
	}
	return 0;
}

int price_load(struct price_table *t, const char *path, char *errbuf)
{
	memset(t, 0, sizeof *t);
	char *text;
	if (file_read(path, &text, NULL, errbuf) < 0)
		return -1;
	int rc = price_parse(t, text, path, errbuf);
	free(text);
	return rc;
}

static const struct price *find(const struct price_table *t, const char *name)
{
	for (size_t i = 0; name && i < t->n; i++)
		if (strcmp(t->p[i].name, name) == 0)
			return &t->p[i];
	return NULL;
}

double price_of(const struct price_table *t, const char *model, const char *generator, double tok_in,
		   double tok_out)
{
	const struct price *p = find(t, model);
	if (!p)
		p = find(t, generator);
	if (!p)
		p = find(t, "*");
	return p ? (tok_in * p->in + tok_out * p->out) / 1e6 : NAN;
}

double price_call(const struct price_table *t, const char *reported, const char *asked, const char *provider,
		  double tok_in, double tok_out)
{
	const struct price *p = find(t, reported);
	if (!p)
		p = find(t, asked);
	if (!p)
		p = find(t, provider);
	if (!p)
		p = find(t, "*");
	return p ? (tok_in * p->in + tok_out * p->out) / 1e6 : NAN;
}

static double num(const json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* A token count: missing, negative or not a number reads 0. */
static double tokens(const json_t *o, const char *k)
{
	double v = num(o, k);
	return isfinite(v) && v > 0 ? v : 0;
}

void price_acct_add(struct price_acct *a, const json_t *call, const struct price_table *t, const char *asked)
{
	if (!json_is_object(call))
		return;
	double in = tokens(call, "tokens_in"), out = tokens(call, "tokens_out");
	double lat = num(call, "latency_s");
	const char *model = json_string_value(json_object_get(call, "model"));
	const char *prov = json_string_value(json_object_get(call, "provider"));
	const char *own = json_string_value(json_object_get(call, "model_asked"));
	if (own)
		asked = own;
	int unbought = json_is_true(json_object_get(call, "cached")) || json_is_true(json_object_get(call, "replayed"));
	a->calls++;
	if (isfinite(lat) && lat > 0)
		a->latency += lat;
	double stated = num(call, unbought ? "saved_usd" : "cost_usd");
	double m = isfinite(stated) && stated >= 0 ? stated : t ? price_call(t, model, asked, prov, in, out) : NAN;
	/* No tokens, no money: a call that failed before an answer costs 0. */
	if (!isfinite(m) && in == 0 && out == 0)
		m = 0;
	if (unbought) {
		a->cached++;
		a->cached_in += in;
		a->cached_out += out;
		if (isfinite(m))
			a->saved += m;
		else
			a->unpriced_saved++;
		return;
	}
	a->tok_in += in;
	a->tok_out += out;
	if (isfinite(m))
		a->cost += m;
	else
		a->unpriced++;
}

json_t *price_acct_json(const struct price_acct *a)
{
	json_t *u = json_pack("{s:I, s:I, s:f, s:I}", "tokens_in", (json_int_t)a->tok_in, "tokens_out",
			      (json_int_t)a->tok_out, "latency_s", a->latency, "calls", (json_int_t)a->calls);
	if (!u)
		return NULL;
	if (!a->unpriced)
		json_object_set_new(u, "cost_usd", json_real(a->cost));
	if (a->cached) {
		json_object_set_new(u, "cached", json_integer((json_int_t)a->cached));
		json_object_set_new(u, "cached_tokens_in", json_integer((json_int_t)a->cached_in));
		json_object_set_new(u, "cached_tokens_out", json_integer((json_int_t)a->cached_out));
		if (!a->unpriced_saved)
			json_object_set_new(u, "saved_usd", json_real(a->saved));
	}
	return u;
}

void price_free(struct price_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->p[i].name);
	free(t->p);
	memset(t, 0, sizeof *t);
}
