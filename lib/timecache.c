/* timecache: earlier time results, confirmed instead of re-timed; see timecache.h. */
#include "timecache.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cache.h"
#include "file.h"
#include "task.h"

static double num(const json_t *o, const char *k) { return json_number_value(json_object_get(o, k)); }

int tcache_keepable(const json_t *res)
{
	const char *st = json_string_value(json_object_get(res, "status"));
	return json_is_true(json_object_get(res, "ok")) && st && strcmp(st, "ok") == 0 &&
	       json_array_size(json_object_get(res, "sizes")) > 0 && !json_object_get(res, "slow") &&
	       !json_object_get(res, "implausible") && !json_object_get(res, "retime");
}

void tcache_device(const json_t *env, char *buf, size_t n)
{
	const char *uuid = json_string_value(json_object_get(env, "gpu_uuid"));
	const char *cpu = json_string_value(json_object_get(env, "cpu"));
	buf[0] = '\0';
	if (uuid) {
		const char *drv = json_string_value(json_object_get(env, "driver"));
		snprintf(buf, n, "cuda %s driver %s", uuid, drv ? drv : "?");
	} else if (cpu) {
		const char *k = json_string_value(json_object_get(env, "kernel"));
		char host[256] = "?";
		if (gethostname(host, sizeof host - 1) != 0)
			snprintf(host, sizeof host, "?");
		snprintf(buf, n, "cpu %s x%lld kernel %s on %s", cpu, (long long)json_integer_value(json_object_get(env, "cpus")),
			 k ? k : "?", host);
	}
}

static int entry_path(const char *key, char *p, size_t n, char *e)
{
	char dir[4096];
	if (cache_dir("time", dir, sizeof dir, e) < 0)
		return -1;
	if ((size_t)snprintf(p, n, "%s/%s.json", dir, key) >= n)
		return errf(e, "cache path too long");
	return 0;
}

json_t *tcache_load(const char *key, char *e)
{
	char p[4200];
	e[0] = '\0';
	if (entry_path(key, p, sizeof p, e) < 0 || access(p, F_OK) != 0) {
		e[0] = '\0';
		return NULL;
	}
	json_error_t je;
	json_t *j = json_load_file(p, 0, &je);
	if (!json_is_object(j) || cache_seal_check(j, key) != 1 || !json_is_object(json_object_get(j, "result")) ||
	    !tcache_keepable(json_object_get(j, "result"))) {
		errf(e, "%s: %s; timed in full instead", p,
		     !json_is_object(j) ? "not a JSON object" : "does not match its seal (edited or copied by hand)");
		json_decref(j);
		return NULL;
	}
	json_t *r = json_incref(json_object_get(j, "result"));
	json_decref(j);
	return r;
}

