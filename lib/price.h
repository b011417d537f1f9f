/*
 * report_price: the price table kreport turns model tokens into money with.
 *
 * A table file holds one price a line: "NAME USD_PER_MTOK_IN USD_PER_MTOK_OUT"
 * (dollars per million tokens), '#' starts a comment.  NAME is matched
 * against a record's origin.model, then its origin.generator; "*" matches
 * anything (docs/reports.md).  The table owns its strings; rp_prices_free
 * releases them.  Lookups return values, nothing to free.
 */
#ifndef KSCI_PRICE_H
#define KSCI_PRICE_H

#include <stddef.h>

struct rp_price {
	char *name;
	double in, out; /* USD per million tokens */
};

struct rp_prices {
	struct rp_price *p;
	size_t n;
};

/* Parse a table from a file.  -1 with "FILE: line N: ..." in errbuf. */
int rp_prices_load(struct rp_prices *t, const char *path, char *errbuf);
/* Same from a string (name for messages). */
int rp_prices_parse(struct rp_prices *t, const char *text, const char *name, char *errbuf);
/* Money for the tokens, by model then generator then "*"; NAN when no line
 * matches.  model and generator may be NULL. */
double rp_price_of(const struct rp_prices *t, const char *model, const char *generator, double tok_in,
		   double tok_out);
void rp_prices_free(struct rp_prices *t);

#endif
