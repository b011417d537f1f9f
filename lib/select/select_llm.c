/*
 * select_llm: the Kernel Scientist's evolutionary selector — a language
 * model chooses the base and the reference kernel.
 *
 * For each child the model sees the task, the population's size and its
 * best candidates (--shortlist, fastest first): id, generation, parent,
 * overall speedup and per-size median times and speedups from each
 * record's time.sizes, plus the picks already made this generation so that
 * children differ.  It answers with a JSON object {"base", "reference",
 * "reasoning"}; the reasoning goes into strategy.reasoning.  An answer that
 * names no eligible base falls back to a tournament for that child, and the
 * reason says so.  The call itself (provider, retries, accounting) is the
 * tool's ask callback over lib/llm.h.
 */
#include "select_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

char *sel_llm_prompt(const struct sel_pop *p, const int *idx, json_t *const *recs, int n, const char *taken)
{
	struct strbuf b = STRBUF_INIT;
	struct sel_stats st;
	sel_pop_stats(p, &st);
	sb_printf(&b,
	          "You choose parents in an evolutionary search for fast kernels.\n"
	          "Task %s, back end %s; the next generation is %ld.\n"
	          "The archive holds %ld candidates of this task: %ld timed (eligible), %ld failed.\n"
	          "Speedup is the geometric mean over benchmark sizes of baseline time / candidate time; higher is better.\n\n"
	          "The %d fastest candidates:\n",
	          st.task, p->o->backend, st.next_generation, st.records, st.timed, st.failed, n);
	for (int i = 0; i < n; i++) {
		const struct sel_cand *c = sel_pop_cand(p, idx[i]);
		sb_printf(&b, "- id %s, generation %ld, parent %s, speedup %.4gx", c->id, c->generation,
		          c->parent[0] ? c->parent : "none", c->speedup);
		json_t *sizes = recs[i] ? json_object_get(json_object_get(recs[i], "time"), "sizes") : NULL;
		size_t k;
		json_t *sz;
		json_array_foreach(sizes, k, sz) {
			char *size = json_dumps(json_object_get(sz, "size"), JSON_COMPACT);
			json_t *med = json_object_get(json_object_get(sz, "candidate"), "median_us");
			json_t *sp = json_object_get(sz, "speedup_vs_baseline");
			sb_printf(&b, "%s size %s: %.4g us (%.3gx)", k ? ";" : "; per size:", size ? size : "?",
			          json_number_value(med), json_number_value(sp));
			free(size);
		}
		sb_printf(&b, "\n");
	}
	if (taken && *taken)
		sb_printf(&b, "\nAlready chosen for this generation (prefer a different pair):\n%s", taken);
	sb_printf(&b, "\nChoose the base kernel to improve next and a different reference kernel to learn from.\n"
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
	json_t **recs = calloc((size_t)n + 1, sizeof *recs);
	struct strbuf taken = STRBUF_INIT;
	int rc = recs ? 0 : errf(errbuf, "out of memory");
	for (int i = 0; i < n && rc == 0; i++)
		recs[i] = p->fetch ? p->fetch(p->fetch_ctx, &p->c[p->elig[i]]) : NULL;
	for (int ch = 0; ch < o->population && rc == 0; ch++) {
		struct sel_pick *pk = &picks[ch];
		char *prompt = sel_llm_prompt(p, p->elig, recs, n, taken.buf);
		json_t *acct = NULL;
		char *answer = prompt ? o->ask(o->ask_ctx, prompt, &acct, errbuf) : NULL;
		free(prompt);
		if (!answer) {
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
	for (int i = 0; recs && i < n; i++)
		json_decref(recs[i]);
	free(recs);
	sb_release(&taken);
	return rc;
}
