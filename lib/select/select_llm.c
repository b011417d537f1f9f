/*
 * select_llm: the Kernel Scientist's evolutionary selector — a language
 * model chooses the base and the reference kernel.
 *
 * For each child the model sees, in a prompt of bounded size:
 *   - the task, the population's counts and its failures by status;
 *   - the fastest candidates (--shortlist, fastest first): id, generation,
 *     parent, the kind and hypothesis of the plan that made it (or the
 *     knobs mutate changed, or the failure it fixed), its speedup over the
 *     seed with one standard error and over the baseline, per-size medians
 *     with their errors (SEL_LLM_SIZES sizes at most), and how its own
 *     children fared (tried, timed, failed, the best one);
 *   - the last SEL_LLM_RECENT experiments of the task (children, newest
 *     last) with their hypothesis and outcome: the speedup over the seed and
 *     over their parent, or the status and why it failed (the first error
 *     line of the compiler log, the verifier's or the generator's message);
 *   - the picks already made this generation, so that children differ.
 * Text taken from records (hypotheses, messages) is cut to SEL_LLM_TEXT
 * bytes on one line.
 *
 * The uncertainty: per size, the relative standard errors of the
 * candidate's and the seed's times (sem_us / median_us of time.sizes[])
 * added in quadrature; for the geometric mean over m sizes, the root of
 * their sum of squares over m.  Shown as "±E%" after the speedup.
 *
 * The model answers with a JSON object {"base", "reference", "reasoning"};
 * the reasoning goes into strategy.reasoning.  An answer that names no
 * eligible base falls back to a tournament for that child, and the reason
 * says so.  The call itself (provider, cache, transcript, accounting) is
 * the tool's ask callback over lib/llm.h; this file gives it the replay key
 * "select:TASK:GENERATION:CHILD" and the child's seed as the cache sample,
 * as kgen's calls carry theirs, so that a replay of a whole run finds every
 * selector answer and a generation run again pays for none twice.
 */
#include "select_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec.h"
#include "strbuf.h"

#define SEL_LLM_SIZES 6   /* sizes shown per candidate */
#define SEL_LLM_TEXT 200  /* bytes of a hypothesis or a message */

/* The n bytes at s on one line (control characters become spaces), cut to
 * max bytes without splitting a UTF-8 sequence. */
static void add_textn(struct strbuf *b, const char *s, size_t n, size_t max)
{
	int cut = n > max;
	if (cut)
		for (n = max; n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80; n--)
			;
	for (size_t i = 0; i < n; i++)
		sb_addc(b, (unsigned char)s[i] < 0x20 ? ' ' : s[i]);
	if (cut)
		sb_add(b, "...");
}

static void add_text(struct strbuf *b, const char *s, size_t max) { add_textn(b, s, strlen(s), max); }

static const char *str_at(const json_t *rec, const char *path)
{
	return json_string_value(rec_path(rec, path));
}

/* sem_us / median_us of one role of a size; NAN when either is missing. */
static double rel_err(const json_t *role)
{
	json_t *med = json_object_get(role, "median_us"), *sem = json_object_get(role, "sem_us");
	if (!json_is_number(med) || !json_is_number(sem) || !(json_number_value(med) > 0))
		return NAN;
	return json_number_value(sem) / json_number_value(med);
}

static double size_rel(const json_t *sz)
{
	return hypot(rel_err(json_object_get(sz, "candidate")), rel_err(json_object_get(sz, "seed")));
}

/* The record's speedup over the seed (NAN when it has none) and its
 * relative standard error (NAN when a size lacks the figures). */
