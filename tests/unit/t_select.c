/* t_select: the span scanner and the selection strategies, on in-memory lines. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "select/select.h"
#include "select/select_int.h"
#include "jscan.h"
#include "t.h"

static void scanner(void)
{
	const char *l = "{\"id\":\"a\\\"b\",\"n\":-1.5e2,\"o\":{\"x\":[1,{\"y\":true}],\"s\":\"\\u00e9\\n\"},\"id\":\"last\"} ";
	const char *k[] = {"id", "n", "o", "missing"};
	struct js_span s[4], v, w;
	char e[ERRBUF], buf[32];
	double d;
	T_OK(js_fields(l, strlen(l), k, 4, s, e) == 0, "a valid object scans");
	T_OK(js_string(s[0], buf, sizeof buf) == 0 && strcmp(buf, "last") == 0, "the last duplicate key wins");
	T_OK(js_number(s[1], &d) == 0 && d == -150, "numbers parse");
	T_OK(s[3].p == NULL && s[3].n == 0, "an absent key is an empty span");
	T_OK(js_path(s[2], "s", &v) == 0 && js_string(v, buf, sizeof buf) == 0 && strcmp(buf, "\xc3\xa9\n") == 0,
	     "\\u escapes decode to UTF-8");
	T_OK(js_strlen(v) == 3, "decoded length counts bytes");
	T_OK(js_path(s[2], "x", &v) == 0 && js_index(v, 1, &w) == 0 && js_path(w, "y", &v) == 0 && v.n == 4,
	     "paths and indexes reach nested values");
	T_OK(js_index(s[1], 0, &v) != 0 && js_path(s[1], "a", &v) != 0, "paths into a scalar fail");
	T_OK(js_string(s[0], buf, 3) != 0, "a string longer than the buffer is refused");
	static const char *bad[] = {"", "x", "[1]", "{\"a\":}", "{\"a\":1,}", "{\"a\":1} 2", "{\"a\":\"open}",
	                            "{\"a\" 1}", "{\"a\":tru}", "{\"a\":[1 2]}", "{\"a\":-}"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		T_OK(js_fields(bad[i], strlen(bad[i]), k, 4, s, e) != 0 && strncmp(e, "not JSON: ", 10) == 0,
		     "not JSON: %s -> %s", bad[i], e);
	T_OK(js_fields("{\"a\":1,}", 8, k, 4, s, e) != 0 && strstr(e, "(column 8)"), "the column is given: %s", e);
	char deep[300];
	memset(deep, '[', 200);
	snprintf(deep + 200, sizeof deep - 200, "1");
	char line[320];
	snprintf(line, sizeof line, "{\"a\":%s}", deep);
	T_OK(js_fields(line, strlen(line), k, 4, s, e) != 0, "regression: deep nesting is refused, not recursed");
}

/* An in-memory archive: lines kept so fetch can parse them. */
struct mem {
	const char *lines[64];
	int n;
};

static json_t *mem_fetch(void *ctx, const struct sel_cand *c)
{
	struct mem *m = ctx;
	return json_loads(m->lines[c->line - 1], 0, NULL);
}

static json_t *out[256];
static int nout;

static int collect(void *ctx, const json_t *rec)
{
	(void)ctx;
	out[nout++] = json_deep_copy(rec);
	return 0;
}

static void clear(void)
{
	for (int i = 0; i < nout; i++)
		json_decref(out[i]);
	nout = 0;
}

static int run(struct sel_opts *o, struct mem *m, struct sel_pop **keep)
{
	char e[ERRBUF];
	clear();
	struct sel_pop *p = sel_pop_new(o, e);
	for (int i = 0; i < m->n; i++)
		if (sel_pop_line(p, m->lines[i], strlen(m->lines[i]), 0, i + 1, 0, e) != 0)
			printf("# line %d: %s\n", i + 1, e);
	int rc = sel_pop_finish(p, e);
	if (rc == 0)
		rc = sel_run(p, mem_fetch, collect, m, e);
	if (rc < 0)
		printf("# %s\n", e);
	if (keep)
		*keep = p;
	else
		sel_pop_free(p);
	return rc;
}

static const char *base_id(int i) { return json_string_value(json_array_get(json_object_get(out[i], "parents"), 0)); }

