/* t_timecache: the time cache's rules (lib/timecache.c) — what is kept, which
 * size is confirmed, the --stop-slower bounds, agreement, and entries that
 * no longer match their seal. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t.h"
#include "timecache.h"

static char dir[] = "/tmp/t_timecache.XXXXXX";

/* A time result of two sizes (rows=4 and rows=8), as the judge writes it. */
static json_t *result(double cand4, double seed4, double cand8, double seed8, const char *uuid)
{
	return json_pack("{s:b, s:s, s:[{s:{s:i}, s:{s:f}, s:{s:f}, s:f}, {s:{s:i}, s:{s:f}, s:{s:f}, s:f}], "
			 "s:{s:s, s:s}, s:f}",
			 "ok", 1, "status", "ok", "sizes", "size", "rows", 4, "candidate", "median_us", cand4, "seed",
			 "median_us", seed4, "speedup_vs_seed", seed4 / cand4, "size", "rows", 8, "candidate",
			 "median_us", cand8, "seed", "median_us", seed8, "speedup_vs_seed", seed8 / cand8, "env",
			 "gpu_uuid", uuid, "driver", "580.1", "speedup_vs_seed", 1.0);
}

/* A confirmation: one size. */
static json_t *confirmation(int rows, double cand, double seed, const char *uuid)
{
	return json_pack("{s:b, s:s, s:[{s:{s:i}, s:{s:f, s:i}, s:{s:f}, s:f}], s:{s:s, s:s}}", "ok", 1, "status",
			 "ok", "sizes", "size", "rows", rows, "candidate", "median_us", cand, "n", 4, "seed",
			 "median_us", seed, "speedup_vs_seed", seed / cand, "env", "gpu_uuid", uuid, "driver", "580.1");
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	setenv("KSCI_CACHE", dir, 1);
	char e[ERRBUF], dev[512];
	json_t *r = result(100, 100, 50, 100, "GPU-a");

	T_OK(tcache_keepable(r), "keepable: an ok result with sizes");
	json_t *x = json_deep_copy(r);
	json_object_set_new(x, "implausible", json_object());
	T_OK(!tcache_keepable(x), "keepable: not an implausible one");
	json_object_del(x, "implausible");
	json_object_set_new(x, "slow", json_object());
	T_OK(!tcache_keepable(x), "keepable: not a slow one");
	json_object_del(x, "slow");
	json_object_set_new(x, "status", json_string("wrong"));
	T_OK(!tcache_keepable(x), "keepable: not a failed one");
	json_decref(x);

	tcache_device(json_object_get(r, "env"), dev, sizeof dev);
	T_OK(strcmp(dev, "cuda GPU-a driver 580.1") == 0, "device: a GPU by its UUID and driver (%s)", dev);
	json_t *cpu = json_pack("{s:s, s:i, s:s}", "cpu", "Xeon", "cpus", 2, "kernel", "6.1");
	tcache_device(cpu, dev, sizeof dev);
	T_OK(strncmp(dev, "cpu Xeon x2 kernel 6.1 on ", 26) == 0, "device: the host by CPU, count, kernel, host (%s)", dev);
	json_decref(cpu);
	tcache_device(NULL, dev, sizeof dev);
	T_OK(dev[0] == '\0', "device: unknown without an env");

	json_t *bench = json_pack("[{s:i}, {s:i}]", "rows", 8, "rows", 4);
	T_OK(tcache_confirm_size(r, bench) == 0, "confirm size: where the candidate was quickest (rows=8, index 0 of bench)");
	json_t *other = json_pack("[{s:i}, {s:i}]", "rows", 8, "rows", 16);
	T_OK(tcache_confirm_size(r, other) == -1, "confirm size: none when the entry's sizes are not the task's");
	json_decref(other);

	T_OK(tcache_within_bounds(r, 0, NULL), "bounds: none");
	T_OK(tcache_within_bounds(r, 0.9, NULL), "bounds: every size at or above 0.9x");
	T_OK(!tcache_within_bounds(r, 1.5, NULL), "bounds: rows=4 (1x) below 1.5x");
	json_t *sb = json_pack("{s:f}", "rows=4", 0.5);
	T_OK(tcache_within_bounds(r, 1.5, sb), "bounds: a size's own bound before the overall one");
	json_decref(sb);

	json_t *note = NULL, *c = confirmation(8, 50.5, 100, "GPU-a");
	T_OK(tcache_agree(r, c, 2, &note) == 1 && json_is_true(json_object_get(note, "agreed")),
	     "agree: 1 %% apart, within 2 %%");
	T_OK(fabs(json_real_value(json_object_get(note, "diff_pct")) - 100 * (1 - 50 / 50.5)) < 1e-9,
	     "agree: the difference recorded");
	T_OK(json_real_value(json_object_get(json_object_get(note, "candidate"), "then_us")) == 50 &&
		     json_real_value(json_object_get(json_object_get(note, "candidate"), "now_us")) == 50.5,
	     "agree: the candidate's medians then and now");
	json_decref(note);
	T_OK(tcache_agree(r, c, 0, &note) == 0 && strstr(json_string_value(json_object_get(note, "why")), "not within 0 %"),
	     "agree: never within 0 %%");
	json_decref(note);
	json_decref(c);
	c = confirmation(8, 60, 100, "GPU-a");
	T_OK(tcache_agree(r, c, 2, &note) == 0, "agree: 17 %% apart is not within 2 %%");
	json_decref(note);
	json_decref(c);
	c = confirmation(8, 50, 100, "GPU-b");
	T_OK(tcache_agree(r, c, 1e9, &note) == 0 && strstr(json_string_value(json_object_get(note, "why")), "another device"),
	     "agree: never on another device");
	json_decref(note);
	json_decref(c);

	const char *key = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	T_OK(tcache_load(key, e) == NULL && e[0] == '\0', "load: a miss is no error");
	json_object_set_new(r, "log", json_string("per run"));
	T_OK(tcache_store(key, r, e) == 0, "store");
	json_t *back = tcache_load(key, e);
	T_OK(back && json_equal(json_object_get(back, "sizes"), json_object_get(r, "sizes")) &&
		     !json_object_get(back, "log") && json_is_string(json_object_get(back, "stored_at")),
	     "load: the figures back, the run's own fields left out, stored_at added");
	json_decref(back);
	T_OK(tcache_load("ffff456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", e) == NULL && !e[0],
	     "load: another key misses");
	char p[512], cmd[1200];
	snprintf(p, sizeof p, "%s/time/%s.json", dir, key);
	snprintf(cmd, sizeof cmd, "sed -i 's/\"speedup_vs_seed\":1.0/\"speedup_vs_seed\":9.0/' %s", p);
	T_OK(system(cmd) == 0, "an entry edited by hand");
	T_OK(tcache_load(key, e) == NULL && strstr(e, "does not match its seal"), "load: refused, said (%s)", e);

	json_decref(bench);
	json_decref(r);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		return 1;
	return T_DONE();
}