static double vs_seed(const json_t *rec, double *rel)
{
	json_t *t = json_object_get(rec, "time"), *sz;
	json_t *v = json_object_get(t, "speedup_vs_seed");
	double ss = 0;
	size_t k, m = 0;
	json_array_foreach(json_object_get(t, "sizes"), k, sz) {
		double r = size_rel(sz);
		ss += r * r;
		m++;
	}
	*rel = m ? sqrt(ss) / (double)m : NAN;
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static void add_speedup(struct strbuf *b, double sp, double rel, const char *what)
{
	if (isnan(sp)) {
		sb_printf(b, "no speedup over %s recorded", what);
		return;
	}
	sb_printf(b, "%.4gx %s", sp, what);
	if (!isnan(rel))
		sb_printf(b, " ±%.2g%%", rel * 100);
}

/* What made the candidate: the seed, the knobs mutate changed, the failure
 * it fixes, the plan's hypothesis. */
static void add_idea(struct strbuf *b, const json_t *rec)
{
	const json_t *o = json_object_get(rec, "origin");
	const char *gen = str_at(o, "generator"), *fixes = str_at(o, "fixes");
	const char *idea = str_at(o, "hypothesis");
	if (!idea)
		idea = str_at(o, "plan.title");
	if (gen && strcmp(gen, "seed") == 0) {
		sb_add(b, "; the task's seed kernel");
		return;
	}
	json_t *ch = json_object_get(o, "changes"), *c;
	size_t i;
	json_array_foreach(ch, i, c) {
		sb_add(b, i ? ", " : "; changed ");
		add_text(b, str_at(c, "knob") ? str_at(c, "knob") : "?", 60);
		sb_add(b, " ");
		add_text(b, str_at(c, "from") ? str_at(c, "from") : "?", 30);
		sb_add(b, "->");
		add_text(b, str_at(c, "to") ? str_at(c, "to") : "?", 30);
	}
	if (fixes) {
		sb_add(b, "; fix of ");
		add_text(b, fixes, 60);
	}
	if (idea) {
		sb_add(b, "; hypothesis: ");
		add_text(b, idea, SEL_LLM_TEXT);
	}
}

static const char *kind_of(const json_t *rec)
{
	const char *k = str_at(rec, "origin.kind");
	return k ? k : str_at(rec, "origin.plan.kind");
}

/* Why a failed record failed: the generator's reason, else the first
 * stage that said no — for the compiler the first line of its log that
 * mentions an error, else the stage's message. */
static void add_failure(struct strbuf *b, const json_t *rec)
{
	const char *st = rec_str(rec, "status");
	if (st && strcmp(st, ST_GEN_ERROR) == 0) {
		sb_add(b, str_at(rec, "gen.status") ? str_at(rec, "gen.status") : "?");
		if (str_at(rec, "gen.message")) {
			sb_add(b, ": ");
			add_text(b, str_at(rec, "gen.message"), SEL_LLM_TEXT);
		}
		return;
	}
	json_t *slow = rec_path(rec, "time.slow");
	if (slow) {
		sb_printf(b, "stopped early, %.3gx the seed at size ", json_number_value(json_object_get(slow, "speedup_vs_seed")));
		char *size = json_dumps(json_object_get(slow, "size"), JSON_COMPACT);
		sb_printf(b, "%s (bound %.3gx)", size ? size : "?", json_number_value(json_object_get(slow, "bound")));
		free(size);
		return;
	}
	static const char *const stages[] = {"compile", "verify", "time"};
	for (size_t i = 0; i < sizeof stages / sizeof *stages; i++) {
		json_t *so = json_object_get(rec, stages[i]);
		if (!json_is_false(json_object_get(so, "ok")))
			continue;
		const char *log = i == 0 ? json_string_value(json_object_get(so, "log")) : NULL;
		const char *e = log ? strstr(log, "error") : NULL;
		if (e) {
			while (e > log && e[-1] != '\n')
				e--;
			add_textn(b, e, strcspn(e, "\n"), SEL_LLM_TEXT);
			return;
		}
		const char *m = json_string_value(json_object_get(so, "message"));
		if (!m)
			m = json_string_value(json_object_get(so, "status"));
		add_text(b, m ? m : "?", SEL_LLM_TEXT);
		return;
	}
	sb_add(b, "no reason recorded");
}

int sel_llm_recent(const struct sel_pop *p, int *out, int max)
{
	int n = 0;
	for (size_t i = p->n; i-- > 0 && n < max;) {
		const struct sel_cand *c = &p->c[i];
		const char *st = sel_status_name(p, c->status);
		if (c->tb == p->tb && c->parent[0] && !c->dup &&
		    (rec_status_failed(st) || strcmp(st, ST_TIMED) == 0 || strcmp(st, ST_SLOW) == 0 ||
		     strcmp(st, ST_GEN_ERROR) == 0))
			out[n++] = (int)i;
	}
	for (int i = 0; i < n / 2; i++) {
		int t = out[i];
		out[i] = out[n - 1 - i];
		out[n - 1 - i] = t;
	}
	return n;
}

/* How the children of each shortlisted candidate fared. */
struct tally {
	int tried, timed, failed;
	double best; /* best child's speedup / this one's; 0 when none timed */
};

static struct tally *tally_children(const struct sel_pop *p, const struct sel_llm_view *v)
{
	struct tally *t = calloc((size_t)v->nbest + 1, sizeof *t);
	int *pos = malloc((p->n + 1) * sizeof *pos);
	if (!t || !pos) {
		free(t);
		free(pos);
		return NULL;
	}
	for (size_t i = 0; i < p->n; i++)
		pos[i] = -1;
	for (int i = 0; i < v->nbest; i++)
		pos[v->best[i]] = i;
	for (size_t i = 0; i < p->n; i++) {
		const struct sel_cand *c = &p->c[i];
		int par = c->tb == p->tb && !c->dup && c->parent[0] ? sel_find(p, c->parent) : -1;
		if (par < 0 || pos[par] < 0)
			continue;
		struct tally *k = &t[pos[par]];
		k->tried++;
		if (c->timed && c->speedup / p->c[par].speedup > k->best)
			k->best = c->speedup / p->c[par].speedup;
		k->timed += c->timed;
		k->failed += rec_status_failed(sel_status_name(p, c->status)) ||
		             strcmp(sel_status_name(p, c->status), ST_GEN_ERROR) == 0;
	}
	free(pos);
	return t;
}

static void add_candidate(struct strbuf *b, const struct sel_pop *p, int ci, const json_t *rec, const struct tally *t)
{
	const struct sel_cand *c = sel_pop_cand(p, ci);
	const char *kind = rec ? kind_of(rec) : NULL;
	double rel, sp = rec ? vs_seed(rec, &rel) : NAN;
	sb_printf(b, "- id %s (generation %ld, parent %s", c->id, c->generation, c->parent[0] ? c->parent : "none");
	if (kind) {
		sb_add(b, ", kind ");
		add_text(b, kind, 40);
	}
	sb_add(b, "): ");
	add_speedup(b, sp, rel, "the seed");
	sb_printf(b, ", %.4gx the baseline", c->speedup);
	if (rec)
		add_idea(b, rec);
	if (t && t->tried) {
		sb_printf(b, "; its children: %d tried, %d timed", t->tried, t->timed);
		if (t->timed)
			sb_printf(b, " (best %.3gx this one)", t->best);
		sb_printf(b, ", %d failed", t->failed);
	}
	json_t *sizes = rec ? json_object_get(json_object_get(rec, "time"), "sizes") : NULL, *sz;
	size_t k, ns = json_array_size(sizes);
	json_array_foreach(sizes, k, sz) {
		if (k == SEL_LLM_SIZES) {
			sb_printf(b, "; and %zu more sizes", ns - k);
			break;
		}
		char *size = json_dumps(json_object_get(sz, "size"), JSON_COMPACT);
		json_t *cand = json_object_get(sz, "candidate");
		double med = json_number_value(json_object_get(cand, "median_us")), r = rel_err(cand);
		sb_printf(b, "%s size %s: %.4g us", k ? ";" : "; per size:", size ? size : "?", med);
		if (!isnan(r))
			sb_printf(b, " ±%.2g%%", r * 100);
		json_t *ss = json_object_get(sz, "speedup_vs_seed");
		if (json_is_number(ss)) {
			sb_add(b, " (");
			add_speedup(b, json_number_value(ss), size_rel(sz), "the seed");
			sb_add(b, ")");
		}
		if (json_is_false(json_object_get(sz, "converged")))
			sb_add(b, ", not converged");
		free(size);
	}
	sb_add(b, "\n");
}

static void add_recent(struct strbuf *b, const struct sel_pop *p, int ci, const json_t *rec)
{
	const struct sel_cand *c = sel_pop_cand(p, ci);
	const char *st = sel_status_name(p, c->status), *kind = rec ? kind_of(rec) : NULL;
	sb_printf(b, "- %s%s (generation %ld, parent %s", c->id[0] ? "id " : "", c->id[0] ? c->id : "no code",
	          c->generation, c->parent);
	if (kind) {
		sb_add(b, ", kind ");
		add_text(b, kind, 40);
	}
	sb_add(b, ")");
	if (rec)
		add_idea(b, rec);
	int par = sel_find(p, c->parent);
	if (c->timed) {
		double rel, sp = rec ? vs_seed(rec, &rel) : NAN;
		sb_add(b, " -> timed: ");
		add_speedup(b, sp, rel, "the seed");
		if (par >= 0 && p->c[par].timed)
			sb_printf(b, ", %.3gx its parent", c->speedup / p->c[par].speedup);
	} else {
		sb_printf(b, " -> %s: ", st);
		if (rec)
			add_failure(b, rec);
		else
			sb_add(b, "(record unreadable)");
	}
	sb_add(b, "\n");
}

char *sel_llm_prompt(const struct sel_pop *p, const struct sel_llm_view *v, const char *taken)
{
	struct strbuf b = STRBUF_INIT;
	struct sel_stats st;
	sel_pop_stats(p, &st);
	sb_printf(&b,
	          "You choose parents in an evolutionary search for fast kernels.\n"
	          "Task %s, back end %s; the next generation is %ld.\n"
	          "The archive holds %ld candidates of this task: %ld timed (eligible), %ld failed",
	          st.task, p->o->backend, st.next_generation, st.records, st.timed, st.failed);
	/* failures by status, in the order the statuses first appeared */
	long *by = calloc((size_t)p->nstatus + 1, sizeof *by);
	for (size_t i = 0; by && i < p->n; i++) {
		const struct sel_cand *c = &p->c[i];
		const char *s = sel_status_name(p, c->status);
		if (c->tb == p->tb && !c->dup && (rec_status_failed(s) || strcmp(s, ST_GEN_ERROR) == 0))
			by[c->status]++;
	}
	for (int s = 0, first = 1; by && s < p->nstatus; s++)
		if (by[s]) {
			sb_printf(&b, "%s%s %ld", first ? " (" : ", ", sel_status_name(p, s), by[s]);
			first = 0;
		}
	int any = 0;
	for (int s = 0; by && s < p->nstatus; s++)
		any |= by[s] != 0;
	free(by);
	sb_printf(&b, "%s.\n"
	              "Speedups are geometric means over the benchmark sizes of the other kernel's median time / this "
	              "one's; higher is better. ±E%% is one standard error of the timing: differences within a few "
	              "errors are noise.\n\n"
	              "The %d fastest candidates:\n",
	          any ? ")" : "", v->nbest);
	struct tally *t = tally_children(p, v);
	for (int i = 0; i < v->nbest; i++)
		add_candidate(&b, p, v->best[i], v->best_recs[i], t ? &t[i] : NULL);
	free(t);
	if (v->nrecent > 0) {
		sb_printf(&b, "\nThe last %d experiments, newest last (hypothesis -> outcome; a failure says why):\n",
		          v->nrecent);
		for (int i = 0; i < v->nrecent; i++)
			add_recent(&b, p, v->recent[i], v->recent_recs[i]);
	}
	if (taken && *taken)
		sb_printf(&b, "\nAlready chosen for this generation (prefer a different pair):\n%s", taken);
	sb_printf(&b, "\nChoose the base kernel to improve next and a different reference kernel to learn from.\n"
	              "Weigh what was tried from each candidate and what failed, not only its speed.\n"
	              "Answer with one JSON object and nothing else:\n"
	              "{\"base\": \"<id>\", \"reference\": \"<id>\", \"reasoning\": \"<one paragraph>\"}\n");
	return sb_detach(&b, NULL);
}
static int eligible(const struct sel_pop *p, const char *id)
{
	int c = sel_find(p, id);
	for (int i = 0; c >= 0 && i < p->nelig; i++)
		if (p->elig[i] == c)
			return c;
	return -1;
}

int sel_llm_parse(const struct sel_pop *p, const char *answer, int *base, int *ref, char **reasoning, char *errbuf)
{
	*base = *ref = -1;
	*reasoning = NULL;
	for (const char *s = strchr(answer, '{'); s; s = strchr(s + 1, '{')) {
		json_t *o = json_loads(s, JSON_DISABLE_EOF_CHECK, NULL);
		const char *b = json_string_value(json_object_get(o, "base"));
		if (!b) {
			json_decref(o);
			continue;
		}
		if ((*base = eligible(p, b)) < 0) {
			errf(errbuf, "the model's base \"%.60s\" is not a timed candidate of the task", b);
			json_decref(o);
			return -1;
		}
		const char *r = json_string_value(json_object_get(o, "reference"));
		*ref = r ? eligible(p, r) : -1;
		if (*ref == *base)
			*ref = -1;
		const char *why = json_string_value(json_object_get(o, "reasoning"));
		*reasoning = strdup(why ? why : "");
		json_decref(o);
		return 0;
	}
	return errf(errbuf, "the model's answer holds no JSON object with a \"base\" id");
}

int sel_llm(struct sel_pop *p, struct sel_pick *picks, char *errbuf)
{
	const struct sel_opts *o = p->o;
	int n = o->shortlist > 0 ? o->shortlist : 20;
	if (n > p->nelig)
		n = p->nelig;
	int recent[SEL_LLM_RECENT];
	int nrecent = sel_llm_recent(p, recent, SEL_LLM_RECENT);
	json_t **recs = calloc((size_t)(n + nrecent) + 1, sizeof *recs);
	struct strbuf taken = STRBUF_INIT;
	int rc = recs ? 0 : errf(errbuf, "out of memory");
	for (int i = 0; i < n + nrecent && rc == 0; i++)
		recs[i] = p->fetch ? p->fetch(p->fetch_ctx, &p->c[i < n ? p->elig[i] : recent[i - n]]) : NULL;
	struct sel_llm_view v = {p->elig, recs, n, recent, recs + n, nrecent};
	struct sel_stats st;
	sel_pop_stats(p, &st);
	for (int ch = 0; ch < o->population && rc == 0; ch++) {
		struct sel_pick *pk = &picks[ch];
		char *prompt = sel_llm_prompt(p, &v, taken.buf);
		char key[200], sample[32];
		snprintf(key, sizeof key, "select:%s:%ld:%d", p->task, st.next_generation, ch);
		snprintf(sample, sizeof sample, "%llu", (unsigned long long)sel_child_seed(o->seed, ch));
		json_t *acct = NULL;
		char *answer = prompt ? o->ask(o->ask_ctx, prompt, key, sample, &acct, errbuf) : NULL;
		if (!prompt)
			errf(errbuf, "out of memory");
		free(prompt);
		if (!answer) {
			json_decref(acct);
			rc = -1;
			break;
		}
		int base, ref;
		char *why = NULL, e[ERRBUF];
		pk->info = json_object();
		if (sel_llm_parse(p, answer, &base, &ref, &why, e) == 0) {
			pk->base = base;
			if (ref >= 0 && o->inspirations > 0)
				sel_pick_add(pk, ref);
			snprintf(pk->reason, sizeof pk->reason, "llm: the model chose base %s (%.4gx)%s%s among the %d fastest of %d",
			         p->c[base].id, p->c[base].speedup, ref >= 0 ? " and reference " : "", ref >= 0 ? p->c[ref].id : "",
			         n, p->nelig);
			json_object_set_new(pk->info, "reasoning", json_string(why));
			sb_printf(&taken, "- base %s, reference %s\n", p->c[base].id, ref >= 0 ? p->c[ref].id : "none");
		} else {
			pk->base = sel_tourney(p, p->elig, p->nelig, o->tournament);
			snprintf(pk->reason, sizeof pk->reason, "llm: answer unusable (%s); fell back to a tournament of %d (%.4gx)",
			         e, o->tournament, p->c[pk->base].speedup);
			json_object_set_new(pk->info, "fallback", json_true());
		}
		sel_add_best(pk, p->elig, p->nelig, o->inspirations);
		json_object_set_new(pk->info, "shortlist", json_integer(n));
		if (acct)
			json_object_set_new(pk->info, "llm", acct);
		free(why);
		free(answer);
	}
	for (int i = 0; recs && i < n + nrecent; i++)
		json_decref(recs[i]);
	free(recs);
	sb_release(&taken);
	return rc;
}
