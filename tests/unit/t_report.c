/*
 * t_report: the report library's pieces — field extraction from records,
 * duplicate ids, winner/fast_p boundaries, lineage effects, prices, number
 * spellings, base64.  Numbers are worked out by hand in the comments.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_fmt.h"
#include "report/report_html.h"
#include "report/report_load.h"
#include "price.h"
#include "report/report_stats.h"
#include "t.h"

static const struct rp_peak nopeak = {NAN, NAN};

static json_t *J(const char *s)
{
	json_error_t e;
	json_t *v = json_loads(s, 0, &e);
	if (!v)
		fprintf(stderr, "bad test JSON: %s: %s\n", s, e.text);
	return v;
}

static struct rp_cand *C(const char *s, struct rp_peak p)
{
	json_t *v = J(s);
	struct rp_cand *c = rp_cand_from(v, p);
	json_decref(v);
	return c;
}

static void test_extract(void)
{
	struct rp_cand *c = C("{\"id\":\"a\",\"task\":\"t\",\"generation\":3,\"parents\":[\"p\",\"q\"],\"status\":\"timed\","
			      "\"origin\":{\"generator\":\"mutate\",\"changes\":[{\"knob\":\"TILE\",\"from\":\"32\",\"to\":\"64\"},"
			      "{\"knob\":\"UNROLL\",\"from\":\"1\",\"to\":\"4\"}]},"
			      "\"compile\":{\"seconds\":1.5},\"verify\":{\"seconds\":2},\"time\":{\"seconds\":0.25,"
			      "\"speedup_vs_baseline\":2,\"speedup_vs_seed\":1.5,\"env\":{\"peak_gbps\":200,\"peak_gflops\":1000},"
			      "\"sizes\":[{\"gbps\":50,\"gflops\":100},{\"gbps\":20,\"gflops\":600}]}}",
			      nopeak);
	T_OK(c && strcmp(c->id, "a") == 0 && c->gen == 3 && c->nparents == 2 && strcmp(c->parents[0], "p") == 0,
	     "id, generation, parents");
	T_OK(c && c->note && strcmp(c->note, "TILE 32->64, UNROLL 1->4") == 0, "mutate changes as a note: %s",
	     c && c->note ? c->note : "(null)");
	T_OK(c && c->seconds == 3.75, "stage seconds summed: 1.5+2+0.25");
	/* max(50/200, 100/1000, 20/200, 600/1000) = 0.6 */
	T_OK(c && fabs(c->pct_peak - 60.0) < 1e-9, "%% of peak from time.env: 60");
	rp_cand_free(c);

	struct rp_peak ov = {100, NAN};
	c = C("{\"time\":{\"env\":{\"peak_gbps\":200},\"sizes\":[{\"gbps\":50}]}}", ov);
	T_OK(c && fabs(c->pct_peak - 50.0) < 1e-9, "--peak overrides time.env: 50/100");
	T_OK(c && c->gen == -1 && !c->id && !c->task && !c->status && isnan(c->sp_base), "missing fields read unknown");
	rp_cand_free(c);

	c = C("{\"origin\":{\"generator\":\"openai\",\"plan\":[\"a\",\"b\"],\"llm\":{\"model\":\"m\","
	      "\"usage\":{\"input_tokens\":10,\"output_tokens\":20,\"cost_usd\":0.5}}}}",
	      nopeak);
	T_OK(c && c->note && strcmp(c->note, "a; b") == 0, "plan array joined");
	T_OK(c && c->model && strcmp(c->model, "m") == 0 && c->tok_in == 10 && c->tok_out == 20 && c->cost == 0.5,
	     "origin.llm model and usage (Anthropic spelling)");
	rp_cand_free(c);

	c = C("{\"origin\":{\"hypothesis\":\"  two\\n\\tlines  \",\"llm\":{\"hypothesis\":\"not this\"},"
	      "\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":-3}}}",
	      nopeak);
	T_OK(c && c->note && strcmp(c->note, "two lines") == 0, "hypothesis on one line: '%s'", c && c->note ? c->note : "");
	T_OK(c && c->tok_in == 7 && c->tok_out == 0 && isnan(c->cost), "OpenAI spelling; negative tokens read 0");
	rp_cand_free(c);

	/* the provider layer's accounting objects, one per call (lib/llm.h) */
	c = C("{\"origin\":{\"generator\":\"openai\",\"llm\":[{\"model\":\"g\",\"tokens_in\":5,\"tokens_out\":1,"
	      "\"cost_usd\":0.25},{\"tokens_in\":3,\"tokens_out\":2,\"cost_usd\":0.5}]}}",
	      nopeak);
	T_OK(c && c->tok_in == 8 && c->tok_out == 3 && c->cost == 0.75 && c->model && strcmp(c->model, "g") == 0,
	     "origin.llm array: tokens and costs summed, model from the first");
	rp_cand_free(c);
	c = C("{\"origin\":{\"llm\":[{\"tokens_in\":5,\"cost_usd\":0.25},{\"tokens_in\":3,\"cost_usd\":null}]}}", nopeak);
	T_OK(c && c->tok_in == 8 && isnan(c->cost), "a call without a cost: the price table decides");
	rp_cand_free(c);

	char big[1200] = "{\"origin\":{\"hypothesis\":\"";
	size_t n = strlen(big);
	for (int i = 0; i < 200; i++, n += 2)
		memcpy(big + n, "\xc3\xa9", 2); /* é: 400 bytes */
	memcpy(big + n, "\"}}", 4);
	c = C(big, nopeak);
	T_OK(c && c->note && strlen(c->note) == 303 && strcmp(c->note + 300, "...") == 0, "long note cut at 300 bytes");
	rp_cand_free(c);
}

