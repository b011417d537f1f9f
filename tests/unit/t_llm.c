/* t_llm: retry policy, Retry-After, status classification, cache key,
 * transcript round trip (lib/llm.c), the price rule and the accounting
 * rule (lib/price.c), the ledger; no network. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llm.h"
#include "price.h"
#include "t.h"

int main(void)
{
	uint64_t rng = 1;
	int in_range = 1, grows = 1;
	double prev = 0;
	for (int a = 0; a < 6; a++) {
		double d = llm_backoff(a, 1, 60, -1, &rng), lo = 0.5 * fmin(60, pow(2, a)), hi = fmin(60, pow(2, a));
		in_range &= d >= lo && d < hi;
		grows &= a == 0 || d > prev * 0.49;
		prev = d;
	}
	T_OK(in_range, "backoff: base*2^n with jitter in [0.5, 1)");
	T_OK(grows, "backoff grows");
	T_OK(llm_backoff(20, 1, 60, -1, &rng) < 60, "backoff capped");
	T_OK(llm_backoff(0, 1, 60, 7, &rng) == 7, "Retry-After honoured exactly");
	T_OK(llm_backoff(0, 1, 60, 600, &rng) == 60, "Retry-After capped at max");
	uint64_t r1 = 5, r2 = 5;
	T_OK(llm_backoff(3, 1, 60, -1, &r1) == llm_backoff(3, 1, 60, -1, &r2), "jitter deterministic per seed");

	T_OK(llm_parse_retry_after("3", 0) == 3, "Retry-After seconds");
	T_OK(llm_parse_retry_after("0.5", 0) == 0.5, "Retry-After fraction");
	T_OK(llm_parse_retry_after("Wed, 21 Oct 2015 07:28:10 GMT", 1445412480) == 10, "Retry-After HTTP-date");
	T_OK(llm_parse_retry_after("soon", 0) == -1 && llm_parse_retry_after("-4", 0) == -1, "bad Retry-After ignored");

	int rt = llm_retryable(408) && llm_retryable(409) && llm_retryable(429) && llm_retryable(500) &&
		 llm_retryable(503) && llm_retryable(529) && !llm_retryable(400) && !llm_retryable(401) &&
		 !llm_retryable(403) && !llm_retryable(404);
	T_OK(rt, "retry on 408/409/429/5xx/529 only");
	T_OK(strcmp(llm_status_reason(401, "{}"), "auth") == 0 && strcmp(llm_status_reason(403, ""), "auth") == 0, "401/403 auth");
	T_OK(strcmp(llm_status_reason(429, "{\"error\":{\"code\":\"insufficient_quota\"}}"), "quota") == 0, "429 insufficient_quota is quota");
	T_OK(strcmp(llm_status_reason(429, "{\"error\":{\"code\":\"rate_limit_exceeded\"}}"), "rate_limited") == 0, "429 rate limit");
	T_OK(strcmp(llm_status_reason(400, "Your credit balance is too low"), "quota") == 0, "anthropic billing is quota");
	T_OK(strcmp(llm_status_reason(529, ""), "overloaded") == 0 && strcmp(llm_status_reason(502, ""), "server_error") == 0,
	     "529 overloaded, 5xx server_error");

	struct llm_config c = {.provider = "openai", .model = "m", .temperature = 0.2, .max_tokens = 100, .n = 1};
	char k1[65], k2[65], k3[65], k4[65];
	llm_cache_key(&c, "sys", "prompt", k1);
	llm_cache_key(&c, "sys", "prompt", k2);
	T_OK(strcmp(k1, k2) == 0 && strlen(k1) == 64, "cache key stable");
	c.temperature = 0.3;
	llm_cache_key(&c, "sys", "prompt", k3);
	T_OK(strcmp(k1, k3) != 0, "cache key sees parameters");
	c.temperature = 0.2;
	c.model = "m2";
	llm_cache_key(&c, "sys", "prompt", k4);
	T_OK(strcmp(k1, k4) != 0, "cache key sees the model");
	c.model = "m";
	llm_cache_key(&c, "sy", "sprompt", k4);
	T_OK(strcmp(k1, k4) != 0, "cache key separates system from prompt");
	c.provider = "anthropic";
	llm_cache_key(&c, "sys", "prompt", k4);
	T_OK(strcmp(k1, k4) != 0, "answer-cache-shared-across-providers: the key sees the provider");
	c.provider = "openai";
	c.base_url = "http://127.0.0.1:1/v1";
	llm_cache_key(&c, "sys", "prompt", k4);
	T_OK(strcmp(k1, k4) != 0, "the key sees the endpoint");
	c.base_url = NULL;

	/* cmd provider + transcript round trip, no network. */
	char dir[] = "/tmp/t_llm.XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	char tr[256], cache[256], e[ERRBUF];
	snprintf(tr, sizeof tr, "%s/tr.gz", dir);
	snprintf(cache, sizeof cache, "%s/cache", dir);
	struct llm_config cc = {.provider = "cmd", .command = "cat; echo done", .model = "local", .transcript = tr,
				.cache_dir = cache, .temperature = -1, .max_retries = -1};
	struct llm_reply r;
	int rc = llm_complete(&cc, "S", "hello", &r, e);
	T_OK(rc == 0 && strcmp(r.text, "hellodone\n") == 0 && !r.cached, "cmd provider answers from stdout");
	long long off = (long long)json_integer_value(json_object_get(r.exchange, "offset"));
	json_t *x = llm_transcript_read(tr, off, e);
	T_OK(x && strcmp(json_string_value(json_object_get(x, "prompt")), "hello") == 0, "transcript entry readable at its offset");
	json_decref(x);
	llm_reply_free(&r);
	rc = llm_complete(&cc, "S", "hello", &r, e);
	T_OK(rc == 0 && r.cached && strcmp(r.text, "hellodone\n") == 0 && r.exchange, "second call from the cache, still pointing at the exchange");
	llm_reply_free(&r);
	rc = llm_complete(&cc, "S", "again", &r, e);
	off = (long long)json_integer_value(json_object_get(r.exchange, "offset"));
	x = llm_transcript_read(tr, off, e);
	T_OK(rc == 0 && off > 0 && x && strcmp(json_string_value(json_object_get(x, "prompt")), "again") == 0,
	     "second exchange appended as its own member");
	json_decref(x);
	llm_reply_free(&r);

	/* The cmd provider runs through lib/proc: system and model in the
	 * environment, the prompt on stdin, the command's stderr left alone. */
	struct llm_config ce = {.provider = "cmd", .model = "mx", .temperature = -1, .max_retries = -1,
				.command = "printf '%s|%s|' \"$KSCI_LLM_SYSTEM\" \"$KSCI_LLM_MODEL\"; cat"};
	rc = llm_complete(&ce, "the system", "the prompt", &r, e);
	T_OK(rc == 0 && strcmp(r.text, "the system|mx|the prompt") == 0, "cmd provider: environment and stdin (%s)",
	     r.text ? r.text : e);
	llm_reply_free(&r);
	size_t big = 1 << 20;
	char *longp = malloc(big + 1);
	memset(longp, 'p', big);
	longp[big] = '\0';
	ce.command = "echo answer";
	rc = llm_complete(&ce, "S", longp, &r, e);
	T_OK(rc == 0 && strcmp(r.text, "answer\n") == 0, "cmd provider: a command that ignores a 1 MiB prompt still answers");
	llm_reply_free(&r);
	free(longp);
	ce.command = "exit 3";
	rc = llm_complete(&ce, "S", "p", &r, e);
	T_OK(rc < 0 && strcmp(r.reason, "cmd_failed") == 0 && strstr(e, "exit 3"), "cmd provider: failure keeps its reason (%s)", e);
	llm_reply_free(&r);
	ce.command = "kill -9 $$";
	rc = llm_complete(&ce, "S", "p", &r, e);
	T_OK(rc < 0 && strcmp(r.reason, "cmd_failed") == 0 && strstr(e, "signal 9"), "cmd provider: killed by a signal (%s)", e);
	llm_reply_free(&r);
	ce.command = "sleep 5";
	ce.timeout = 0.3;
	rc = llm_complete(&ce, "S", "p", &r, e);
	T_OK(rc < 0 && strcmp(r.reason, "timeout") == 0, "cmd provider: a hang is a timeout (%s)", e);
	llm_reply_free(&r);
	ce.timeout = 0;

	/* One price table: the cost kgen's accounting records for a call is the
	 * money kreport gives the same tokens of the same model and generator. */
	char prices[256];
	snprintf(prices, sizeof prices, "%s/prices", dir);
	FILE *pf = fopen(prices, "w");
	fputs("# model in out\nmx 2 8\ncmd 1 1\n* 0.5 0.5\n", pf);
	fclose(pf);
	struct price_table pt;
	T_OK(price_load(&pt, prices, e) == 0, "price table loads");
	ce.prices = prices;
	ce.command = "echo a fairly long answer of some forty bytes";
	rc = llm_complete(&ce, "system", "a prompt of a few more bytes than that", &r, e);
	double want = price_of(&pt, "mx", "cmd", (double)r.tokens_in, (double)r.tokens_out);
	T_OK(rc == 0 && r.tokens_in > 0 && r.cost_usd == want, "same-price: llm and kreport price a call alike (%g, %g)",
	     r.cost_usd, want);
	llm_reply_free(&r);
	/* Bug: llm's own table skipped the generator line and priced an unlisted
	 * model by "*"; kreport priced it by "cmd". */
	ce.model = "unlisted";
	rc = llm_complete(&ce, "system", "another prompt", &r, e);
	want = price_of(&pt, "unlisted", "cmd", (double)r.tokens_in, (double)r.tokens_out);
	T_OK(rc == 0 && r.cost_usd == want && want == (r.tokens_in + r.tokens_out) / 1e6,
	     "same-price: an unlisted model is priced by its provider's line, as kreport does");
	llm_reply_free(&r);
	price_free(&pt);
	pf = fopen(prices, "w");
	fputs("mx 2\n", pf);
	fclose(pf);
	ce.model = "mx";
	rc = llm_complete(&ce, "system", "a third prompt", &r, e);
	T_OK(rc == 0 && isnan(r.cost_usd), "a table kreport rejects prices nothing in the accounting either");
	llm_reply_free(&r);

	/* The matching rule: the model as the server reported it, else as asked
	 * for, else the provider, else "*". */
	T_OK(price_parse(&pt, "gpt-4o-2024 1 1\ngpt-4o 2 2\nopenai 3 3\n* 4 4\n", "p", e) == 0, "rule table parses");
	T_OK(price_call(&pt, "gpt-4o-2024", "gpt-4o", "openai", 1e6, 0) == 1 &&
	     price_call(&pt, "gpt-4o-2024-11", "gpt-4o", "openai", 1e6, 0) == 2 &&
	     price_call(&pt, NULL, "gpt-4o-mini", "openai", 1e6, 0) == 3 &&
	     price_call(&pt, "x", "y", "anthropic", 1e6, 0) == 4, "price_call: reported, asked, provider, *");
	price_free(&pt);

	/* The accounting rule: an answer not bought costs 0 and shows what it saved. */
	T_OK(price_parse(&pt, "m 1 2\n", "p", e) == 0, "acct table parses");
	struct price_acct pa = {0};
	json_t *bought = json_pack("{s:s, s:s, s:i, s:i, s:f, s:f}", "provider", "cmd", "model", "m", "tokens_in", 1000000,
				   "tokens_out", 0, "cost_usd", 1.0, "latency_s", 0.5);
	json_t *hit = json_pack("{s:s, s:s, s:i, s:i, s:b, s:f}", "provider", "cmd", "model", "m", "tokens_in", 1000000,
				"tokens_out", 1000000, "cached", 1, "cost_usd", 3.0);
	json_t *bare = json_pack("{s:s, s:s, s:i, s:i}", "provider", "cmd", "model", "m", "tokens_in", 2000000,
				 "tokens_out", 0);
	json_t *failed = json_pack("{s:s, s:s, s:i, s:i}", "provider", "cmd", "model", "zz", "tokens_in", 0, "tokens_out", 0);
	price_acct_add(&pa, bought, NULL, NULL);
	price_acct_add(&pa, hit, &pt, NULL);
	T_OK(pa.calls == 2 && pa.cached == 1 && pa.tok_in == 1e6 && pa.tok_out == 0 && pa.cost == 1.0 &&
	     pa.cached_in == 1e6 && pa.cached_out == 1e6 && pa.saved == 3.0 && pa.unpriced == 0,
	     "cached call: cost 0 whatever it states, tokens apart, saved priced by the table (%g %g)", pa.cost, pa.saved);
	price_acct_add(&pa, bare, NULL, NULL);
	T_OK(pa.unpriced == 1 && pa.tok_in == 3e6 && pa.cost == 1.0, "a bought call without cost or table: unpriced");
	price_acct_add(&pa, failed, NULL, NULL);
	T_OK(pa.unpriced == 1 && pa.calls == 4, "a call without tokens costs 0 even unpriced");
	json_t *u = price_acct_json(&pa);
	T_OK(u && !json_object_get(u, "cost_usd") && json_integer_value(json_object_get(u, "calls")) == 4 &&
	     json_integer_value(json_object_get(u, "cached")) == 1 &&
	     json_integer_value(json_object_get(u, "tokens_in")) == 3000000 &&
	     json_integer_value(json_object_get(u, "cached_tokens_out")) == 1000000 &&
	     json_real_value(json_object_get(u, "saved_usd")) == 3.0,
	     "usage: no cost_usd while a bought call has no price; cached and saved_usd");
	json_decref(u);
	struct price_acct pb = {0};
	price_acct_add(&pb, bare, &pt, NULL);
	price_acct_add(&pb, hit, NULL, NULL);
	u = price_acct_json(&pb);
	T_OK(u && json_real_value(json_object_get(u, "cost_usd")) == 2.0 && !json_object_get(u, "saved_usd") &&
	     pb.unpriced_saved == 1, "table prices a bare call; a cached one with no price: no saved_usd");
	json_decref(u);
	/* A call carries the model asked for when the server named another:
	 * kreport prices it by that, as kgen did, without the record's help. */
	struct price_acct pc = {0};
	json_t *dated = json_pack("{s:s, s:s, s:s, s:i, s:i}", "provider", "openai", "model", "m-2025-01",
				  "model_asked", "m", "tokens_in", 1000000, "tokens_out", 0);
	price_acct_add(&pc, dated, &pt, "other");
	T_OK(pc.cost == 1.0 && pc.unpriced == 0, "model_asked prices a call whose reported model has no line");
	json_decref(dated);
	json_t *arr = json_pack("[O, O]", bought, hit);
	u = llm_usage_json(arr);
	T_OK(u && json_real_value(json_object_get(u, "cost_usd")) == 1.0 &&
	     json_integer_value(json_object_get(u, "tokens_out")) == 0 && !json_object_get(u, "saved_usd"),
	     "llm_usage_json: the rule with the calls' own costs");
	json_decref(u);
	json_decref(arr);
	json_decref(bought);
	json_decref(hit);
	json_decref(bare);
	json_decref(failed);
	price_free(&pt);

	/* The ledger: one line per call, cached ones at cost 0 with saved_usd,
	 * each joined to its accounting object by call_id. */
	char ledger[256];
	snprintf(ledger, sizeof ledger, "%s/ledger.ndjson", dir);
	pf = fopen(prices, "w");
	fputs("led 1 1\n", pf);
	fclose(pf);
	struct llm_config cl = {.provider = "cmd", .command = "echo an answer of some length", .model = "led",
				.cache_dir = cache, .temperature = -1, .max_retries = -1, .prices = prices,
				.ledger = ledger, .stage = "write", .ref = "write.txt:base:0", .tool = "t_llm"};
	struct llm_reply lr1, lr2;
	int lrc1 = llm_complete(&cl, "S", "ledger prompt", &lr1, e);
	int lrc2 = llm_complete(&cl, "S", "ledger prompt", &lr2, e);
	json_t *a1 = llm_reply_json(&cl, &lr1, "write"), *a2 = llm_reply_json(&cl, &lr2, "write");
	T_OK(lrc1 == 0 && lrc2 == 0 && !lr1.cached && lr2.cached && lr1.cost_usd > 0 && lr2.cost_usd == 0 &&
	     lr2.saved_usd == lr1.cost_usd && isnan(lr1.saved_usd) && strlen(lr1.call_id) == 16 &&
	     strcmp(lr1.call_id, lr2.call_id) != 0,
	     "a cached answer costs 0 and saves what the first call cost (%g %g %g)", lr1.cost_usd, lr2.cost_usd, lr2.saved_usd);
	T_OK(json_real_value(json_object_get(a2, "cost_usd")) == 0 &&
	     json_real_value(json_object_get(a2, "saved_usd")) == lr1.cost_usd && json_is_true(json_object_get(a2, "cached")) &&
	     !json_object_get(a1, "saved_usd"), "accounting object: cost_usd 0, saved_usd, cached");
	FILE *lf = fopen(ledger, "r");
	char line[4096];
	int nl = 0, good = 1;
	while (lf && fgets(line, sizeof line, lf)) {
		json_t *l = json_loads(line, 0, NULL);
		json_t *want_acct = nl == 0 ? a1 : a2;
		good &= l && strcmp(json_string_value(json_object_get(l, "kind")), "call") == 0 &&
			strcmp(json_string_value(json_object_get(l, "tool")), "t_llm") == 0 &&
			strcmp(json_string_value(json_object_get(l, "stage")), "write") == 0 &&
			strcmp(json_string_value(json_object_get(l, "ref")), "write.txt:base:0") == 0 &&
			json_is_true(json_object_get(l, "ok")) && json_is_string(json_object_get(l, "time")) &&
			json_equal(json_object_get(l, "call_id"), json_object_get(want_acct, "call_id")) &&
			json_equal(json_object_get(l, "cost_usd"), json_object_get(want_acct, "cost_usd")) &&
			json_equal(json_object_get(l, "tokens_in"), json_object_get(want_acct, "tokens_in")) &&
			json_equal(json_object_get(l, "cached"), json_object_get(want_acct, "cached"));
		json_decref(l);
		nl++;
	}
	if (lf)
		fclose(lf);
	T_OK(nl == 2 && good, "ledger: one line per call, the record's accounting with kind, time, tool, stage, ref, ok");
	json_decref(a1);
	json_decref(a2);
	llm_reply_free(&lr1);
	llm_reply_free(&lr2);
	/* A failed call is in the ledger too, with its reason. */
	cl.command = "exit 4";
	cl.cache_dir = NULL;
	lrc1 = llm_complete(&cl, "S", "failing prompt", &lr1, e);
	lf = fopen(ledger, "r");
	json_t *last = NULL;
	while (lf && fgets(line, sizeof line, lf)) {
		json_decref(last);
		last = json_loads(line, 0, NULL);
	}
	if (lf)
		fclose(lf);
	T_OK(lrc1 < 0 && last && json_is_false(json_object_get(last, "ok")) &&
	     strcmp(json_string_value(json_object_get(last, "reason")), "cmd_failed") == 0,
	     "ledger: a failed call has its line, ok false and the reason");
	json_decref(last);
	llm_reply_free(&lr1);
	/* A ledger that cannot be written: the call still answers, and its
	 * accounting says so. */
	cl.command = "echo x";
	cl.ledger = "/nonexistent-dir/ledger.ndjson";
	lrc1 = llm_complete(&cl, "S", "p", &lr1, e);
	a1 = llm_reply_json(&cl, &lr1, "write");
	T_OK(lrc1 == 0 && lr1.ledger_errno == ENOENT && json_is_string(json_object_get(a1, "ledger_error")),
	     "an unwritable ledger: ledger_error in the accounting");
	json_decref(a1);
	llm_reply_free(&lr1);
	/* KSCI_LEDGER names the ledger when the config does not. */
	snprintf(line, sizeof line, "%s/env-ledger.ndjson", dir);
	setenv("KSCI_LEDGER", line, 1);
	cl.ledger = NULL;
	lrc1 = llm_complete(&cl, "S", "p", &lr1, e);
	unsetenv("KSCI_LEDGER");
	T_OK(lrc1 == 0 && access(line, F_OK) == 0, "KSCI_LEDGER: the ledger from the environment");
	llm_reply_free(&lr1);

	/* llm_config_setup: where kgen and kselect both keep answers and
	 * transcripts (kselect had no cache and no default transcript). */
	char sdir[300], stx[340];
	snprintf(sdir, sizeof sdir, "%s/setup-cache", dir);
	snprintf(stx, sizeof stx, "%s/transcript.ndjson.gz", sdir);
	unsetenv("KSCI_TRANSCRIPT");
	unsetenv("KSCI_REPLAY");
	struct llm_config cs = {.provider = "cmd", .command = "true", .temperature = -1, .max_retries = -1};
	struct llm_store st;
	int usage = -1;
	rc = llm_config_setup(&cs, sdir, &st, &usage, e);
	T_OK(rc == 0 && usage == 0 && strcmp(cs.cache_dir, sdir) == 0 && access(sdir, F_OK) == 0 &&
	     strcmp(cs.transcript, stx) == 0 && cs.max_tokens == 4096,
	     "setup: --cache made, the transcript next to the answers, defaults filled");
	setenv("KSCI_TRANSCRIPT", "/elsewhere/t.gz", 1);
	cs.transcript = NULL;
	rc = llm_config_setup(&cs, sdir, &st, &usage, e);
	unsetenv("KSCI_TRANSCRIPT");
	T_OK(rc == 0 && strcmp(cs.transcript, "/elsewhere/t.gz") == 0, "setup: KSCI_TRANSCRIPT names the transcript");
	struct llm_config cr = {.provider = "replay", .temperature = -1, .max_retries = -1};
	rc = llm_config_setup(&cr, sdir, &st, &usage, e);
	T_OK(rc < 0 && usage == 1 && strstr(e, "--provider replay needs --replay"), "setup: replay without a transcript is the user's error");
	snprintf(sdir, sizeof sdir, "%s/cache", prices); /* under a file: no directory, even for root */
	rc = llm_config_setup(&cr, sdir, &st, &usage, e);
	T_OK(rc < 0 && usage == 0 && strncmp(e, "cache: ", 7) == 0, "setup: a cache that cannot be made is not (%s)", e);

	T_OK(llm_provider_known("openai") && llm_provider_known("replay") && !llm_provider_known("mutate") &&
	     !llm_provider_known(NULL), "provider list: the four providers, not mutate");
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		return 1;
	return T_DONE();
}