static struct sel_opts opts(enum sel_strategy s)
{
	struct sel_opts o = {.task = "mm", .backend = "c", .population = 4, .strategy = s, .seed = 1, .k = 2,
	                     .tournament = 3, .inspirations = 1, .islands = 2, .migrate_every = 2, .ucb_c = 1.414,
	                     .generation = -1};
	return o;
}

#define R(id, sp, extra) \
	"{\"id\":\"" id "\",\"task\":\"mm\",\"backend\":\"c\",\"status\":\"timed\",\"generation\":1," \
	"\"time\":{\"speedup_vs_baseline\":" sp "}" extra "}"

static void population(void)
{
	struct mem m = {{R("a", "1.0", ""), R("b", "2.0", ""), R("a", "3.0", ",\"generation\":4"),
	                 "{\"id\":\"f\",\"task\":\"mm\",\"backend\":\"c\",\"status\":\"wrong\",\"generation\":6}",
	                 R("o", "9.0", ",\"backend\":\"cuda\"")},
	                5};
	struct sel_opts o = opts(SEL_BEST);
	o.k = 1;
	o.population = 1;
	struct sel_pop *p;
	T_OK(run(&o, &m, &p) == 0 && nout == 1, "best: one request");
	T_OK(nout == 1 && strcmp(base_id(0), "a") == 0, "regression: a re-timed id counts with its last record");
	T_OK(nout == 1 && json_integer_value(json_object_get(out[0], "generation")) == 7,
	     "generation = max over all the task's records (failed too) + 1");
	struct sel_stats st;
	sel_pop_stats(p, &st);
	T_OK(st.records == 4 && st.timed == 2 && st.failed == 1 && st.other == 1, "stats: %ld records %ld timed %ld failed %ld other",
	     st.records, st.timed, st.failed, st.other);
	sel_pop_free(p);

	struct mem none = {{"{\"id\":\"f\",\"task\":\"mm\",\"backend\":\"c\",\"status\":\"crashed\"}"}, 1};
	T_OK(run(&o, &none, NULL) < 0 && nout == 0, "no timed candidate: an error and no request");
	struct mem empty = {{0}, 0};
	T_OK(run(&o, &empty, NULL) == 0 && nout == 1 &&
	         strcmp(json_string_value(json_object_get(json_object_get(out[0], "strategy"), "name")), "seed") == 0 &&
	         json_is_null(json_object_get(out[0], "base")),
	     "empty: the seed request");
}

/* The base ids of the last run's requests, one after another. */
static void bases(char *buf, size_t cap)
{
	size_t n = 0;
	buf[0] = '\0';
	for (int i = 0; i < nout && n < cap; i++)
		n += (size_t)snprintf(buf + n, cap - n, "%s", base_id(i));
}

static void tournament(void)
{
	struct mem m = {{R("a", "1.0", ""), R("b", "1.1", ""), R("c", "1.2", ""), R("d", "1.3", ""), R("e", "1.4", ""),
	                 R("f", "1.5", "")},
	                6};
	struct sel_opts o = opts(SEL_TOURNAMENT);
	o.population = 16;
	char s1[200], s2[200], s3[200];
	run(&o, &m, NULL);
	bases(s1, sizeof s1);
	run(&o, &m, NULL);
	bases(s2, sizeof s2);
	o.seed = 2;
	run(&o, &m, NULL);
	bases(s3, sizeof s3);
	T_OK(strcmp(s1, s2) == 0, "tournament: same seed, same bases (%s)", s1);
	T_OK(strcmp(s1, s3) != 0, "tournament: other seed, other bases (%s)", s3);
	T_OK(!strchr(s1, 'a'), "tournament of 3 among 6: the worst never wins (%s)", s1);
	o.tournament = 1;
	run(&o, &m, NULL);
	int insp_ok = 1;
	for (int i = 0; i < nout; i++)
		insp_ok &= strcmp(base_id(i),
		                  json_string_value(json_array_get(json_object_get(out[i], "parents"), 1))) != 0;
	T_OK(insp_ok, "the inspiration differs from the base");
}

