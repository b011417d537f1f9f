/*
 * gen_compose: one candidate of the archive's per-size winners; see
 * gen_compose.h.
 *
 * Why: a kernel tuned for one shape is often poor at another (an H100 run
 * kept a softmax child at 58 µs for 4096x4096 but 233 µs for 32768x1000,
 * and another at 115.7 µs for 32768x1000 but 91 µs for 4096x4096), and a
 * geometric mean over one kernel throws both away.  The composition is an
 * ordinary candidate: kcompile, kverify at every test size, ktime.
 *
 * The winners: among the archive's `timed` records of the task and back
 * end (compositions and implausible results left out), the default is the one with the best
 * time.speedup_vs_seed; a benchmark size gets another record — a timed one,
 * or a `slow` one that finished that size (ktime --stop-slower stops a
 * size, not the record) — when that
 * record's speedup over the seed at the size — a ratio measured within one
 * judge, so records timed in different runs compare — beats the default's
 * there by more than COMPOSE_MARGIN (above the judge's A/A spread,
 * docs/gpu.md).  Nothing to compose when no size does.
 *
 * The text: C++ (cuda, hip) lets each variant live in a namespace of its
 * own.  Its #include lines go to the top (a system header inside a
 * namespace breaks), its solve is renamed by a macro (solve has C linkage,
 * and C names ignore namespaces), and its macros are #undef'd after it so
 * the next variant's TILE is its own.
 */
#include "gen_compose.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive.h"
#include "jscan.h"
#include "ndjson.h"
#include "rec.h"
#include "strbuf.h"

#define COMPOSE_MARGIN 1.02 /* a size's own winner must beat the default there by 2 % */
#define COMPOSE_MAX_SIZES 64

/* ---- the text ---- */

/* The directive a line starts with ("include", "define", ...) into d; 0
 * when the line is no preprocessor directive. */
static int directive(const char *l, const char *end, char *d, size_t dn, const char **after)
{
	while (l < end && (*l == ' ' || *l == '\t'))
		l++;
	if (l == end || *l != '#')
		return 0;
	l++;
	while (l < end && (*l == ' ' || *l == '\t'))
		l++;
	size_t n = 0;
	while (l < end && (isalpha((unsigned char)*l) || *l == '_') && n + 1 < dn)
		d[n++] = *l++;
	d[n] = 0;
	while (l < end && (*l == ' ' || *l == '\t'))
		l++;
	*after = l;
	return n > 0;
}

/* Whether name is already in the list (a NUL-separated run in b). */
static int listed(const struct strbuf *b, const char *name, size_t n)
{
	for (size_t i = 0; i < b->len;) {
		size_t m = strlen(b->buf + i);
		if (m == n && memcmp(b->buf + i, name, n) == 0)
			return 1;
		i += m + 1;
	}
	return 0;
}

/* One variant's text into body (includes to inc, once each; its macro
 * names to undef). */
static void variant_text(const char *src, struct strbuf *inc, struct strbuf *incs, struct strbuf *body,
			 struct strbuf *undef)
{
	for (const char *l = src; *l;) {
		const char *end = strchr(l, '\n');
		end = end ? end : l + strlen(l);
		char d[16];
		const char *after;
		int dir = directive(l, end, d, sizeof d, &after);
		if (dir && strcmp(d, "include") == 0) { /* as "#include X", each X once */
			size_t n = (size_t)(end - after);
			while (n && (after[n - 1] == ' ' || after[n - 1] == '\t' || after[n - 1] == '\r'))
				n--;
			if (!listed(incs, after, n)) {
				sb_addn(incs, after, n);
				sb_addc(incs, 0);
				sb_add(inc, "#include ");
				sb_addn(inc, after, n);
				sb_addc(inc, '\n');
			}
		} else if (dir && strcmp(d, "pragma") == 0 && strncmp(after, "once", 4) == 0) {
			/* nothing: the composition is one file */
		} else {
			if (dir && strcmp(d, "define") == 0) {
				size_t n = 0;
				while (after + n < end && (isalnum((unsigned char)after[n]) || after[n] == '_'))
					n++;
				if (n && !listed(undef, after, n)) {
					sb_addn(undef, after, n);
					sb_addc(undef, 0);
				}
			}
			sb_addn(body, l, (size_t)(end - l));
			sb_addc(body, '\n');
		}
		l = *end ? end + 1 : end;
	}
}

