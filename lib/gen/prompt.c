/*
 * prompt: templates, knowledge and notebook; see prompt.h.
 *
 * The templates stay dumb on purpose (substitution only, no logic): what a
 * user edits in data/prompts/ is exactly what the model sees, less the
 * placeholders.
 */
#include "prompt.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "file.h"
#include "rec.h"
#include "strbuf.h"
#include "task.h"

#ifndef KSCI_DATADIR
#define KSCI_DATADIR "data"
#endif

static const char *root(const char *opt, const char *env, const char *sub, char *buf, size_t n)
{
	if (opt && *opt)
		return opt;
	const char *e = getenv(env);
	if (e && *e)
		return e;
	snprintf(buf, n, "%s/%s", KSCI_DATADIR, sub);
	return buf;
}

const char *prm_dir(const char *opt)
{
	static char buf[4096];
	return root(opt, "KSCI_PROMPTS", "prompts", buf, sizeof buf);
}

const char *prm_knowledge_dir(const char *opt)
{
	static char buf[4096];
	return root(opt, "KSCI_KNOWLEDGE", "knowledge", buf, sizeof buf);
}

static char *slurp(const char *path, char *errbuf)
{
	char *s;
	return file_read(path, &s, NULL, errbuf) < 0 ? NULL : s;
}

char *prm_load(const char *dir, const char *name, char *errbuf)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	return slurp(path, errbuf);
}

char *prm_render(const char *tmpl, const json_t *vars, char *errbuf)
{
	struct strbuf b = STRBUF_INIT;
	const char *p = tmpl;
	for (;;) {
		const char *o = strstr(p, "{{");
		if (!o) {
			sb_add(&b, p);
			break;
		}
		const char *c = strstr(o + 2, "}}");
		if (!c) {
			sb_add(&b, p);
			break;
		}
		sb_addn(&b, p, (size_t)(o - p));
		char key[128];
		size_t n = (size_t)(c - o - 2);
		while (n && o[2] == ' ')
			o++, n--;
		while (n && o[2 + n - 1] == ' ')
			n--;
		if (n >= sizeof key) {
			sb_release(&b);
			errf(errbuf, "template placeholder too long");
			return NULL;
		}
		memcpy(key, o + 2, n);
		key[n] = '\0';
		json_t *v = json_object_get(vars, key);
		if (json_is_string(v))
			sb_add(&b, json_string_value(v));
		else if (json_is_integer(v))
			sb_printf(&b, "%lld", (long long)json_integer_value(v));
		else if (json_is_number(v))
			sb_printf(&b, "%g", json_number_value(v));
		else {
			sb_release(&b);
			errf(errbuf, "template uses unknown placeholder {{%s}}", key);
			return NULL;
		}
		p = c + 2;
	}
	char *s = sb_detach(&b, NULL);
	if (!s)
		errf(errbuf, "out of memory");
	return s;
}

/* ---- knowledge ---- */

static int cmpstr(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static const char *trim(const char *s, const char *end, size_t *n)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	*n = (size_t)(end - s);
	return s;
}

static int word_is(const char *w, size_t n, const char *s) { return strlen(s) == n && strncmp(w, s, n) == 0; }