static void islands(void)
{
	struct mem m = {{R("a", "1.0", ",\"island\":0"), R("b", "2.0", ",\"island\":0"), R("c", "1.5", ",\"island\":1"),
	                 R("d", "0.5", ",\"island\":3")},
	                4};
	struct sel_opts o = opts(SEL_ISLANDS);
	o.generation = 4;
	run(&o, &m, NULL);
	T_OK(nout == 4 && strcmp(base_id(0), "c") == 0 && strcmp(base_id(1), "b") == 0,
	     "migration: island 1 sends its best to 0, island 0 to 1");
	o.generation = 5;
	o.tournament = 1;
	o.population = 20;
	run(&o, &m, NULL);
	int stay = 1;
	for (int i = 0; i < nout; i++) {
		int isl = (int)json_integer_value(json_object_get(out[i], "island"));
		const char *b = base_id(i);
		stay &= isl == 0 ? (strcmp(b, "a") == 0 || strcmp(b, "b") == 0) : (strcmp(b, "c") == 0 || strcmp(b, "d") == 0);
	}
	T_OK(stay, "off the interval children stay on their parent's island");
}

static void map_elites(void)
{
	T_OK(sel_map_bin(4, 0, 100, 0) == 0 && sel_map_bin(4, 0, 100, 24.9) == 0 && sel_map_bin(4, 0, 100, 25) == 1 &&
	         sel_map_bin(4, 0, 100, 100) == 3 && sel_map_bin(4, 0, 100, 1e9) == 3 && sel_map_bin(4, 0, 100, -5) == 0,
	     "bins: equal width, clamped at both ends");
	T_OK(sel_map_bin(4, 0, 100, NAN) == 4, "a missing value goes to the extra bin");
	T_OK(sel_map_bin(4, 7, 7, 7) == 0, "an empty range is one bin");
	struct mem m = {{R("x", "1.0", ",\"compile\":{\"regs\":10}"), R("y", "2.0", ",\"compile\":{\"regs\":12}"),
	                 R("z", "2.0", ",\"compile\":{\"regs\":14}"), R("w", "0.5", ",\"compile\":{\"regs\":90}"),
	                 R("v", "1.9", ",\"compile\":{\"regs\":11}"), R("n", "3.0", "")},
	                6};
	struct sel_opts o = opts(SEL_MAP);
	char e[ERRBUF];
	o.nfeat = 1;
	T_OK(sel_feature_parse("compile.regs:2:0:100", &o.feat[0], e) == 0 && o.feat[0].have_range && o.feat[0].bins == 2,
	     "feature spec parses");
	T_OK(sel_feature_parse("compile.regs", &o.feat[1], e) != 0 && sel_feature_parse("x:2:5:1", &o.feat[1], e) != 0 &&
	         sel_feature_parse("x:0", &o.feat[1], e) != 0,
	     "bad feature specs are refused");
	struct sel_pop *p = sel_pop_new(&o, e);
	for (int i = 0; i < m.n; i++)
		sel_pop_line(p, m.lines[i], strlen(m.lines[i]), 0, i + 1, 0, e);
	sel_pop_finish(p, e);
	double lo[1], hi[1];
	int el[8];
	uint64_t keys[8];
	int ne = sel_map_elites(p, lo, hi, el, keys, e);
	T_OK(ne == 3, "three occupied cells (two bins + none): %d", ne);
	T_OK(ne == 3 && strcmp(sel_pop_cand(p, el[0])->id, "y") == 0, "cell 0: y, not the equal z that came later");
	T_OK(ne == 3 && strcmp(sel_pop_cand(p, el[1])->id, "w") == 0, "cell 1: w, alone");
	T_OK(ne == 3 && strcmp(sel_pop_cand(p, el[2])->id, "n") == 0, "the none cell: n");
	sel_pop_free(p);
}

#define C(id, sp, par, knob)                                                                                   \
	"{\"id\":\"" id "\",\"task\":\"mm\",\"backend\":\"c\",\"status\":\"timed\",\"parents\":[\"" par "\"],"      \
	"\"origin\":{\"generator\":\"mutate\",\"changes\":[{\"knob\":\"" knob "\"}]},\"time\":{\"speedup_vs_baseline\":" sp "}}"