char *compose_source(const struct task *t, const char *backend, const struct compose_variant *v, int nv,
		     const int *pick, char *errbuf)
{
	if (strcmp(backend, "cuda") != 0 && strcmp(backend, "hip") != 0) {
		errf(errbuf, "composition needs C++ namespaces: back end %s has none (cuda and hip have)", backend);
		return NULL;
	}
	const json_t *bench = task_bench(t, backend);
	struct strbuf out = STRBUF_INIT, inc = STRBUF_INIT, incs = STRBUF_INIT, body = STRBUF_INIT;
	sb_printf(&out, "%s %d variants of task %s; default %s\n", COMPOSE_MARK, nv, t->name, v[0].id);
	sb_printf(&out, "// Each variant is a timed candidate, unchanged but for its solve's name; solve below\n"
			"// calls the variant that was fastest at the benchmark size the problem is near\n"
			"// (within a factor of 2 in every integer scalar), else the default.\n");
	for (int k = 0; k < nv; k++) {
		struct strbuf undef = STRBUF_INIT;
		sb_printf(&body, "\n// ---- variant %d: %s ----\n#define solve ksci_v%d_solve\nnamespace ksci_v%d {\n", k,
			  v[k].id, k, k);
		variant_text(v[k].source, &inc, &incs, &body, &undef);
		sb_printf(&body, "} // namespace ksci_v%d\n#undef solve\n", k);
		for (size_t i = 0; i < undef.len;) {
			const char *m = undef.buf + i;
			if (strcmp(m, "solve") != 0)
				sb_printf(&body, "#undef %s\n", m);
			i += strlen(m) + 1;
		}
		sb_release(&undef);
	}
	sb_addn(&out, inc.buf ? inc.buf : "", inc.len);
	sb_addn(&out, body.buf ? body.buf : "", body.len);
	char sig[1024];
	task_signature(t, backend, sig, sizeof sig);
	sb_printf(&out, "\nextern \"C\" %s\n{\n", sig);
	struct strbuf call = STRBUF_INIT;
	for (int i = 0, first = 1; i < t->nargs; i++, first = 0)
		sb_printf(&call, "%s%s", first ? "" : ", ", t->args[i].name);
	const char *args = call.buf ? call.buf : "";
	for (size_t i = 0; i < json_array_size(bench); i++) {
		if (pick[i] == 0)
			continue;
		const json_t *size = json_array_get(bench, i);
		struct strbuf cond = STRBUF_INIT;
		for (int a = 0; a < t->nargs; a++) {
			const struct task_arg *ta = &t->args[a];
			const json_t *val = json_object_get(size, ta->name);
			if (ta->kind != ARG_SCALAR || dtype_is_float(ta->dt) || !json_is_integer(val))
				continue;
			long long x = (long long)json_integer_value(val);
			if (cond.len)
				sb_add(&cond, " && ");
			if (x <= 0)
				sb_printf(&cond, "%s == %lld", ta->name, x);
			else
				sb_printf(&cond, "%s >= %lld && %s <= %lld", ta->name, (x + 1) / 2, ta->name, 2 * x);
		}
		char sz[256];
		task_size_str(size, sz, sizeof sz);
		if (cond.len)
			sb_printf(&out, "\tif (%s) { /* near %s */\n\t\tksci_v%d::ksci_v%d_solve(%s);\n\t\treturn;\n\t}\n",
				  cond.buf, sz, pick[i], pick[i], args);
		sb_release(&cond);
	}
	sb_printf(&out, "\tksci_v0::ksci_v0_solve(%s);\n}\n", args);
	sb_release(&call);
	sb_release(&inc);
	sb_release(&incs);
	sb_release(&body);
	char *s = sb_detach(&out, NULL);
	if (!s)
		errf(errbuf, "out of memory");
	return s;
}