int prm_tags_fit(const char *line, const struct prm_fit *fit, char *errbuf)
{
	if (strncmp(line, "tags:", 5) != 0)
		return 1;
	const char *p = line + 5, *end = p + strcspn(p, "\n");
	int fits = 1;
	while (p < end) {
		const char *semi = memchr(p, ';', (size_t)(end - p));
		const char *ce = semi ? semi : end;
		size_t cn;
		const char *cl = trim(p, ce, &cn);
		p = semi ? semi + 1 : end;
		if (cn == 0)
			continue;
		const char *eq = memchr(cl, '=', cn);
		size_t kn;
		const char *key = eq ? trim(cl, eq, &kn) : NULL;
		if (!eq || kn == 0)
			return errf(errbuf, "tag \"%.*s\" is not key=value[,value...]", (int)cn, cl);
		int kb = word_is(key, kn, "backend"), kt = word_is(key, kn, "bottleneck"), ka = word_is(key, kn, "arch");
		if (!kb && !kt && !ka)
			return errf(errbuf, "unknown tag key \"%.*s\" (backend, bottleneck, arch)", (int)kn, key);
		/* A dimension the request says nothing of fits (an unknown or mixed
		 * binding limit); an arch tag needs a detected architecture. */
		int hit = kt && (fit->bound == FACT_UNKNOWN || fit->bound == FACT_MIXED);
		const char *v = eq + 1, *vend = cl + cn;
		while (v <= vend) {
			const char *comma = memchr(v, ',', (size_t)(vend - v));
			const char *ve = comma ? comma : vend;
			size_t vn;
			const char *w = trim(v, ve, &vn);
			v = ve + 1;
			if (vn == 0 || vn > 63)
				return errf(errbuf, "tag %.*s has an empty or overlong value", (int)kn, key);
			char val[64];
			snprintf(val, sizeof val, "%.*s", (int)vn, w);
			if (kb) {
				if (!rec_backend_known(val))
					return errf(errbuf, "tag backend: unknown back end \"%s\" (c, cuda, hip)", val);
				hit |= fit->backend && strcmp(val, fit->backend) == 0;
			} else if (kt) {
				if (strcmp(val, "memory") != 0 && strcmp(val, "compute") != 0)
					return errf(errbuf, "tag bottleneck: \"%s\" is neither memory nor compute", val);
				hit |= strcmp(val, fact_bound_name(fit->bound)) == 0;
			} else {
				fact_arch_normalise(val);
				hit |= fit->arch && *fit->arch && strcmp(val, fit->arch) == 0;
			}
			if (!comma)
				break;
		}
		fits &= hit;
	}
	return fits;
}

char *prm_knowledge(const char *dir, const struct prm_fit *fit, size_t max, char *errbuf)
{
	DIR *d = opendir(dir);
	if (!d) {
		errf(errbuf, "%s: %s", dir, strerror(errno));
		return NULL;
	}
	char *names[256];
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < 256) {
		size_t l = strlen(e->d_name);
		if (l < 4 || strcmp(e->d_name + l - 3, ".md") != 0 || e->d_name[0] == '.')
			continue;
		names[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof *names, cmpstr);
	struct strbuf b = STRBUF_INIT;
	const char *bound = fit->bound == FACT_MEMORY    ? "a memory-bound base"
			    : fit->bound == FACT_COMPUTE ? "a compute-bound base"
			    : fit->bound == FACT_MIXED   ? "a base memory-bound at some sizes, compute-bound at others"
							 : "a base whose binding limit is unknown";
	sb_printf(&b, "(Notes chosen for the %s back end, %s, architecture %s.)\n\n", fit->backend ? fit->backend : "?",
		  bound, fit->arch && *fit->arch ? fit->arch : "not detected");
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		char e2[ERRBUF];
		char *t = names[i] && rc == 0 ? prm_load(dir, names[i], e2) : NULL;
		int f = t ? prm_tags_fit(t, fit, e2) : 0;
		if (t && f < 0) {
			errf(errbuf, "%s/%s: %s", dir, names[i], e2);
			rc = -1;
		}
		const char *body = t;
		if (t && strncmp(t, "tags:", 5) == 0) {
			body = t + strcspn(t, "\n");
			body += *body == '\n';
		}
		if (f > 0 && b.len + strlen(body) <= max) {
			sb_add(&b, body);
			sb_add(&b, "\n");
		}
		free(t);
		free(names[i]);
	}
	if (rc) {
		sb_release(&b);
		return NULL;
	}
	while (b.len > 0 && b.buf[b.len - 1] == '\n')
		b.buf[--b.len] = '\0';
	char *s = sb_detach(&b, NULL);
	if (!s)
		errf(errbuf, "out of memory");
	return s;
}

/* ---- the notebook ---- */

static const char *text_of(const json_t *v)
{
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_object(v))
		return json_string_value(json_object_get(v, "title"));
	return NULL;
}

/* s on one line (newlines and tabs as spaces), cut at max bytes on a UTF-8
 * boundary with "...". */
static void add_line(struct strbuf *b, const char *s, size_t max)
{
	size_t n = strlen(s);
	int cut = n > max;
	if (cut) {
		n = max;
		while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
			n--;
	}
	for (size_t i = 0; i < n; i++)
		sb_addc(b, s[i] == '\n' || s[i] == '\r' || s[i] == '\t' ? ' ' : s[i]);
	if (cut)
		sb_add(b, "...");
}

static int ci_has(const char *s, size_t n, const char *w)
{
	size_t k = strlen(w);
	for (size_t i = 0; i + k <= n; i++)
		if (strncasecmp(s + i, w, k) == 0)
			return 1;
	return 0;
}