static void bandit(void)
{
	T_OK(sel_reward(1.5, 1.0) == 0.5 && sel_reward(5, 1) == 1 && sel_reward(0.0, 1) == -1 && sel_reward(NAN, 1) == -1,
	     "reward: relative improvement, clipped to [-1, 1]");
	struct mem m = {{R("p", "2.0", ""), C("a1", "3.0", "p", "TILE"), C("a2", "2.0", "p", "TILE"),
	                 C("b1", "2.2", "p", "UNROLL"),
	                 "{\"id\":\"b2\",\"task\":\"mm\",\"backend\":\"c\",\"status\":\"crashed\",\"parents\":[\"p\"],"
	                 "\"origin\":{\"generator\":\"mutate\",\"changes\":[{\"knob\":\"UNROLL\"}]}}",
	                 C("q1", "9.0", "nobody", "VEC")},
	                6};
	struct sel_opts o = opts(SEL_BANDIT);
	o.population = 1;
	struct sel_pop *p;
	run(&o, &m, &p);
	long n[8];
	double sum[8];
	sel_bandit_pulls(p, n, sum);
	T_OK(p->narm == 3 && n[0] == 2 && fabs(sum[0] - 0.5) < 1e-12 && n[1] == 2 && fabs(sum[1] - (0.1 - 1)) < 1e-12 &&
	         n[2] == 0,
	     "pulls: TILE 2 (sum 0.5), UNROLL 2 (0.1 - 1 for the crash), VEC 0 (parent unknown)");
	sel_pop_free(p);
	json_t *st = json_object_get(out[0], "strategy");
	T_OK(nout == 1 && strcmp(json_string_value(json_object_get(st, "knob")), "TILE") == 0 &&
	         json_integer_value(json_object_get(st, "arms")) == 2,
	     "the arm with the higher mean reward is chosen, of the 2 pulled");
	o.arms = "knob:VEC";
	run(&o, &m, NULL);
	T_OK(nout == 1 && strcmp(json_string_value(json_object_get(json_object_get(out[0], "strategy"), "arm")),
	                         "knob:VEC") == 0,
	     "an arm never pulled, named with --arms, goes first");
}

#define K(id, sp, kind)                                                                                        \
	"{\"id\":\"" id "\",\"task\":\"mm\",\"backend\":\"c\",\"status\":\"timed\",\"parents\":[\"p\"],"         \
	"\"origin\":{\"generator\":\"cmd\",\"kind\":\"" kind "\",\"plan\":{\"kind\":\"" kind "\"}},"             \
	"\"time\":{\"speedup_vs_baseline\":" sp "}}"

/* Regression (one-arm bandit): model children all pulled "gen:cmd", since
 * plans carried no kind; and a plan call that failed left an arm never
 * pulled that would have taken every child. */
static void bandit_kinds(void)
{
	struct mem m = {{R("p", "2.0", ""), K("m1", "3.0", "memory"), K("m2", "2.6", "memory"), K("c1", "1.0", "compute"),
	                 "{\"id\":\"o1\",\"task\":\"mm\",\"backend\":\"c\",\"status\":\"timed\",\"parents\":[\"p\"],"
	                 "\"origin\":{\"generator\":\"cmd\",\"plan\":{\"kind\":\"fusion\"}},\"time\":{\"speedup_vs_baseline\":2.2}}",
	                 "{\"task\":\"mm\",\"backend\":\"c\",\"status\":\"gen_error\",\"parents\":[\"p\"],"
	                 "\"origin\":{\"generator\":\"cmd\",\"stage\":\"plan\"},\"gen\":{\"status\":\"bad_plan\"}}"},
	                6};
	struct sel_opts o = opts(SEL_BANDIT);
	o.population = 3;
	o.ucb_c = 0;
	struct sel_pop *p;
	run(&o, &m, &p);
	long n[8];
	double sum[8];
	sel_bandit_pulls(p, n, sum);
	T_OK(p->narm == 4 && strcmp(sel_arm_name(p, 0), "plan:memory") == 0 && n[0] == 2 &&
	         strcmp(sel_arm_name(p, 1), "plan:compute") == 0 && n[1] == 1 &&
	         strcmp(sel_arm_name(p, 2), "plan:fusion") == 0 && n[2] == 1 && strcmp(sel_arm_name(p, 3), "gen:cmd") == 0 &&
	         n[3] == 0,
	     "arms: origin.kind (memory 2 pulls, compute 1), origin.plan.kind (fusion), gen:cmd of the gen_error unpulled");
	sel_pop_free(p);
	int ok = nout == 3;
	for (int i = 0; ok && i < 3; i++) {
		json_t *st = json_object_get(out[i], "strategy");
		ok = strcmp(json_string_value(json_object_get(st, "arm")), "plan:memory") == 0 &&
		     json_integer_value(json_object_get(st, "arms")) == 3;
	}
	T_OK(ok, "greedy (--ucb-c 0): every child on plan:memory, the best of 3 arms offered (gen:cmd is not)");
}

