/*
 * gen_llm: plan / write / fix; see gen_llm.h.
 *
 * A request without a plan is planned (one call; the cache makes the P
 * requests of a generation that share a base share that call too) and the
 * kept plans are handed out round-robin by the request's child index, so a
 * generation explores the most innovative, the highest-ceiling and the
 * safest plan side by side.  With --stage plan the plans are emitted as
 * requests carrying "plan", for a later `kgen --stage write`.
 *
 * Accounting: each record lists in origin.calls the calls that made it; a
 * plan call is charged to the first record emitted for its request, so
 * summing origin.usage over an archive counts every call once.
 */
#include "gen_llm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "extract.h"
#include "prompt.h"
#include "rec.h"
#include "task.h"

static int is_failed(const json_t *rec) { return rec_status_failed(rec_str(rec, "status")); }

/* Per-request state: the plan call waiting to be charged. */
struct job {
	struct gen *g;
	const struct gen_llm_config *sc;
	const json_t *req;
	json_t *pending; /* calls not yet charged to a record */
};

static void charge(struct job *j, json_t *origin, json_t *call)
{
	json_t *calls = json_array();
	if (j->pending) {
		json_array_extend(calls, j->pending);
		json_decref(j->pending);
		j->pending = NULL;
	}
	if (call)
		json_array_append(calls, call);
	double tin = 0, tout = 0, cost = 0, lat = 0;
	int priced = 0;
	size_t i;
	json_t *c;
	json_array_foreach(calls, i, c) {
		tin += (double)json_integer_value(json_object_get(c, "tokens_in"));
		tout += (double)json_integer_value(json_object_get(c, "tokens_out"));
		lat += json_number_value(json_object_get(c, "latency_s"));
		if (json_is_number(json_object_get(c, "cost_usd"))) {
			cost += json_number_value(json_object_get(c, "cost_usd"));
			priced = 1;
		}
	}
	json_t *u = json_pack("{s:I, s:I, s:f, s:I}", "tokens_in", (json_int_t)tin, "tokens_out", (json_int_t)tout,
			      "latency_s", lat, "calls", (json_int_t)json_array_size(calls));
	if (priced)
		json_object_set_new(u, "cost_usd", json_real(cost));
	json_object_set_new(origin, "usage", u);
	json_object_set_new(origin, "calls", calls);
}

static json_t *base_origin(struct job *j, const char *stage)
{
	json_t *o = json_pack("{s:s, s:s, s:s}", "generator", j->sc->llm.provider, "stage", stage, "model",
			      j->sc->llm.model ? j->sc->llm.model : "");
	json_t *st = json_object_get(j->req, "strategy");
	if (st)
		json_object_set(o, "strategy", st);
	json_object_set_new(o, "seed", json_integer((json_int_t)gen_request_seed(j->g, j->req)));
	return o;
}

static int emit_fail(struct job *j, const char *stage, const char *reason, const char *msg, json_t *call,
		     json_t *plan)
{
	json_t *c = gen_child_skeleton(j->req);
	json_t *o = base_origin(j, stage);
	if (plan)
		json_object_set(o, "plan", plan);
	charge(j, o, call);
	if (call && json_object_get(call, "exchange"))
		json_object_set(o, "exchange", json_object_get(call, "exchange"));
	json_object_set_new(c, "origin", o);
	gen_set_error(c, j->req, j->sc->llm.provider, reason, msg);
	int rc = j->g->emit(j->g->ctx, c);
	json_decref(c);
	return rc ? -1 : 0;
}

/* task.json as the model sees it: the validated task's JSON, indented. */
static char *task_text(const struct gen *g, const char *task)
{
	char e[ERRBUF];
	const struct task *t = task_get(g->tasks, task, e);
	if (!t)
		return strdup("(task description unavailable)");
	char *s = json_dumps(t->json, JSON_INDENT(1));
	return s ? s : strdup("");
}

