/*
 * price: the one price table of ksci and the one rule that turns model calls
 * into money — what kgen's accounting (lib/llm.c: a call's cost_usd, a
 * record's origin.usage), kselect's (strategy.llm), the ledger
 * (docs/providers.md "Accounting") and kreport's money column all use, so
 * that they always agree on a call.
 *
 * A table file holds one price a line: "NAME USD_PER_MTOK_IN USD_PER_MTOK_OUT"
 * (dollars per million tokens), '#' starts a comment, blank lines are
 * skipped, anything else is an error (a typo must not price silently at 0).
 *
 * The matching rule (price_call): NAME must equal the model name exactly
 * (case and all) as the server reported it, else as it was asked for, else
 * the generator (the provider: "openai", "cmd"...), else a "*" line; the
 * first line of that name wins.  Exact, not prefix or pattern: "gpt-4o"
 * must not price "gpt-4o-mini" at sixteen times its cost; a name with no line
 * shows up as "with tokens but no price" in the report instead of as a wrong
 * figure.  docs/reports.md documents the file.
 *
 * The accounting rule (price_acct_add): a call answered without buying it —
 * from the answer cache or a replayed transcript — spent nothing: cost 0,
 * its tokens counted apart as not bought, and its price counted as saved.
 * Any other call spent its tokens and its stated cost_usd, or, where it
 * states none, its tokens at price_call.
 *
 * The table owns its strings; price_free releases them.  Lookups return
 * values, nothing to free; price_acct_json returns a new reference.
 */
#ifndef KSCI_PRICE_H
#define KSCI_PRICE_H

#include <jansson.h>
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
/* Money for one call's tokens by the matching rule: the model the server
 * reported, else the one asked for, else the provider, else "*"; NAN when
 * no line matches.  Any name may be NULL. */
double price_call(const struct price_table *t, const char *reported, const char *asked, const char *provider,
		  double tok_in, double tok_out);

/* What a set of model calls cost, summed by the accounting rule.  Zero it
 * to start ({0}). */
struct price_acct {
	long calls;                   /* calls folded in */
	long cached;                  /* of which answered without buying (cache, replay) */
	double tok_in, tok_out;       /* tokens bought: the other calls' */
	double cached_in, cached_out; /* tokens of the answers not bought */
	double cost;                  /* USD spent, over the bought calls that have a price */
	double saved;                 /* USD the answers not bought would have cost, where priced */
	double latency;               /* seconds, summed */
	long unpriced;                /* bought calls with tokens and neither a cost_usd nor a price */
	long unpriced_saved;          /* answers not bought, with tokens and no price */
};

/* Fold in one call object (lib/llm.h llm_reply_json: tokens_in, tokens_out,
 * cost_usd, saved_usd, cached, replayed, model, model_asked, provider,
 * latency_s).  A call without a stated cost (or, not bought, without
 * saved_usd) is priced from t by price_call, with its model_asked, else
 * asked, as the model asked for; t and asked may be NULL.  A call that is
 * not a JSON object is ignored. */
void price_acct_add(struct price_acct *a, const json_t *call, const struct price_table *t, const char *asked);
/* The sum as a record's origin.usage (docs/record.md): {tokens_in, tokens_out,
 * latency_s, calls, cost_usd (absent when a bought call has no price)} and,
 * when some calls were not bought, cached, cached_tokens_in,
 * cached_tokens_out and saved_usd (absent when one of them has no price). */
json_t *price_acct_json(const struct price_acct *a);
void price_free(struct price_table *t);

#endif