/* ---- the winners ---- */

struct pick {
	const struct task *t;
	const json_t *bench;
	const char *task, *backend;
	json_t *best;                      /* the default: best time.speedup_vs_seed */
	double best_sp;
	json_t *size_best[COMPOSE_MAX_SIZES]; /* per benchmark size */
	double size_sp[COMPOSE_MAX_SIZES];
	struct gen *g;
	const char *name;
};

/* The record's speedup over the seed at benchmark size i; NAN when it has none. */
static double sp_at(const json_t *rec, const json_t *size)
{
	const json_t *sizes = rec_path(rec, "time.sizes");
	for (size_t k = 0; k < json_array_size(sizes); k++) {
		const json_t *s = json_array_get(sizes, k);
		if (json_equal(json_object_get(s, "size"), size))
			return rec_num(s, "speedup_vs_seed");
	}
	return NAN;
}

static int span_is(struct js_span v, const char *s)
{
	size_t n = strlen(s);
	return v.n == n + 2 && v.p[0] == '"' && memcmp(v.p + 1, s, n) == 0;
}

static void keep(json_t **slot, json_t *rec)
{
	json_incref(rec);
	json_decref(*slot);
	*slot = rec;
}

static int pick_line(void *ctx, const char *line, size_t n, long lineno, uint64_t off)
{
	static const char *const keys[] = {"task", "backend", "status"};
	struct pick *p = ctx;
	struct js_span sp[3];
	char e[ERRBUF];
	(void)off;
	/* Only timed records of the task and back end are parsed; a line the
	 * walk cannot read is gen_load_archive's to warn about. */
	if (js_fields(line, n, keys, 3, sp, e) != 0 || !span_is(sp[0], p->task) || !span_is(sp[1], p->backend) ||
	    !(span_is(sp[2], ST_TIMED) || span_is(sp[2], ST_SLOW)))
		return 0;
	int timed = span_is(sp[2], ST_TIMED);
	json_t *rec = nd_parse(line, n, e);
	if (!rec) {
		gen_warnf(p->g, "archive %s: line %ld: %s; line skipped", p->name, lineno, e);
		return 0;
	}
	const char *src = rec_str(rec, "source"), *id = rec_str(rec, "id");
	double all = rec_num(json_object_get(rec, "time"), "speedup_vs_seed");
	if (src && id && strncmp(src, COMPOSE_MARK, strlen(COMPOSE_MARK)) != 0 && (isfinite(all) || !timed) &&
	    !rec_path(rec, "time.implausible")) { /* held back: above the device's peak */
		if (timed && (!p->best || all > p->best_sp)) {
			keep(&p->best, rec);
			p->best_sp = all;
		}
		for (size_t i = 0; i < json_array_size(p->bench) && i < COMPOSE_MAX_SIZES; i++) {
			double s = sp_at(rec, json_array_get(p->bench, i));
			if (isfinite(s) && (!p->size_best[i] || s > p->size_sp[i])) {
				keep(&p->size_best[i], rec);
				p->size_sp[i] = s;
			}
		}
	}
	json_decref(rec);
	return 0;
}