static void llm(void)
{
	struct mem m = {{R("a", "1.0", ""), R("b", "2.0", ""),
	                 "{\"id\":\"f\",\"task\":\"mm\",\"backend\":\"c\",\"status\":\"wrong\"}"},
	                3};
	struct sel_opts o = opts(SEL_BEST);
	struct sel_pop *p;
	run(&o, &m, &p);
	int b, r;
	char *why, e[ERRBUF];
	T_OK(sel_llm_parse(p, "Here: {\"base\":\"a\",\"reference\":\"b\",\"reasoning\":\"r\"} ok", &b, &r, &why, e) == 0 &&
	         strcmp(sel_pop_cand(p, b)->id, "a") == 0 && strcmp(sel_pop_cand(p, r)->id, "b") == 0 && strcmp(why, "r") == 0,
	     "llm: an answer with text around the JSON object is read");
	free(why);
	T_OK(sel_llm_parse(p, "{\"base\":\"b\",\"reference\":\"b\"}", &b, &r, &why, e) == 0 && r == -1,
	     "llm: a reference equal to the base is dropped");
	free(why);
	T_OK(sel_llm_parse(p, "{\"base\":\"f\"}", &b, &r, &why, e) != 0 && strstr(e, "not a timed candidate"),
	     "llm: a failed candidate is refused as base: %s", e);
	T_OK(sel_llm_parse(p, "no idea", &b, &r, &why, e) != 0, "llm: no JSON, no choice");
	int idx[2] = {p->elig[0], p->elig[1]};
	json_t *recs[2] = {json_loads(m.lines[1], 0, NULL), NULL};
	struct sel_llm_view v = {idx, recs, 2, NULL, NULL, 0};
	char *prompt = sel_llm_prompt(p, &v, "- base a, reference b\n");
	T_OK(prompt && strstr(prompt, "- id b (generation 1, parent none): no speedup over the seed recorded, 2x the baseline") &&
	         strstr(prompt, "2 timed (eligible), 1 failed (wrong 1)") && strstr(prompt, "Already chosen"),
	     "llm: the prompt shows ids, counts and earlier picks");
	free(prompt);
	json_decref(recs[0]);
	sel_pop_free(p);
}

/* What the selector sees (issue #15): hypotheses and outcomes, failures
 * with their reasons, and the uncertainty of each speedup. */
#define SIZE(n, cm, cs, sm, ss)                                                                                  \
	"{\"size\":{\"n\":" #n "},\"candidate\":{\"median_us\":" #cm ",\"sem_us\":" #cs "},"                       \
	"\"seed\":{\"median_us\":" #sm ",\"sem_us\":" #ss "},\"speedup_vs_seed\":" #sm "/" #cm "}"