/* Common template variables for a request. */
static json_t *vars_for(struct job *j, const json_t *base)
{
	char e[ERRBUF];
	const char *task = rec_str(j->req, "task"), *backend = rec_str(j->req, "backend");
	json_t *ref = json_array_get(json_object_get(j->req, "inspirations"), 0);
	char *tt = task_text(j->g, task);
	char *kn = prm_knowledge(j->sc->knowledge, backend, 48000, e);
	char *nb = prm_notebook(j->g->notebook, task, (size_t)j->sc->notebook_max);
	char *bt = prm_timings(base);
	char *rt = ref ? prm_timings(ref) : strdup("(no reference kernel)");
	json_t *v = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:i}", "task", task, "backend",
			      backend, "task_json", tt ? tt : "", "knowledge", kn ? kn : "(knowledge unavailable)",
			      "notebook", nb ? nb : "", "base_source", rec_str(base, "source"), "base_timings",
			      bt ? bt : "", "reference_source",
			      ref && rec_str(ref, "source") ? rec_str(ref, "source") : "(no reference kernel)",
			      "reference_timings", rt ? rt : "", "n_avenues", 10, "n_plans", 5);
	free(tt);
	free(kn);
	free(nb);
	free(bt);
	free(rt);
	return v;
}

/* Render template `name` and call the model.  0 with *reply; -1 with
 * *reason and errbuf (reply freed or holding partial accounting). */
static int ask(struct job *j, const char *name, json_t *vars, struct llm_reply *r, const char **reason, char *e)
{
	char *sys_t = prm_load(j->sc->prompts, "system.txt", e);
	char *t = sys_t ? prm_load(j->sc->prompts, name, e) : NULL;
	char *sys = t ? prm_render(sys_t, vars, e) : NULL;
	char *p = sys ? prm_render(t, vars, e) : NULL;
	free(sys_t);
	free(t);
	memset(r, 0, sizeof *r);
	if (!p) {
		free(sys);
		*reason = "prompt";
		return -1;
	}
	/* The replay tag: which stage, for which parent and child. */
	char tag[256];
	const json_t *base = json_object_get(j->req, "base");
	const char *bid = json_string_value(json_object_get(base ? base : j->req, "id"));
	snprintf(tag, sizeof tag, "%s:%s:%lld", name, bid ? bid : "-",
		 (long long)json_integer_value(json_object_get(j->req, "child")));
	struct llm_config cfg = j->sc->llm;
	cfg.replay_key = tag;
	/* Writes and fixes are each child's own (its seed, distinct per child,
	 * docs/record.md); the plan is shared by a request's children. */
	char sample[64];
	json_t *cseed = json_object_get(json_object_get(j->req, "strategy"), "seed");
	if (strcmp(name, "plan.txt") != 0 && json_is_integer(cseed)) {
		snprintf(sample, sizeof sample, "%lld", (long long)json_integer_value(cseed));
		cfg.sample = sample;
	}
	int rc = llm_complete(&cfg, sys, p, r, e);
	free(sys);
	free(p);
	if (rc != 0)
		*reason = r->reason ? r->reason : "provider";
	return rc;
}

static int looks_refusal(const char *t)
{
	while (t && (*t == ' ' || *t == '\n'))
		t++;
	static const char *const s[] = {"I'm sorry", "I am sorry", "I can't", "I cannot", "I won't", "Sorry, I", NULL};
	for (int i = 0; t && s[i]; i++)
		if (strncmp(t, s[i], strlen(s[i])) == 0)
			return 1;
	return 0;
}

/* ---- plan ---- */

static double num_of(const json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : -INFINITY;
}

/* The JSON object in an answer: a ```json block, else first '{' .. last '}'. */
static json_t *answer_json(const char *t)
{
	const char *s = strstr(t, "```json");
	const char *a = s ? strchr(s, '{') : strchr(t, '{');
	const char *b = strrchr(t, '}');
	if (!a || !b || b < a)
		return NULL;
	return json_loadb(a, (size_t)(b - a + 1), 0, NULL);
}