static void add(struct rp_data *d, const char *s)
{
	char e[ERRBUF];
	json_t *v = J(s);
	if (rp_add(d, v, e) < 0)
		fprintf(stderr, "%s\n", e);
	json_decref(v);
}

static void test_stats(void)
{
	struct rp_data d;
	rp_data_init(&d, nopeak);
	add(&d, "{\"status\":\"selected\",\"task\":\"x\"}");
	/* task x: s0 1.0 -> s1 2.0 (first seen as verified, re-timed later) -> s2 3.0; s3 also 3.0 later: no improvement */
	add(&d, "{\"id\":\"s0\",\"task\":\"x\",\"generation\":0,\"parents\":[],\"status\":\"timed\",\"time\":{\"speedup_vs_baseline\":1}}");
	add(&d, "{\"id\":\"s1\",\"task\":\"x\",\"generation\":1,\"parents\":[\"s0\"],\"status\":\"verified\"}");
	add(&d, "{\"id\":\"s2\",\"task\":\"x\",\"generation\":2,\"parents\":[\"s1\"],\"status\":\"timed\",\"time\":{\"speedup_vs_baseline\":3}}");
	add(&d, "{\"id\":\"s3\",\"task\":\"x\",\"generation\":2,\"parents\":[\"s1\"],\"status\":\"timed\",\"time\":{\"speedup_vs_baseline\":3}}");
	add(&d, "{\"id\":\"s1\",\"task\":\"x\",\"generation\":1,\"parents\":[\"s0\"],\"status\":\"timed\",\"time\":{\"speedup_vs_baseline\":2}}");
	/* task y: speedup exactly 1: correct, fast_0 yes, fast_1 no (strictly greater) */
	add(&d, "{\"id\":\"y0\",\"task\":\"y\",\"generation\":0,\"status\":\"timed\",\"time\":{\"speedup_vs_baseline\":1}}");
	/* task z: nothing correct */
	add(&d, "{\"id\":\"z0\",\"task\":\"z\",\"generation\":0,\"status\":\"wrong\",\"time\":{\"speedup_vs_baseline\":9}}");
	char e[ERRBUF];
	T_OK(rp_finish(&d, e) == 0, "finish");
	T_OK(d.count.records == 8 && d.count.requests == 1 && d.count.duplicates == 1 && d.n == 6,
	     "8 records, 1 request, 1 duplicate, 6 candidates");
	T_OK(rp_find(&d, "s1") && rp_find(&d, "s1")->sp_base == 2, "the later record of an id wins");
	T_OK(!rp_find(&d, "nope"), "unknown id");
	struct rp_report r;
	T_OK(rp_report_make(&r, &d, NULL, e) == 0 && r.ntasks == 3, "three tasks");
	const struct rp_task *x = &r.tasks[0];
	T_OK(strcmp(x->name, "x") == 0 && x->best && strcmp(x->best->id, "s2") == 0, "ties go to the earlier candidate");
	T_OK(x->improvements == 2 && r.improvements == 2, "improvements: 1->2, 2->3; the tie is none");
	T_OK(x->nlineage == 3 && strcmp(x->lineage[0].c->id, "s0") == 0 && isnan(x->lineage[0].effect) &&
		     x->lineage[1].effect == 2 && x->lineage[2].effect == 1.5,
	     "lineage root first with effects x2, x1.5");
	T_OK(x->ngens == 3 && x->gens[1].best == 2 && x->gens[2].total == 2 && x->gens[2].st[RP_ST_TIMED] == 2,
	     "per generation rows");
	T_OK(r.solved == 2 && r.fast_n[0] == 2 && r.fast_n[1] == 1 && r.fast_n[2] == 1 && r.fast_n[3] == 1,
	     "fast_0 2/3, fast_1 1/3 (1.0 is not > 1), fast_1.5 1/3, fast_2 1/3");
	T_OK(fabs(r.geomean - sqrt(3.0)) < 1e-12, "geomean of 3 and 1 is sqrt 3");
	T_OK(!r.tasks[2].best && r.tasks[2].gens[0].st[RP_ST_WRONG] == 1, "a wrong candidate never wins");
	rp_report_free(&r);
	rp_data_free(&d);
}