const char *prm_first_error(const char *log, char *buf, size_t n)
{
	buf[0] = '\0';
	for (const char *p = log; p && *p;) {
		size_t len = strcspn(p, "\n");
		if (ci_has(p, len, "error") || ci_has(p, len, "fatal")) {
			/* "/tmp/ksci-x/k.cu(12): error: ..." reads "k.cu(12): error: ..." */
			size_t name = strcspn(p, ":(\n");
			const char *s = p;
			if (p[0] == '/' && name < len)
				for (size_t i = 0; i < name; i++)
					if (p[i] == '/')
						s = p + i + 1;
			size_t m = len - (size_t)(s - p);
			while (m > 0 && (s[m - 1] == '\r' || s[m - 1] == ' '))
				m--;
			snprintf(buf, n, "%.*s", (int)m, s);
			return buf;
		}
		p += len + (p[len] == '\n');
	}
	return buf;
}

/* Why a record failed, one line into b (nothing for a success). */
static void reason_of(struct strbuf *b, const json_t *r)
{
	static const char *const stages[] = {"compile", "verify", "time", NULL};
	const char *st = rec_str(r, "status");
	char line[512];
	if (!st || strcmp(st, ST_TIMED) == 0)
		return;
	if (strcmp(st, "gen_error") == 0) {
		const char *why = json_string_value(rec_path(r, "gen.status"));
		const char *msg = json_string_value(rec_path(r, "gen.message"));
		sb_printf(b, ": %s", why ? why : "?");
		if (msg) {
			sb_add(b, ": ");
			add_line(b, msg, 200);
		}
		return;
	}
	if (strcmp(st, ST_SLOW) == 0 && json_is_object(rec_path(r, "time.slow"))) {
		const json_t *sl = rec_path(r, "time.slow");
		char sz[256];
		task_size_str(json_object_get(sl, "size"), sz, sizeof sz);
		sb_printf(b, ": timing stopped at %s, %.3fx vs seed, below the bound %.3fx", sz,
			  rec_num(sl, "speedup_vs_seed"), rec_num(sl, "bound"));
		return;
	}
	const char *msg = NULL;
	for (int i = 0; stages[i] && !msg; i++) {
		const json_t *o = json_object_get(r, stages[i]);
		if (!json_is_false(json_object_get(o, "ok")))
			continue;
		if (i == 0 && json_is_string(json_object_get(o, "log")) &&
		    *prm_first_error(json_string_value(json_object_get(o, "log")), line, sizeof line))
			msg = line;
		else
			msg = json_string_value(json_object_get(o, "message"));
	}
	/* Records written by hand or by older tools may lack "ok". */
	if (!msg)
		msg = json_string_value(rec_path(r, "verify.message"));
	if (!msg)
		msg = json_string_value(rec_path(r, "time.message"));
	if (!msg)
		msg = json_string_value(rec_path(r, "compile.message"));
	if (!msg)
		msg = json_string_value(rec_path(r, "error.message"));
	if (msg) {
		sb_add(b, ": ");
		add_line(b, msg, 200);
	}
}

struct book {
	const json_t *byid;	/* id -> record, of all records */
	const json_t *fixes;	/* failed id -> [fix records] */
	const json_t *speedups; /* id -> speedup_vs_seed, may be NULL */
};

static double speedup_of(const struct book *k, const char *id)
{
	json_t *v = id ? json_object_get(k->speedups, id) : NULL;
	if (json_is_number(v))
		return json_number_value(v);
	json_t *r = id ? json_object_get(k->byid, id) : NULL;
	return r ? rec_num(json_object_get(r, "time"), "speedup_vs_seed") : NAN;
}

static const char *parent_of(const json_t *r) { return json_string_value(json_array_get(json_object_get(r, "parents"), 0)); }

/* The nearest timed ancestor (through failed kernels a fix repaired). */
static const char *timed_ancestor(const struct book *k, const json_t *r)
{
	const char *p = parent_of(r);
	for (int hops = 0; p && hops < 8; hops++) {
		if (isfinite(speedup_of(k, p)))
			return p;
		p = parent_of(json_object_get(k->byid, p));
	}
	return NULL;
}