static void llm_view(void)
{
	/* speedup_vs_seed per size is written as a number below, not a quotient */
	const char *seedrec = "{\"id\":\"s\",\"task\":\"mm\",\"backend\":\"c\",\"status\":\"timed\",\"generation\":0,"
	                      "\"parents\":[],\"origin\":{\"generator\":\"seed\"},\"time\":{\"speedup_vs_baseline\":1.0,"
	                      "\"speedup_vs_seed\":1.0}}";
	const char *good =
	    "{\"id\":\"g\",\"task\":\"mm\",\"backend\":\"c\",\"status\":\"timed\",\"generation\":1,\"parents\":[\"s\"],"
	    "\"origin\":{\"generator\":\"cmd\",\"kind\":\"memory\",\"hypothesis\":\"tiles fit in L1\\nso fewer misses\"},"
	    "\"time\":{\"speedup_vs_baseline\":2.0,\"speedup_vs_seed\":2.0,\"sizes\":["
	    "{\"size\":{\"n\":64},\"candidate\":{\"median_us\":50,\"sem_us\":1.5},\"seed\":{\"median_us\":100,\"sem_us\":4},"
	    "\"speedup_vs_seed\":2.0,\"converged\":false}]}}";
	const char *broke =
	    "{\"id\":\"x\",\"task\":\"mm\",\"backend\":\"c\",\"status\":\"compile_error\",\"generation\":2,"
	    "\"parents\":[\"g\"],\"origin\":{\"generator\":\"cmd\",\"kind\":\"parallelism\",\"hypothesis\":\"split rows\"},"
	    "\"compile\":{\"ok\":false,\"status\":\"error\",\"message\":\"cc exited 1\","
	    "\"log\":\"x.c: In function solve:\\nx.c:3:5: error: expected ';' before '}'\\n\"}}";
	const char *nocode = "{\"task\":\"mm\",\"backend\":\"c\",\"status\":\"gen_error\",\"generation\":2,"
	                     "\"parents\":[\"g\"],\"origin\":{\"generator\":\"cmd\"},"
	                     "\"gen\":{\"ok\":false,\"status\":\"no_code\",\"message\":\"no solve in the answer\"}}";
	const char *wrong = "{\"id\":\"w\",\"task\":\"mm\",\"backend\":\"c\",\"status\":\"wrong\",\"generation\":2,"
	                    "\"parents\":[\"g\"],\"origin\":{\"generator\":\"cmd\",\"kind\":\"precision\"},"
	                    "\"verify\":{\"ok\":false,\"status\":\"wrong\",\"message\":\"y[3] = 2 but the reference says 1\"}}";
	const char *inflight = "{\"id\":\"i\",\"task\":\"mm\",\"backend\":\"c\",\"status\":\"generated\",\"generation\":2,"
	                       "\"parents\":[\"g\"]}";
	struct mem m = {{seedrec, good, broke, nocode, wrong, inflight}, 6};
	struct sel_opts o = opts(SEL_BEST);
	struct sel_pop *p;
	run(&o, &m, &p);
	int recent[SEL_LLM_RECENT];
	int nr = sel_llm_recent(p, recent, SEL_LLM_RECENT);
	T_OK(nr == 4 && strcmp(sel_pop_cand(p, recent[0])->id, "g") == 0 && strcmp(sel_pop_cand(p, recent[1])->id, "x") == 0 &&
	         sel_pop_cand(p, recent[2])->id[0] == '\0' && strcmp(sel_pop_cand(p, recent[3])->id, "w") == 0,
	     "recent experiments: children in a final status, oldest first; the seed and one in flight left out (%d)", nr);
	T_OK(sel_llm_recent(p, recent, 2) == 2 && strcmp(sel_pop_cand(p, recent[1])->id, "w") == 0,
	     "recent experiments: bounded, the newest kept");
	nr = sel_llm_recent(p, recent, SEL_LLM_RECENT);
	json_t *best[2], *rr[SEL_LLM_RECENT];
	for (int i = 0; i < 2; i++)
		best[i] = json_loads(m.lines[p->elig[i]], 0, NULL);
	for (int i = 0; i < nr; i++)
		rr[i] = json_loads(m.lines[recent[i]], 0, NULL);
	struct sel_llm_view v = {p->elig, best, 2, recent, rr, nr};
	char *pr = sel_llm_prompt(p, &v, "");
	T_OK(pr && strstr(pr, "- id g (generation 1, parent s, kind memory): 2x the seed ±5%, 2x the baseline; "
	                      "hypothesis: tiles fit in L1 so fewer misses; its children: 4 tried, 0 timed, 3 failed; "
	                      "per size: size {\"n\":64}: 50 us ±3% (2x the seed ±5%), not converged\n"),
	     "the shortlist: kind, hypothesis on one line, speedup over the seed ± its error, children (one in flight), per size");
	T_OK(pr && strstr(pr, "- id s (generation 0, parent none): 1x the seed, 1x the baseline; the task's seed kernel"),
	     "the seed: no error without sizes");
	T_OK(pr && strstr(pr, "- id x (generation 2, parent g, kind parallelism); hypothesis: split rows -> compile_error: "
	                      "x.c:3:5: error: expected ';' before '}'\n"),
	     "a compile error: the compiler's error line, not its exit status");
	T_OK(pr && strstr(pr, "- no code (generation 2, parent g) -> gen_error: no_code: no solve in the answer\n") &&
	         strstr(pr, "- id w (generation 2, parent g, kind precision) -> wrong: y[3] = 2 but the reference says 1\n"),
	     "a generator's failure and a wrong answer, with their reasons");
	T_OK(pr && strstr(pr, "- id g (generation 1, parent s, kind memory); hypothesis: tiles fit in L1 so fewer misses -> "
	                      "timed: 2x the seed ±5%, 2x its parent\n"),
	     "a timed experiment: speedup over the seed with its error, and over its parent");
	T_OK(pr && strstr(pr, "1 failed (compile_error 1, gen_error 1, wrong 1)") == NULL &&
	         strstr(pr, "(compile_error 1, gen_error 1, wrong 1)"),
	     "failures counted by status");
	free(pr);
	for (int i = 0; i < 2; i++)
		json_decref(best[i]);
	for (int i = 0; i < nr; i++)
		json_decref(rr[i]);
	sel_pop_free(p);
}