static void test_prices(void)
{
	struct price_table t;
	char e[ERRBUF];
	T_OK(price_parse(&t, "# c\n\nm 2 8 # x\nopenai 1 1\n* 0.5 0.5\n", "p", e) == 0 && t.n == 3, "parse three lines");
	T_OK(fabs(price_of(&t, "m", "openai", 1e6, 5e5) - 6.0) < 1e-12, "model first: 2 + 4");
	T_OK(fabs(price_of(&t, "other", "openai", 1e6, 1e6) - 2.0) < 1e-12, "then generator");
	T_OK(fabs(price_of(&t, NULL, NULL, 2e6, 0) - 1.0) < 1e-12, "then *");
	price_free(&t);
	T_OK(price_parse(&t, "m 1\n", "p", e) == 0 ? 0 : 1, "two fields is an error");
	T_OK(strstr(e, "p: line 1:") != NULL, "error names the line: %s", e);
	T_OK(price_parse(&t, "m 1 -2\n", "p", e) < 0, "negative price is an error");
	T_OK(price_parse(&t, "m 1 1\n", "p", e) == 0 && isnan(price_of(&t, "x", "y", 1, 1)), "no match: NAN");
	price_free(&t);
}

/* One accounting rule with kgen's: calls priced one by one (the server's
 * model first, then the one asked for), cached answers at 0 and counted as
 * saved, the selector's call once however many children carry it. */
