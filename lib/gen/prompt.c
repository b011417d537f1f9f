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

#include "file.h"
#include "rec.h"
#include "strbuf.h"

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

static int cmpstr(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

char *prm_knowledge(const char *dir, const char *backend, size_t max, char *errbuf)
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
		if (strncmp(e->d_name, "arch-", 5) == 0) {
			int nv = strncmp(e->d_name, "arch-nvidia", 11) == 0, amd = strncmp(e->d_name, "arch-amd", 8) == 0;
			if ((nv && strcmp(backend, "cuda") != 0) || (amd && strcmp(backend, "hip") != 0))
				continue;
		}
		names[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof *names, cmpstr);
	struct strbuf b = STRBUF_INIT;
	for (size_t i = 0; i < n; i++) {
		char *t = names[i] ? prm_load(dir, names[i], errbuf) : NULL;
		if (t && b.len + strlen(t) <= max) {
			sb_add(&b, t);
			sb_add(&b, "\n");
		}
		free(t);
		free(names[i]);
	}
	char *s = sb_detach(&b, NULL);
	if (!s)
		errf(errbuf, "out of memory");
	return s;
}

static const char *text_of(const json_t *v)
{
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_object(v))
		return json_string_value(json_object_get(v, "title"));
	return NULL;
}

char *prm_notebook(const json_t *records, const char *task, size_t max)
{
	struct strbuf b = STRBUF_INIT;
	size_t n = json_array_size(records), from = 0, count = 0;
	for (size_t i = 0; i < n; i++)
		if (!task || !rec_str(json_array_get(records, i), "task") ||
		    strcmp(rec_str(json_array_get(records, i), "task"), task) == 0)
			count++;
	if (count > max)
		from = count - max;
	count = 0;
	for (size_t i = 0; i < n; i++) {
		const json_t *r = json_array_get(records, i);
		const char *t = rec_str(r, "task");
		if (task && t && strcmp(t, task) != 0)
			continue;
		if (count++ < from)
			continue;
		const char *h = text_of(rec_path(r, "origin.hypothesis"));
		if (!h)
			h = text_of(rec_path(r, "origin.plan"));
		const char *st = rec_str(r, "status");
		double sp = rec_num(json_object_get(r, "time"), "speedup_vs_seed");
		json_t *par = json_array_get(json_object_get(r, "parents"), 0);
		sb_printf(&b, "- [%s] %s -> %s", json_string_value(par) ? json_string_value(par) : "-", h ? h : "?",
			  st ? st : "?");
		if (isfinite(sp))
			sb_printf(&b, ", %.3fx vs seed", sp);
		const char *why = json_string_value(rec_path(r, "verify.message"));
		if (!why)
			why = json_string_value(rec_path(r, "gen.message"));
		if (why && st && strcmp(st, ST_TIMED) != 0)
			sb_printf(&b, " (%.160s)", why);
		sb_add(&b, "\n");
	}
	if (b.len == 0)
		sb_add(&b, "(empty: no experiment on this task yet)\n");
	return sb_detach(&b, NULL);
}

char *prm_timings(const json_t *rec)
{
	struct strbuf b = STRBUF_INIT;
	json_t *t = json_object_get(rec, "time");
	json_t *sizes = json_object_get(t, "sizes");
	size_t i;
	json_t *s;
	json_array_foreach(sizes, i, s) {
		char *sz = json_dumps(json_object_get(s, "size"), JSON_COMPACT);
		double us = rec_num(json_object_get(s, "candidate"), "median_us");
		double bl = rec_num(json_object_get(s, "baseline"), "median_us");
		sb_printf(&b, "- size %s: %.2f us (baseline %.2f us), %.3fx vs baseline, %.3fx vs seed", sz ? sz : "?", us,
			  bl, rec_num(s, "speedup_vs_baseline"), rec_num(s, "speedup_vs_seed"));
		double gf = rec_num(s, "gflops"), gb = rec_num(s, "gbps");
		if (isfinite(gf))
			sb_printf(&b, ", %.1f GFLOP/s", gf);
		if (isfinite(gb))
			sb_printf(&b, ", %.1f GB/s", gb);
		sb_add(&b, "\n");
		free(sz);
	}
	if (b.len == 0)
		sb_printf(&b, "(no timings: status %s)\n", rec_str(rec, "status") ? rec_str(rec, "status") : "?");
	else
		sb_printf(&b, "geometric mean: %.3fx vs baseline, %.3fx vs seed\n", rec_num(t, "speedup_vs_baseline"),
			  rec_num(t, "speedup_vs_seed"));
	return sb_detach(&b, NULL);
}
