/* price: the price-table parser and lookup; see price.h. */
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

void price_free(struct price_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->p[i].name);
	free(t->p);
	memset(t, 0, sizeof *t);
}