/* ", 1.240x vs parent" or ", 1.100x vs ID"; nothing when unknown. */
static void effect(struct strbuf *b, const struct book *k, const json_t *r, int with_seed)
{
	double sp = rec_num(json_object_get(r, "time"), "speedup_vs_seed");
	const char *a = timed_ancestor(k, r);
	if (isfinite(sp) && a && speedup_of(k, a) > 0) {
		const char *p = parent_of(r);
		if (p && strcmp(a, p) == 0)
			sb_printf(b, ", %.3fx vs parent", sp / speedup_of(k, a));
		else
			sb_printf(b, ", %.3fx vs %s", sp / speedup_of(k, a), a);
	}
	if (with_seed && isfinite(sp))
		sb_printf(b, ", %.3fx vs seed", sp);
}

static void entry(struct strbuf *b, const struct book *k, const json_t *r)
{
	const char *id = rec_str(r, "id"), *par = parent_of(r), *st = rec_str(r, "status");
	const char *fixes = json_string_value(rec_path(r, "origin.fixes"));
	sb_printf(b, "- %s (", id ? id : "(no code)");
	if (fixes) {
		json_t *fa = rec_path(r, "origin.fix_attempt");
		sb_printf(b, "fix");
		if (json_is_integer(fa))
			sb_printf(b, " %lld", (long long)json_integer_value(fa));
		sb_printf(b, " of %s", fixes);
		const char *gp = parent_of(json_object_get(k->byid, fixes));
		if (gp)
			sb_printf(b, ", child of %s", gp);
	} else {
		sb_printf(b, "child of %s", par ? par : "-");
	}
	sb_add(b, ")");
	const char *title = json_string_value(rec_path(r, "origin.plan.title"));
	const char *h = text_of(rec_path(r, "origin.hypothesis"));
	if (title) {
		sb_add(b, " \"");
		add_line(b, title, 120);
		sb_add(b, "\"");
	}
	if (h && (!title || strcmp(h, title) != 0)) {
		sb_add(b, title ? ": " : " ");
		add_line(b, h, 200);
	}
	sb_printf(b, " -> %s", st ? st : "?");
	reason_of(b, r);
	effect(b, k, r, 1);
	const json_t *fx = id ? json_object_get(k->fixes, id) : NULL;
	size_t i;
	json_t *f;
	json_array_foreach(fx, i, f) {
		if (i == 3) {
			sb_printf(b, "; %zu more fixes", json_array_size(fx) - 3);
			break;
		}
		const char *fid = rec_str(f, "id"), *fst = rec_str(f, "status");
		int ok = fst && strcmp(fst, ST_TIMED) == 0;
		sb_printf(b, "; %s %s -> %s", ok ? "fixed by" : "fix", fid ? fid : "?", fst ? fst : "?");
		if (ok)
			effect(b, k, f, 0);
	}
	sb_add(b, "\n");
}

/* A record without the field, or a caller without a filter, matches. */
static int same(const char *field, const char *want) { return !field || !want || strcmp(field, want) == 0; }

char *prm_notebook(const json_t *records, const json_t *speedups, const char *task, const char *backend,
		   size_t max)
{
	struct strbuf b = STRBUF_INIT;
	json_t *byid = json_object(), *fixes = json_object();
	size_t n = json_array_size(records), from = 0, count = 0;
	for (size_t i = 0; i < n; i++) {
		json_t *r = json_array_get(records, i);
		const char *id = rec_str(r, "id");
		const char *fx = json_string_value(rec_path(r, "origin.fixes"));
		if (id)
			json_object_set(byid, id, r);
		if (fx && *fx) {
			json_t *a = json_object_get(fixes, fx);
			if (!a)
				json_object_set_new(fixes, fx, a = json_array());
			json_array_append(a, r);
		}
		if (same(rec_str(r, "task"), task) && same(rec_str(r, "backend"), backend))
			count++;
	}
	if (count > max)
		from = count - max;
	count = 0;
	struct book k = {byid, fixes, speedups};
	for (size_t i = 0; i < n; i++) {
		const json_t *r = json_array_get(records, i);
		if (!same(rec_str(r, "task"), task) || !same(rec_str(r, "backend"), backend))
			continue;
		if (count++ < from)
			continue;
		entry(&b, &k, r);
	}
	json_decref(byid);
	json_decref(fixes);
	if (b.len == 0)
		sb_add(&b, "(empty: no experiment on this task yet)");
	if (b.len > 0 && b.buf[b.len - 1] == '\n')
		b.buf[--b.len] = '\0';
	return sb_detach(&b, NULL);
}
