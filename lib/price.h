/*
 * price: the one price table of ksci — what kgen's accounting (lib/llm.c,
 * a record's origin.usage cost_usd) and kreport's money column turn model
 * tokens into dollars with, so that the two always agree on a call.
 *
 * A table file holds one price a line: "NAME USD_PER_MTOK_IN USD_PER_MTOK_OUT"
 * (dollars per million tokens), '#' starts a comment, blank lines are
 * skipped, anything else is an error (a typo must not price silently at 0).
 *
 * The matching rule, the same for both users: NAME must equal the model name
 * exactly (case and all), else the generator (the provider: "openai",
 * "cmd"...), else a "*" line; the first line of that name wins.  Exact, not
 * prefix or pattern: "gpt-4o" must not price "gpt-4o-mini" at sixteen times
 * its cost; a name with no line shows up as "with tokens but no price" in the
 * report instead of as a wrong figure.  docs/reports.md documents the file.
 *
 * The table owns its strings; price_free releases them.  Lookups return
 * values, nothing to free.
 */
#ifndef KSCI_PRICE_H
#define KSCI_PRICE_H

#include <stddef.h>

struct price {
	char *name;
	double in, out; /* USD per million tokens */
};

struct price_table {
	struct price *p;
	size_t n;
};

/* Parse a table from a file.  -1 with "FILE: line N: ..." in errbuf. */
int price_load(struct price_table *t, const char *path, char *errbuf);
/* Same from a string (name for messages). */
int price_parse(struct price_table *t, const char *text, const char *name, char *errbuf);
/* Money for the tokens, by model then generator then "*"; NAN when no line
 * matches.  model and generator may be NULL. */
double price_of(const struct price_table *t, const char *model, const char *generator, double tok_in,
		double tok_out);
void price_free(struct price_table *t);

#endif