/* The selector's call carries a replay key and a cache sample, as kgen's. */
static char asked_key[4][80], asked_sample[4][40];
static int nasked;
static char *fake_ask(void *ctx, const char *prompt, const char *key, const char *sample, json_t **acct, char *errbuf)
{
	(void)ctx;
	(void)prompt;
	(void)errbuf;
	if (nasked < 4) {
		snprintf(asked_key[nasked], sizeof asked_key[0], "%s", key);
		snprintf(asked_sample[nasked], sizeof asked_sample[0], "%s", sample);
	}
	nasked++;
	*acct = json_pack("{ss,sb}", "stage", "select", "cached", 0);
	return strdup("{\"base\": \"b\", \"reference\": \"a\", \"reasoning\": \"r\"}");
}

static void llm_keys(void)
{
	struct mem m = {{R("a", "1.0", ""), R("b", "2.0", "")}, 2};
	struct sel_opts o = opts(SEL_LLM);
	o.population = 2;
	o.seed = 7;
	o.ask = fake_ask;
	run(&o, &m, NULL);
	char s0[40], s1[40];
	snprintf(s0, sizeof s0, "%llu", (unsigned long long)sel_child_seed(7, 0));
	snprintf(s1, sizeof s1, "%llu", (unsigned long long)sel_child_seed(7, 1));
	T_OK(nasked == 2 && strcmp(asked_key[0], "select:mm:2:0") == 0 && strcmp(asked_key[1], "select:mm:2:1") == 0,
	     "llm: replay keys select:TASK:GENERATION:CHILD (%s, %s)", asked_key[0], asked_key[1]);
	T_OK(nasked == 2 && strcmp(asked_sample[0], s0) == 0 && strcmp(asked_sample[1], s1) == 0 && strcmp(s0, s1) != 0,
	     "llm: each child's cache sample is its own seed, the request's strategy.seed");
	T_OK(nout == 2 && json_integer_value(json_object_get(json_object_get(out[1], "strategy"), "seed")) ==
	                      (json_int_t)sel_child_seed(7, 1) &&
	         json_object_get(json_object_get(out[0], "strategy"), "llm"),
	     "llm: the accounting is kept in strategy.llm");
}

static int refuse(void *ctx, const json_t *rec)
{
	(void)ctx;
	(void)rec;
	return -1;
}

static json_t *fetch_not_b(void *ctx, const struct sel_cand *c)
{
	return strcmp(c->id, "b") == 0 ? NULL : mem_fetch(ctx, c);
}

/* A model call that fails with a message that happens to read like a write error. */
static char *ask_fails(void *ctx, const char *prompt, const char *key, const char *sample, json_t **acct, char *errbuf)
{
	(void)ctx;
	(void)prompt;
	(void)key;
	(void)sample;
	*acct = NULL;
	snprintf(errbuf, ERRBUF, "write error");
	return NULL;
}

static int run_with(struct sel_opts *o, struct mem *m, sel_fetch_fn fetch, sel_emit_fn emit)
{
	char e[ERRBUF];
	struct sel_pop *p = sel_pop_new(o, e);
	for (int i = 0; i < m->n; i++)
		sel_pop_line(p, m->lines[i], strlen(m->lines[i]), 0, i + 1, 0, e);
	int rc = sel_pop_finish(p, e) == 0 ? sel_run(p, fetch, emit, m, e) : -99;
	sel_pop_free(p);
	return rc;
}

/* kselect chose its exit code by comparing the message with "write error";
 * sel_run's result alone must say what happened. */