/* Keep the most innovative, the highest maximum and the highest minimum
 * uplift (distinct where possible), up to keep. */
static json_t *keep_plans(json_t *plans, int keep)
{
	static const char *const keys[] = {"innovation", "max_uplift", "min_uplift"};
	json_t *kept = json_array();
	size_t n = json_array_size(plans);
	char *used = calloc(n ? n : 1, 1);
	for (int k = 0; used && k < 3 && (int)json_array_size(kept) < keep; k++) {
		long best = -1;
		for (size_t i = 0; i < n; i++)
			if (!used[i] && (best < 0 || num_of(json_array_get(plans, i), keys[k]) >
							num_of(json_array_get(plans, (size_t)best), keys[k])))
				best = (long)i;
		if (best < 0)
			break;
		used[best] = 1;
		json_t *p = json_deep_copy(json_array_get(plans, (size_t)best));
		json_object_set_new(p, "kept_for", json_string(keys[k]));
		json_array_append_new(kept, p);
	}
	free(used);
	return kept;
}

/* 0 with *kept (new ref) ; -1 after emitting a gen_error; -2 emit failure. */
static int plan(struct job *j, const json_t *base, json_t **kept)
{
	char e[ERRBUF];
	const char *reason;
	struct llm_reply r;
	json_t *vars = vars_for(j, base);
	int rc = ask(j, "plan.txt", vars, &r, &reason, e);
	json_decref(vars);
	json_t *call = llm_reply_json(&j->sc->llm, &r, "plan");
	if (rc != 0) {
		llm_reply_free(&r);
		rc = emit_fail(j, "plan", reason, e, call, NULL);
		json_decref(call);
		return rc ? -2 : -1;
	}
	json_t *a = answer_json(r.text);
	json_t *plans = json_object_get(a, "plans");
	int bad = !json_is_array(plans) || json_array_size(plans) == 0;
	if (bad) {
		const char *why = looks_refusal(r.text) ? "refusal"
				  : r.finish && (strcmp(r.finish, "length") == 0 || strcmp(r.finish, "max_tokens") == 0)
				      ? "truncated"
				      : "bad_plan";
		llm_reply_free(&r);
		json_decref(a);
		rc = emit_fail(j, "plan", why, "the plan answer holds no JSON object with a non-empty \"plans\" array",
			       call, NULL);
		json_decref(call);
		return rc ? -2 : -1;
	}
	*kept = keep_plans(plans, j->sc->keep);
	json_t *av = json_object_get(a, "avenues");
	size_t i;
	json_t *p;
	json_array_foreach(*kept, i, p) {
		if (av)
			json_object_set_new(p, "avenues_considered", json_integer((json_int_t)json_array_size(av)));
	}
	json_decref(a);
	llm_reply_free(&r);
	j->pending = json_pack("[o]", call);
	return 0;
}

static char *plan_text(const json_t *p)
{
	char *s = json_dumps(p, JSON_INDENT(2));
	return s ? s : strdup("{}");
}

/* ---- write / fix: one call, one or more children ---- */

