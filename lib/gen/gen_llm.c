/*
 * gen_llm: plan / write / fix; see gen_llm.h.
 *
 * A request without a plan is planned (one call; the cache makes the P
 * requests of a generation that share a base share that call too) and the
 * kept plans are handed out round-robin by the request's child index, so a
 * generation explores the most innovative, the highest-ceiling and the
 * safest plan side by side — or, when the request's bandit arm names a
 * kind of plan ("plan:memory"), the plans of that kind alone, so the arm
 * the bandit pulled is the arm the child tries (gen_plan_kinds).  With
 * --stage plan the plans are emitted as requests carrying "plan", for a
 * later `kgen --stage write`.
 *
 * Accounting: each record lists in origin.calls the calls that made it; a
 * plan call is charged to the first record emitted for its request, and a
 * call with several choices to the first record made from it, so summing
 * origin.usage over an archive counts every call once.
 */
#include "gen_llm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "extract.h"
#include "findings.h"
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
	int k;           /* which of the request's children is being written */
	char charged[17]; /* call_id of the last call charged (lib/llm.h) */
};

static void charge(struct job *j, json_t *origin, json_t *call)
{
	json_t *calls = json_array();
	if (j->pending) {
		json_array_extend(calls, j->pending);
		json_decref(j->pending);
		j->pending = NULL;
	}
	/* A call with several choices (--n) makes several records: it is
	 * charged to the first, so that an archive counts it once. */
	const char *id = json_string_value(json_object_get(call, "call_id"));
	if (call && !(id && strcmp(id, j->charged) == 0))
		json_array_append(calls, call);
	if (id)
		snprintf(j->charged, sizeof j->charged, "%s", id);
	/* The one accounting rule (lib/price.h): cached answers cost 0. */
	json_object_set_new(origin, "usage", llm_usage_json(calls));
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
	if (plan) {
		json_object_set(o, "plan", plan);
		if (json_is_string(json_object_get(plan, "kind")))
			json_object_set(o, "kind", json_object_get(plan, "kind"));
	}
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

/* Common template variables for a request: the task, the base and the
 * reference with their timings and resources, the detected device, the
 * knowledge that fits (back end, the base's binding limit, architecture)
 * and the lab notebook (docs/providers.md, "What the model is told"). */
static json_t *vars_for(struct job *j, const json_t *base)
{
	char e[ERRBUF], arch[64];
	const char *task = rec_str(j->req, "task"), *backend = rec_str(j->req, "backend");
	const json_t *insp = json_object_get(j->req, "inspirations");
	json_t *ref = json_array_get(insp, 0);
	const struct task *t = task_get(j->g->tasks, task, e);
	struct fact_ctx fc = {backend, t, fact_env(base, insp, j->g->notebook, task, backend)};
	struct fact_ctx rc = fc;
	if (json_is_object(rec_path(ref, "time.env")))
		rc.env = rec_path(ref, "time.env");
	struct prm_fit fit = {backend, fact_bound(base, &fc), fact_arch(fc.env, base, arch, sizeof arch)};
	char *tt = task_text(j->g, task);
	char *kn = prm_knowledge(j->sc->knowledge, &fit, 48000, e);
	if (!kn)
		gen_warnf(j->g, "knowledge: %s", e);
	char *nb = prm_notebook(j->g->notebook, j->g->speedups, task, backend, (size_t)j->sc->notebook_max);
	char *dv = fact_device(&fc, base);
	char *bt = fact_timings(base, &fc);
	char *br = fact_resources(base, &fc);
	char *rt = ref ? fact_timings(ref, &rc) : strdup("(no reference kernel)");
	char *fd = NULL;
	if (j->sc->findings) {
		char fp[4096];
		json_t *doc = fnd_path(j->sc->findings, task, backend, fc.env, fp, sizeof fp) == 0 ? fnd_load(fp) : NULL;
		fd = fnd_text(doc);
		json_decref(doc);
	}
	json_t *v = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:i}", "task", task,
			      "backend", backend, "task_json", tt ? tt : "", "knowledge",
			      kn ? kn : "(knowledge unavailable)", "notebook", nb ? nb : "", "device", dv ? dv : "",
			      "bound", fact_bound_name(fit.bound), "base_source", rec_str(base, "source"), "base_timings",
			      bt ? bt : "", "base_resources", br ? br : "", "reference_source",
			      ref && rec_str(ref, "source") ? rec_str(ref, "source") : "(no reference kernel)",
			      "reference_timings", rt ? rt : "", "n_avenues", 10, "n_plans", 5);
	json_object_set_new(v, "findings", json_string(fd ? fd : "(no findings kept: kgen --findings not given)\n"));
	free(fd);
	free(tt);
	free(kn);
	free(nb);
	free(dv);
	free(bt);
	free(br);
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
	/* The replay tag: which stage, for which parent, generation and
	 * child — the generation too, since a later generation may build on
	 * the same parent again, and replay answers a tag in recorded order
	 * within one process only (each generation is a new kgen). */
	char tag[256];
	const json_t *base = json_object_get(j->req, "base");
	const char *bid = json_string_value(json_object_get(base ? base : j->req, "id"));
	snprintf(tag, sizeof tag, "%s:%s:%lld:%lld", name, bid ? bid : "-",
		 (long long)json_integer_value(json_object_get(j->req, "generation")),
		 (long long)json_integer_value(json_object_get(j->req, "child")));
	struct llm_config cfg = j->sc->llm;
	cfg.replay_key = tag;
	char stage[16]; /* the ledger's: "plan", "write", "fix" */
	snprintf(stage, sizeof stage, "%.*s", (int)strcspn(name, "."), name);
	cfg.stage = stage;
	/* Writes and fixes are each child's own (its seed, distinct per child,
	 * docs/record.md); the plan is shared by a request's children. */
	char sample[64];
	json_t *cseed = json_object_get(json_object_get(j->req, "strategy"), "seed");
	if (strcmp(name, "plan.txt") != 0 && json_is_integer(cseed)) {
		/* ... and each of a request's children its own sample (the
		 * first keeps the bare seed: caches made before still hit). */
		if (j->k > 0)
			snprintf(sample, sizeof sample, "%lld/%d", (long long)json_integer_value(cseed), j->k);
		else
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

const char *const gen_plan_kinds[] = {"memory",    "compute", "parallelism", "algorithm", "precision",
				       "fusion",    "tuning",  "other",       NULL};

/* Set p's "kind" to one of gen_plan_kinds: the model's word, case
 * ignored, when it is one, else "other" (the bandit's arms must be few). */
static void plan_kind(json_t *p)
{
	const char *k = json_string_value(json_object_get(p, "kind"));
	int i = 0;
	while (k && gen_plan_kinds[i] && strcasecmp(k, gen_plan_kinds[i]) != 0)
		i++;
	json_object_set_new(p, "kind", json_string(k && gen_plan_kinds[i] ? gen_plan_kinds[i] : "other"));
}

/* The kind the request's bandit arm names ("plan:KIND" with KIND listed),
 * or NULL: then no kind is preferred. */
static const char *arm_kind(const json_t *req)
{
	const char *a = json_string_value(rec_path(req, "strategy.arm"));
	if (!a || strncmp(a, "plan:", 5) != 0)
		return NULL;
	for (int i = 0; gen_plan_kinds[i]; i++)
		if (strcmp(a + 5, gen_plan_kinds[i]) == 0)
			return gen_plan_kinds[i];
	return NULL;
}

static int has_kind(const json_t *p, const char *kind)
{
	const char *k = json_string_value(json_object_get(p, "kind"));
	return kind && k && strcmp(k, kind) == 0;
}

/* Keep the most innovative, the highest maximum and the highest minimum
 * uplift (distinct where possible), up to keep; and when the request's arm
 * wants a kind none of those has, the most innovative plan of that kind
 * too (kept_for "arm"), so the write can honour the arm. */
static json_t *keep_plans(json_t *plans, int keep, const char *want)
{
	static const char *const keys[] = {"innovation", "max_uplift", "min_uplift", "arm"};
	json_t *kept = json_array();
	size_t n = json_array_size(plans);
	char *used = calloc(n ? n : 1, 1);
	int have = 0;
	for (int k = 0; used && k < 4; k++) {
		if (k < 3 ? (int)json_array_size(kept) >= keep : have || !want)
			continue;
		long best = -1;
		for (size_t i = 0; i < n; i++)
			if (!used[i] && (k < 3 || has_kind(json_array_get(plans, i), want)) &&
			    (best < 0 || num_of(json_array_get(plans, i), keys[k < 3 ? k : 0]) >
					     num_of(json_array_get(plans, (size_t)best), keys[k < 3 ? k : 0])))
				best = (long)i;
		if (best < 0)
			continue;
		used[best] = 1;
		json_t *p = json_deep_copy(json_array_get(plans, (size_t)best));
		have |= has_kind(p, want);
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
	size_t i;
	json_t *p;
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
	json_array_foreach(plans, i, p) {
		if (json_is_object(p))
			plan_kind(p);
	}
	*kept = keep_plans(plans, j->sc->keep, arm_kind(j->req));
	json_t *av = json_object_get(a, "avenues");
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
			if (json_is_string(json_object_get(plan_obj, "kind")))
				json_object_set(o, "kind", json_object_get(plan_obj, "kind"));
			json_t *h = json_object_get(plan_obj, "hypothesis");
			if (!h)
				h = json_object_get(plan_obj, "title");
			if (h)
				json_object_set(o, "hypothesis", h);
		}
		if (fix_attempt > 0) {
			/* a fix pursues the kind of what it fixes (the bandit's arm) */
			if (json_is_string(rec_path(base, "origin.kind")))
				json_object_set(o, "kind", rec_path(base, "origin.kind"));
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
	struct job j = {.g = g, .sc = g->stages, .req = req};
	const char *stage = g->stages->stage;
	const json_t *base = json_object_get(req, "base");
	json_t *given = json_object_get(req, "plan");
	int rc = 0;
	if (strcmp(stage, "fix") == 0 || (strcmp(stage, "auto") == 0 && is_failed(base))) {
		rc = fix(&j, base);
	} else if (json_is_object(given) && strcmp(stage, "plan") != 0) {
		for (int k = 0; k < g->children && rc == 0; k++) {
			j.k = k;
			rc = write_plan(&j, base, given);
		}
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
			/* Child k of request c takes kept plan (c*N + k) mod the
			 * number kept, over the plans of the arm's kind alone when
			 * the request's bandit arm names one and a plan has it. */
			json_t *ci = json_object_get(req, "child");
			size_t c0 = json_is_integer(ci) ? (size_t)json_integer_value(ci) * (size_t)g->children : 0;
			const char *want = arm_kind(req);
			json_t *pool = json_array(), *pl;
			size_t i;
			json_array_foreach(kept, i, pl) {
				if (has_kind(pl, want))
					json_array_append(pool, pl);
			}
			if (json_array_size(pool) == 0)
				json_array_extend(pool, kept);
			size_t np = json_array_size(pool);
			for (int k = 0; k < g->children && rc == 0 && np; k++) {
				j.k = k;
				rc = write_plan(&j, base, json_array_get(pool, (c0 + (size_t)k) % np));
			}
			json_decref(pool);
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
	struct job j = {.g = g, .sc = g->stages, .req = req};
	int rc = fix(&j, rec);
	json_decref(req);
	return rc;
}

/* ---- findings ---- */

static int seen_cb(const void *ctx, const char *id) { return gen_seen(ctx, id); }

int gen_llm_findings(struct gen *g, const json_t *req)
{
	struct job j = {.g = g, .sc = g->stages, .req = req};
	char e[ERRBUF], fp[4096];
	const char *task = rec_str(req, "task"), *backend = rec_str(req, "backend");
	const json_t *env = fact_env(NULL, NULL, g->notebook, task, backend);
	if (!g->stages->findings || fnd_path(g->stages->findings, task, backend, env, fp, sizeof fp) != 0)
		return emit_fail(&j, "findings", "internal", "--stage findings needs --findings DIR (a short path)", NULL,
				 NULL);
	json_t *old = fnd_load(fp);
	json_t *vars = json_pack("{s:s, s:s}", "task", task, "backend", backend);
	struct fact_ctx fc = {backend, task_get(g->tasks, task, e), env};
	char *nb = prm_notebook(g->notebook, g->speedups, task, backend, 200);
	char *dv = fact_device(&fc, NULL);
	char *cur = fnd_text(old);
	json_object_set_new(vars, "notebook", json_string(nb ? nb : ""));
	json_object_set_new(vars, "device", json_string(dv ? dv : ""));
	json_object_set_new(vars, "findings", json_string(cur ? cur : ""));
	json_object_set_new(vars, "max_findings", json_integer(FND_MAX));
	free(nb);
	free(dv);
	free(cur);
	const char *reason;
	struct llm_reply r;
	int rc = ask(&j, "findings.txt", vars, &r, &reason, e);
	json_decref(vars);
	json_t *call = llm_reply_json(&g->stages->llm, &r, "findings");
	if (rc != 0) {
		llm_reply_free(&r);
		json_decref(old);
		rc = emit_fail(&j, "findings", reason, e, call, NULL);
		json_decref(call);
		return rc;
	}
	json_t *a = answer_json(r.text);
	int df = 0, di = 0;
	json_t *kept = fnd_validate(a, seen_cb, g, &df, &di);
	json_decref(a);
	llm_reply_free(&r);
	if (!kept) {
		json_decref(old);
		rc = emit_fail(&j, "findings", "bad_findings", "the answer holds no JSON object with a \"findings\" array",
			       call, NULL);
		json_decref(call);
		return rc;
	}
	json_t *calls = json_array();
	if (json_is_array(json_object_get(old, "calls")))
		json_array_extend(calls, json_object_get(old, "calls"));
	json_t *c0 = json_deep_copy(call);
	json_object_del(c0, "exchange");
	json_array_append_new(calls, c0);
	json_decref(old);
	const char *dev = json_string_value(json_object_get(env, "gpu"));
	if (!dev)
		dev = json_string_value(json_object_get(env, "cpu"));
	json_t *doc = json_pack("{s:s, s:s, s:s?, s:O?, s:O, s:o}", "task", task, "backend", backend, "device", dev,
				"generation", json_object_get(req, "generation"), "findings", kept, "calls", calls);
	int saved = fnd_save(fp, doc, e);
	json_decref(doc);
	if (saved != 0) {
		json_decref(kept);
		rc = emit_fail(&j, "findings", "internal", e, call, NULL);
		json_decref(call);
		return rc;
	}
	json_t *out = json_pack("{s:s, s:s, s:s, s:O?, s:{s:s, s:I, s:I, s:I}}", "status", "findings", "task", task,
				"backend", backend, "generation", json_object_get(req, "generation"), "findings", "file", fp,
				"kept", (json_int_t)json_array_size(kept), "dropped", (json_int_t)df, "dropped_ids",
				(json_int_t)di);
	json_decref(kept);
	json_t *o = base_origin(&j, "findings");
	charge(&j, o, call);
	json_object_set_new(out, "origin", o);
	json_decref(call);
	rc = g->emit(g->ctx, out) ? -1 : 0;
	json_decref(out);
	return rc;
}