static void results(void)
{
	struct mem m = {{R("a", "1.0", ""), R("b", "2.0", "")}, 2};
	struct sel_opts o = opts(SEL_BEST);
	o.population = 1;
	o.inspirations = 0;
	clear();
	T_OK(run_with(&o, &m, mem_fetch, collect) == SEL_DONE, "all emitted: SEL_DONE");
	T_OK(run_with(&o, &m, fetch_not_b, collect) == SEL_PARTIAL, "a chosen record that cannot be re-read: SEL_PARTIAL");
	T_OK(run_with(&o, &m, mem_fetch, refuse) == SEL_FATAL, "emit fails: SEL_FATAL");
	struct mem empty = {{0}, 0};
	T_OK(run_with(&o, &empty, mem_fetch, refuse) == SEL_FATAL, "the seed request cannot be emitted: SEL_FATAL");
	struct mem none = {{"{\"id\":\"f\",\"task\":\"mm\",\"backend\":\"c\",\"status\":\"crashed\"}"}, 1};
	T_OK(run_with(&o, &none, mem_fetch, collect) == SEL_NONE, "nothing timed: SEL_NONE");
	o.strategy = SEL_LLM;
	o.ask = ask_fails;
	T_OK(run_with(&o, &m, mem_fetch, collect) == SEL_NONE,
	     "regression (exit code by message text): a model failure reading \"write error\" is SEL_NONE, not fatal");
	clear();
}

static json_t *sum_of(const char *const *lines, int n, long gen)
{
	char e[ERRBUF];
	struct sel_sum *s = sel_sum_new("mm", "c", gen);
	for (int i = 0; i < n; i++)
		if (sel_sum_line(s, lines[i], strlen(lines[i]), e) != 0)
			printf("# line %d: %s\n", i + 1, e);
	json_t *j = sel_sum_json(s);
	sel_sum_free(s);
	return j;
}

static void summary(void)
{
	const char *l[] = {
		R("a", "2.0", ",\"generation\":0"),
		R("b", "3.0", ",\"generation\":1"),
		R("c", "3.0", ",\"generation\":2,\"time\":{\"speedup_vs_baseline\":3,\"speedup_vs_seed\":1.5}"),
		"{\"id\":\"d\",\"task\":\"mm\",\"backend\":\"c\",\"status\":\"wrong\",\"generation\":2}",
		"{\"id\":\"e\",\"task\":\"mm\",\"backend\":\"c\",\"status\":\"timed\",\"generation\":2}",
		R("o", "9.0", ",\"backend\":\"cuda\",\"generation\":5"),
		R("x", "9.0", ",\"task\":\"other\",\"generation\":7"),
		"   ",
	};
	json_t *j = sum_of(l, 8, -1), *best = json_object_get(j, "best");
	char *st = json_dumps(json_object_get(j, "statuses"), JSON_COMPACT);
	T_OK(json_integer_value(json_object_get(j, "records")) == 5, "summary: records of the task and back end only");
	T_OK(json_integer_value(json_object_get(j, "last_generation")) == 2 &&
	         json_integer_value(json_object_get(j, "generation")) == 2,
	     "summary: the last generation, and its statuses by default");
	T_OK(st && strcmp(st, "{\"timed\":2,\"wrong\":1}") == 0, "summary: statuses counted, sorted by name (%s)", st);
	T_OK(strcmp(json_string_value(json_object_get(best, "id")), "c") == 0 &&
	         json_integer_value(json_object_get(best, "generation")) == 2 &&
	         json_real_value(json_object_get(best, "speedup_vs_seed")) == 1.5,
	     "summary: the best timed record, a later one winning a tie (as jq's max_by)");
	free(st);
	json_decref(j);
	j = sum_of(l, 2, 0);
	st = json_dumps(json_object_get(j, "statuses"), JSON_COMPACT);
	T_OK(st && strcmp(st, "{\"timed\":1}") == 0 && json_is_null(json_object_get(json_object_get(j, "best"), "speedup_vs_seed")),
	     "summary: --generation G counts G; a missing speedup_vs_seed is null");
	free(st);
	json_decref(j);
	j = sum_of(l, 0, -1);
	T_OK(json_integer_value(json_object_get(j, "last_generation")) == -1 && json_is_null(json_object_get(j, "best")) &&
	         json_integer_value(json_object_get(j, "generation")) == -1,
	     "summary of nothing: last_generation -1, best null");
	json_decref(j);
	char e[ERRBUF];
	struct sel_sum *s = sel_sum_new("mm", "c", -1);
	T_OK(sel_sum_line(s, "{\"id\":\"z\",\"task\":", 18, e) != 0, "summary: a torn line is an error");
	sel_sum_free(s);
}

int main(void)
{
	scanner();
	population();
	tournament();
	islands();
	map_elites();
	bandit();
	bandit_kinds();
	llm();
	llm_view();
	llm_keys();
	results();
	summary();
	clear();
	return T_DONE();
}