static int child_from_reply(struct job *j, const char *stage, const json_t *base, const struct llm_reply *r,
			    json_t *call, json_t *plan_obj, int fix_attempt)
{
	char e[ERRBUF];
	int rc = 0;
	const char *task = rec_str(j->req, "task"), *backend = rec_str(j->req, "backend");
	int truncated = r->finish && (strcmp(r->finish, "length") == 0 || strcmp(r->finish, "max_tokens") == 0);
	for (int i = 0; i < r->nchoices && rc == 0; i++) {
		char *src;
		const char *how, *reason;
		if (ext_code(r->choices[i], rec_str(base, "source"), &src, &how, &reason, e) != 0) {
			if (truncated)
				reason = "truncated";
			else if (strcmp(reason, "no_code") == 0 && looks_refusal(r->choices[i]))
				reason = "refusal";
			rc = emit_fail(j, stage, reason, e, call, plan_obj);
			continue;
		}
		if (truncated && strcmp(how, "unclosed_fence") == 0) {
			free(src);
			rc = emit_fail(j, stage, "truncated", "the answer was cut at the token limit inside the code", call,
				       plan_obj);
			continue;
		}
		char id[REC_ID_LEN + 1];
		rec_make_id(task, backend, src, id);
		if (strcmp(src, rec_str(base, "source")) == 0 || gen_seen(j->g, id)) {
			free(src);
			rc = emit_fail(j, stage, "duplicate",
				       "the answer's code is the base itself or a kernel already in the archive", call,
				       plan_obj);
			continue;
		}
		json_t *c = gen_child_skeleton(j->req);
		json_object_set_new(c, "source", json_string(src));
		free(src);
		json_t *o = base_origin(j, stage);
		if (plan_obj) {
			json_object_set(o, "plan", plan_obj);
			json_t *h = json_object_get(plan_obj, "hypothesis");
			if (!h)
				h = json_object_get(plan_obj, "title");
			if (h)
				json_object_set(o, "hypothesis", h);
		}
		if (fix_attempt > 0) {
			json_object_set_new(o, "fix_attempt", json_integer(fix_attempt));
			json_object_set_new(o, "fixes", json_string(rec_str(base, "id") ? rec_str(base, "id") : ""));
		}
		json_object_set_new(o, "extracted", json_string(how));
		if (r->nchoices > 1)
			json_object_set_new(o, "choice", json_integer(i));
		charge(j, o, call);
		if (r->exchange)
			json_object_set(o, "exchange", r->exchange);
		json_object_set_new(c, "origin", o);
		rc = gen_emit_child(j->g, c, id);
	}
	return rc;
}

/* One write or fix call (template stage.txt with vars, which it drops) and
 * its children, or a gen_error.  0, or -1 when emitting failed. */
static int call_for_children(struct job *j, const char *stage, const json_t *base, json_t *vars, json_t *plan_obj,
			     int fix_attempt)
{
	char e[ERRBUF], name[32];
	const char *reason;
	struct llm_reply r;
	snprintf(name, sizeof name, "%s.txt", stage);
	int rc = ask(j, name, vars, &r, &reason, e);
	json_decref(vars);
	json_t *call = llm_reply_json(&j->sc->llm, &r, stage);
	if (rc != 0)
		rc = emit_fail(j, stage, reason, e, call, plan_obj);
	else
		rc = child_from_reply(j, stage, base, &r, call, plan_obj, fix_attempt);
	json_decref(call);
	llm_reply_free(&r);
	return rc;
}

static int write_plan(struct job *j, const json_t *base, json_t *plan_obj)
{
	json_t *vars = vars_for(j, base);
	char *pt = plan_text(plan_obj);
	json_object_set_new(vars, "plan", json_string(pt));
	free(pt);
	return call_for_children(j, "write", base, vars, plan_obj, 0);
}

static char *failure_report(const json_t *rec)
{
	json_t *o = json_object();
	json_object_set_new(o, "status", json_string(rec_str(rec, "status") ? rec_str(rec, "status") : "?"));
	static const char *const paths[] = {"compile.log", "verify.message", "verify.mismatch", "verify.log",
					    "time.message", "gen.message", NULL};
	for (int i = 0; paths[i]; i++) {
		json_t *v = rec_path(rec, paths[i]);
		if (v)
			json_object_set(o, paths[i], v);
	}
	char *s = json_dumps(o, JSON_INDENT(1));
	json_decref(o);
	/* Keep the prompt bounded: the tail of a compiler log says the most. */
	if (s && strlen(s) > 12000) {
		size_t n = strlen(s);
		memmove(s + 200, s + n - 11000, 11001);
		memcpy(s + 180, "\n[...cut...]\n", 13);
		memset(s + 193, ' ', 7);
	}
	return s ? s : strdup("");
}