int gen_compose_request(struct gen *g, const json_t *req, long line)
{
	char e[ERRBUF];
	const char *task = rec_str(req, "task"), *backend = rec_str(req, "backend");
	const struct task *t = task_get(g->tasks, task, e);
	if (!t)
		return gen_emit_invalid(g, req, line, e);
	if (strcmp(backend, "cuda") != 0 && strcmp(backend, "hip") != 0)
		return gen_emit_error(g, req, "compose", "unsupported",
				      "composition needs C++ namespaces: cuda and hip have them, c has not");
	if (!g->archive)
		return gen_emit_error(g, req, "compose", "no_archive", "compose reads the archive: kgen --archive FILE");
	struct pick p = {.t = t, .bench = task_bench(t, backend), .task = task, .backend = backend, .g = g};
	struct ar_file *a = ar_open(g->archive, e);
	int rc = -1;
	if (a) {
		p.name = ar_name(a);
		rc = ar_scan(a, pick_line, &p, e);
		ar_close(a);
	}
	size_t nb = json_array_size(p.bench);
	nb = nb < COMPOSE_MAX_SIZES ? nb : COMPOSE_MAX_SIZES;
	int out;
	if (rc != 0) {
		out = gen_emit_error(g, req, "compose", "archive", e);
	} else if (!p.best) {
		out = gen_emit_error(g, req, "compose", "nothing_to_compose", "the archive has no timed record of the task");
	} else {
		struct compose_variant v[COMPOSE_MAX_SIZES + 1];
		int pick[COMPOSE_MAX_SIZES], nv = 1;
		v[0] = (struct compose_variant){rec_str(p.best, "id"), rec_str(p.best, "source")};
		json_t *variants = json_array();
		json_array_append_new(variants, json_pack("{s:s, s:[]}", "id", v[0].id, "sizes"));
		for (size_t i = 0; i < nb; i++) {
			pick[i] = 0;
			json_t *w = p.size_best[i];
			double base = sp_at(p.best, json_array_get(p.bench, i));
			int own = w && w != p.best && (!isfinite(base) || p.size_sp[i] > base * COMPOSE_MARGIN);
			if (own) {
				for (int k = 1; k < nv; k++)
					if (strcmp(v[k].id, rec_str(w, "id")) == 0)
						pick[i] = k;
				if (!pick[i]) {
					pick[i] = nv;
					v[nv++] = (struct compose_variant){rec_str(w, "id"), rec_str(w, "source")};
					json_array_append_new(variants, json_pack("{s:s, s:[]}", "id", v[pick[i]].id, "sizes"));
				}
			}
			json_t *who = json_array_get(variants, (size_t)pick[i]);
			json_array_append_new(json_object_get(who, "sizes"),
					      json_pack("{s:O, s:f, s:f}", "size", json_array_get(p.bench, i),
							"speedup_vs_seed", own ? p.size_sp[i] : base, "default_speedup_vs_seed",
							isfinite(base) ? base : 0.0));
		}
		if (nv == 1) {
			snprintf(e, sizeof e,
				 "no benchmark size has a winner %.0f %% faster than the best overall (%s, %.3fx the seed) there",
				 (COMPOSE_MARGIN - 1) * 100, v[0].id, p.best_sp);
			out = gen_emit_error(g, req, "compose", "nothing_to_compose", e);
		} else {
			char *src = compose_source(t, backend, v, nv, pick, e);
			if (!src) {
				out = gen_emit_error(g, req, "compose", "internal", e);
			} else {
				char id[REC_ID_LEN + 1];
				rec_make_id(task, backend, src, id);
				if (gen_seen(g, id)) {
					snprintf(e, sizeof e, "this composition of %d variants is %s, already in the archive", nv,
						 id);
					out = gen_emit_error(g, req, "compose", "nothing_to_compose", e);
				} else {
					json_t *c = gen_child_skeleton(req);
					json_t *parents = json_array();
					for (int k = 0; k < nv; k++)
						json_array_append_new(parents, json_string(v[k].id));
					json_object_set_new(c, "parents", parents);
					json_object_set_new(c, "source", json_string(src));
					json_object_set_new(c, "origin", json_pack("{s:s, s:s, s:O}", "generator", "compose",
										   "default", v[0].id, "variants", variants));
					out = gen_emit_child(g, c, id);
				}
				free(src);
			}
		}
		json_decref(variants);
	}
	json_decref(p.best);
	for (size_t i = 0; i < COMPOSE_MAX_SIZES; i++)
		json_decref(p.size_best[i]);
	return out;
}