int tcache_store(const char *key, const json_t *res, char *e)
{
	char p[4200], at[32];
	if (entry_path(key, p, sizeof p, e) < 0)
		return -1;
	json_t *r = json_deep_copy(res);
	if (!r)
		return errf(e, "out of memory");
	static const char *const per_run[] = {"log", "seconds", "judge", "gpu_wait_s", "candidate_child", "retime", NULL};
	for (int i = 0; per_run[i]; i++)
		json_object_del(r, per_run[i]);
	time_t now = time(NULL);
	struct tm tm;
	strftime(at, sizeof at, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
	json_object_set_new(r, "stored_at", json_string(at));
	json_t *j = json_pack("{s:s, s:o}", "key", key, "result", r);
	char *text = NULL;
	int rc = -1;
	if (j && cache_seal(j, key) == 0 && (text = json_dumps(j, JSON_COMPACT)))
		rc = file_write_atomic(p, text, strlen(text), e);
	else
		errf(e, "out of memory");
	free(text);
	json_decref(j);
	return rc;
}

int tcache_confirm_size(const json_t *entry, const json_t *bench)
{
	const json_t *sizes = json_object_get(entry, "sizes"), *s;
	size_t i;
	int best = -1;
	double quickest = 0;
	if (json_array_size(sizes) != json_array_size(bench))
		return -1;
	json_array_foreach(sizes, i, s)
	{
		int at = -1;
		for (size_t k = 0; k < json_array_size(bench); k++)
			if (json_equal(json_object_get(s, "size"), json_array_get(bench, k)))
				at = (int)k;
		if (at < 0)
			return -1;
		double us = num(json_object_get(s, "candidate"), "median_us");
		if (us > 0 && (best < 0 || us < quickest))
			best = at, quickest = us;
	}
	return best;
}

int tcache_within_bounds(const json_t *entry, double stop_below, const json_t *stop_sizes)
{
	const json_t *s;
	size_t i;
	json_array_foreach(json_object_get(entry, "sizes"), i, s)
	{
		char sz[256];
		task_size_str(json_object_get(s, "size"), sz, sizeof sz);
		const json_t *b = stop_sizes ? json_object_get(stop_sizes, sz) : NULL;
		double bound = b ? json_number_value(b) : stop_below;
		if (bound > 0 && !(num(s, "speedup_vs_seed") >= bound))
			return 0;
	}
	return 1;
}

int tcache_agree(const json_t *entry, const json_t *conf, double tol, json_t **note)
{
	char then_dev[512], now_dev[512], sz[256] = "?";
	tcache_device(json_object_get(entry, "env"), then_dev, sizeof then_dev);
	tcache_device(json_object_get(conf, "env"), now_dev, sizeof now_dev);
	const json_t *now = json_array_get(json_object_get(conf, "sizes"), 0), *then = NULL, *s;
	size_t i;
	json_array_foreach(json_object_get(entry, "sizes"), i, s) if (now && json_equal(json_object_get(s, "size"),
											json_object_get(now, "size"))) then = s;
	const char *vs = then && num(then, "speedup_vs_seed") > 0 && num(now, "speedup_vs_seed") > 0 ? "speedup_vs_seed"
											    : "speedup_vs_baseline";
	double a = then ? num(then, vs) : 0, b = now ? num(now, vs) : 0;
	double d = a > 0 && b > 0 ? 100 * fabs(b / a - 1) : INFINITY;
	int same_dev = then_dev[0] && strcmp(then_dev, now_dev) == 0;
	int ok = same_dev && d < tol;
	if (now)
		task_size_str(json_object_get(now, "size"), sz, sizeof sz);
	*note = json_pack("{s:s, s:s, s:s, s:s, s:f}", "mode", "confirm", "size", sz, "compared", vs, "stored_at",
			  tcache_stored_at(entry),
			  "within_pct", tol);
	if (a > 0)
		json_object_set_new(*note, "then", json_real(a));
	if (b > 0)
		json_object_set_new(*note, "now", json_real(b));
	if (isfinite(d))
		json_object_set_new(*note, "diff_pct", json_real(d));
	/* which of the two moved, where they disagree */
	static const char *const roles[] = {"candidate", "seed", "baseline"};
	for (int r = 0; r < 3; r++) {
		double t = then ? num(json_object_get(then, roles[r]), "median_us") : 0;
		double w = now ? num(json_object_get(now, roles[r]), "median_us") : 0;
		if (t > 0 && w > 0)
			json_object_set_new(*note, roles[r], json_pack("{s:f, s:f}", "then_us", t, "now_us", w));
	}
	if (now)
		json_object_set(*note, "batches", json_object_get(json_object_get(now, "candidate"), "n"));
	json_object_set_new(*note, "agreed", json_boolean(ok));
	if (!ok)
		json_object_set_new(*note, "why",
				    !same_dev ? json_sprintf("another device (then %s, now %s)", then_dev[0] ? then_dev : "unknown",
							     now_dev[0] ? now_dev : "unknown")
				    : !isfinite(d) ? json_string("no speed-up at that size to compare")
						   : json_sprintf("%s %.4g then, %.4g now: %.2f %% apart, not within %g %%", vs, a, b, d, tol));
	return ok;
}

const char *tcache_stored_at(const json_t *entry)
{
	const char *at = json_string_value(json_object_get(entry, "stored_at"));
	return at ? at : "?";
}