static int fix(struct job *j, const json_t *base)
{
	int prev = (int)json_integer_value(rec_path(base, "origin.fix_attempt"));
	if (prev + 1 > j->sc->max_fix) {
		char e[ERRBUF];
		snprintf(e, sizeof e, "lineage already had %d fix attempts (--max-fix %d)", prev, j->sc->max_fix);
		return emit_fail(j, "fix", "fix_limit", e, NULL, NULL);
	}
	json_t *vars = vars_for(j, base);
	char *fr = failure_report(base);
	json_object_set_new(vars, "failure", json_string(fr));
	free(fr);
	return call_for_children(j, "fix", base, vars, NULL, prev + 1);
}

int gen_llm_request(struct gen *g, const json_t *req, long line)
{
	(void)line;
	struct job j = {g, g->stages, req, NULL};
	const char *stage = g->stages->stage;
	const json_t *base = json_object_get(req, "base");
	json_t *given = json_object_get(req, "plan");
	int rc = 0;
	if (strcmp(stage, "fix") == 0 || (strcmp(stage, "auto") == 0 && is_failed(base))) {
		rc = fix(&j, base);
	} else if (json_is_object(given) && strcmp(stage, "plan") != 0) {
		for (int k = 0; k < g->children && rc == 0; k++)
			rc = write_plan(&j, base, given);
	} else {
		json_t *kept = NULL;
		int pr = plan(&j, base, &kept);
		if (pr < 0) {
			json_decref(j.pending);
			return pr == -2 ? -1 : 0;
		}
		size_t nk = json_array_size(kept);
		if (strcmp(stage, "plan") == 0) {
			/* Plan records: the request again, once per kept plan. */
			for (size_t i = 0; i < nk && rc == 0; i++) {
				json_t *p = json_copy((json_t *)req);
				json_object_set(p, "plan", json_array_get(kept, i));
				json_t *pc = json_object();
				charge(&j, pc, NULL);
				json_object_set_new(p, "plan_origin", pc);
				rc = g->emit(g->ctx, p) ? -1 : 0;
				json_decref(p);
			}
		} else {
			json_t *ci = json_object_get(req, "child");
			size_t c0 = json_is_integer(ci) ? (size_t)json_integer_value(ci) * (size_t)g->children : 0;
			for (int k = 0; k < g->children && rc == 0; k++)
				rc = write_plan(&j, base, json_array_get(kept, (c0 + (size_t)k) % nk));
		}
		json_decref(kept);
	}
	json_decref(j.pending);
	return rc;
}

int gen_llm_wants_fix(const struct gen *g, const json_t *rec)
{
	return g->stages && strcmp(g->stages->stage, "fix") == 0 && is_failed(rec) && rec_str(rec, "source") &&
	       rec_str(rec, "task") && rec_str(rec, "backend");
}

int gen_llm_fix_record(struct gen *g, const json_t *rec)
{
	if (g->emit(g->ctx, rec))
		return -1;
	int prev = (int)json_integer_value(rec_path(rec, "origin.fix_attempt"));
	if (prev + 1 > g->stages->max_fix)
		return 0; /* bound reached: the failure stays final */
	/* A request for "fix this", made from the failed record itself. */
	json_t *req = json_pack("{s:s, s:s, s:s, s:I, s:[s], s:O, s:{s:s}}", "status", ST_SELECTED, "task",
				rec_str(rec, "task"), "backend", rec_str(rec, "backend"), "generation",
				(json_int_t)(json_integer_value(json_object_get(rec, "generation")) + 1), "parents",
				rec_str(rec, "id") ? rec_str(rec, "id") : "", "base", rec, "strategy", "name", "fix");
	if (json_is_integer(json_object_get(rec, "island")))
		json_object_set(req, "island", json_object_get(rec, "island"));
	struct job j = {g, g->stages, req, NULL};
	int rc = fix(&j, rec);
	json_decref(req);
	return rc;
}