static void test_calls(void)
{
	struct price_table t;
	char e[ERRBUF];
	T_OK(price_parse(&t, "m-2024 1 0\nm 2 0\n", "p", e) == 0, "call table parses");
	struct rp_data d;
	rp_data_init(&d, nopeak);
	d.prices = &t;
	/* a: plan priced by its reported model (1 USD/Mtok), write stated 0.5, a
	 * cached write of 1M tokens (cost 0, saved by "m": 2 USD); the selector
	 * call S1 (stated 0.25).  b: the same selector call, a write without
	 * cost of the asked-for model m: 2 USD. */
	add(&d, "{\"id\":\"a\",\"task\":\"x\",\"generation\":1,\"status\":\"timed\",\"time\":{\"speedup_vs_baseline\":2},"
		"\"origin\":{\"generator\":\"openai\",\"model\":\"m\",\"strategy\":{\"llm\":{\"call_id\":\"S1\",\"tokens_in\":10,"
		"\"tokens_out\":5,\"cost_usd\":0.25,\"model\":\"m\",\"provider\":\"openai\"}},\"calls\":["
		"{\"model\":\"m-2024\",\"provider\":\"openai\",\"tokens_in\":1000000,\"tokens_out\":7},"
		"{\"model\":\"m\",\"provider\":\"openai\",\"tokens_in\":3,\"tokens_out\":4,\"cost_usd\":0.5},"
		"{\"model\":\"m\",\"provider\":\"openai\",\"tokens_in\":1000000,\"tokens_out\":9,\"cached\":true,\"cost_usd\":0}]}}");
	add(&d, "{\"id\":\"b\",\"task\":\"x\",\"generation\":1,\"status\":\"wrong\","
		"\"origin\":{\"generator\":\"openai\",\"model\":\"m\",\"strategy\":{\"llm\":{\"call_id\":\"S1\",\"tokens_in\":10,"
		"\"tokens_out\":5,\"cost_usd\":0.25}},\"calls\":[{\"model\":\"other\",\"provider\":\"openai\","
		"\"tokens_in\":1000000,\"tokens_out\":0}]}}");
	/* c: a call no line prices */
	add(&d, "{\"id\":\"c\",\"task\":\"x\",\"generation\":1,\"status\":\"wrong\",\"origin\":{\"generator\":\"cmd\","
		"\"model\":\"q\",\"calls\":[{\"model\":\"q\",\"provider\":\"cmd\",\"tokens_in\":50,\"tokens_out\":0}]}}");
	T_OK(rp_finish(&d, e) == 0, "finish");
	struct rp_report r;
	T_OK(rp_report_make(&r, &d, &t, e) == 0 && r.ntasks == 1, "report");
	const struct rp_cost *k = &r.cost;
	/* money: 1 (plan) + 0.5 + 0 (cached) + 2 (b) + 0.25 (selector, once) */
	T_OK(fabs(k->money - 3.75) < 1e-9, "money: priced per call, cached 0, selector once (%g)", k->money);
	T_OK(k->calls == 6 && k->sel_calls == 1 && k->cached == 1 && k->unpriced_calls == 1,
	     "6 calls, 1 by the selector, 1 cached, 1 unpriced (%ld %ld %ld %ld)", k->calls, k->sel_calls, k->cached,
	     k->unpriced_calls);
	T_OK(k->tok_in == 1000000 + 3 + 1000000 + 50 + 10 && k->cached_in == 1000000 && fabs(k->saved - 2.0) < 1e-9,
	     "tokens bought without the cached answer's; its price saved (%g %g)", k->tok_in, k->saved);
	T_OK(k->priced == 2 && k->unpriced == 1, "records: a and b priced, c with tokens but no price");
	rp_report_free(&r);
	rp_data_free(&d);
	price_free(&t);
}

static void test_fmt(void)
{
	char b[RP_FMT];
	T_OK(strcmp(rp_fmt_x(b, 2.125), "2.12x") == 0 || strcmp(b, "2.13x") == 0, "x");
	T_OK(strcmp(rp_fmt_x(b, NAN), "n/a") == 0, "NAN is n/a");
	T_OK(strcmp(rp_fmt_pct(b, 45), "45.0%") == 0, "pct");
	T_OK(strcmp(rp_fmt_gen(b, -1), "?") == 0, "missing generation");
	char s[16];
	T_OK(strcmp(rp_fmt_cut(s, sizeof s, "abc", 10), "abc") == 0, "short kept");
	T_OK(strcmp(rp_fmt_cut(s, sizeof s, "abcdef", 4), "abcd...") == 0, "cut");
	T_OK(strcmp(rp_fmt_cut(s, sizeof s, "ab\xc3\xa9z", 3), "ab...") == 0, "cut on a UTF-8 boundary");
	T_OK(strcmp(rp_fmt_safe(s, sizeof s, ".conv 2d/x"), "_conv_2d_x") == 0, "safe file name");
}

static void test_base64(void)
{
	static const char *const in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
	static const char *const want[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
	for (int i = 0; i < 7; i++) {
		char *buf = NULL;
		size_t n = 0;
		FILE *f = open_memstream(&buf, &n);
		rp_base64(f, (const unsigned char *)in[i], strlen(in[i]));
		fclose(f);
		T_OK(strcmp(buf, want[i]) == 0, "base64 \"%s\" (RFC 4648 vector)", in[i]);
		free(buf);
	}
}

int main(void)
{
	test_extract();
	test_stats();
	test_prices();
	test_calls();
	test_fmt();
	test_base64();
	return T_DONE();
}
