/*
 * evaluate: see evaluate.h.  The harness reports on stdout as
 * "KSCI-RESULT <nonce> <json>"; the nonce is fresh per run, so text a kernel
 * prints cannot forge a verdict.  A harness that dies without that line died
 * because of the kernel (signal, CUDA fault, exit) or the clock: the record
 * says which, with the harness's stderr as the log.
 */
#include "evaluate.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache.h"
#include "file.h"
#include "opt.h"
#include "proc.h"
#include "rec.h"
#include "rng.h"
#include "task.h"
#include "tool.h"

int eval_harness_path(const char *backend, char *buf, size_t n)
{
	const char *name = strcmp(backend, "cuda") == 0 ? "kharness-cuda" : "kharness";
	const char *dir = getenv("KSCI_HARNESS_DIR");
	char self[PATH_MAX];
	if (!dir || !*dir) {
		ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
		if (k <= 0)
			return -1;
		self[k] = '\0';
		char *s = strrchr(self, '/');
		if (s)
			*s = '\0';
		dir = self;
	}
	snprintf(buf, n, "%s/%s", dir, name);
	return access(buf, X_OK) == 0 ? 0 : -1;
}

static const char *expect_status(const char *mode) { return strcmp(mode, "verify") == 0 ? ST_COMPILED : ST_VERIFIED; }

/* Whether this stage should act on a record in status st. */
static int wants(const struct eval_opts *o, const char *st)
{
	if (!st)
		return 0;
	if (strcmp(st, expect_status(o->mode)) == 0)
		return 1;
	if (!o->force)
		return 0;
	static const char *const after_compile[] = {ST_VERIFIED, ST_WRONG, ST_CRASHED, ST_TIMEOUT, ST_UNSUPPORTED, ST_TIMED, NULL};
	static const char *const after_verify[] = {ST_TIMED, ST_SLOW, NULL};
	/* A forced re-time takes verified/timed records; a candidate that failed
	 * verification is not timed even with --force. */
	const char *const *l = strcmp(o->mode, "verify") == 0 ? after_compile : after_verify;
	for (; *l; l++)
		if (strcmp(st, *l) == 0)
			return 1;
	return 0;
}

static char cand_compiler[256]; /* the candidate's compiler, for time.env */

static int compile_role(const struct task *t, const char *backend, const char *role, const char *src,
			const struct eval_opts *o, char *so, char *e)
{
	struct compile_out co;
	if (compile_source(t, backend, role, src, &o->copt, &co, e) < 0)
		return -1;
	int ok = co.ok;
	if (ok)
		snprintf(so, PATH_MAX, "%s", co.so);
	if (strcmp(role, "candidate") == 0) {
		const char *c = json_string_value(json_object_get(co.stage, "compiler"));
		snprintf(cand_compiler, sizeof cand_compiler, "%s", c ? c : "");
	}
	else
		errf(e, "%s of task %s does not compile (%s)", role, t->name,
		     json_string_value(json_object_get(co.stage, "status")));
	json_decref(co.stage);
	return ok ? 0 : -1;
}

static const char *top_status(const char *mode, const char *st)
{
	if (strcmp(st, "ok") == 0)
		return strcmp(mode, "verify") == 0 ? ST_VERIFIED : ST_TIMED;
	/* The harness's failure words are the record's statuses (docs/harness.md). */
	static const char *const same[] = {ST_WRONG, ST_TIMEOUT, ST_UNSUPPORTED, ST_SLOW, NULL};
	for (int i = 0; same[i]; i++)
		if (strcmp(st, same[i]) == 0)
			return same[i];
	return ST_CRASHED;
}

/* Find our result line; NULL if the harness printed none. */
static json_t *find_result(const char *out, const char *nonce)
{
	char tag[64];
	snprintf(tag, sizeof tag, "KSCI-RESULT %s ", nonce);
	const char *p = out, *hit = NULL;
	while ((p = strstr(p, tag))) {
		if (p == out || p[-1] == '\n')
			hit = p;
		p++;
	}
	if (!hit)
		return NULL;
	hit += strlen(tag);
	size_t len = strcspn(hit, "\n");
	json_t *r = json_loadb(hit, len, 0, NULL);
	if (!json_is_object(r)) {
		json_decref(r);
		return NULL;
	}
	return r;
}

int eval_record(json_t *rec, const struct eval_opts *o, const char **msg)
{
	static char m[ERRBUF + 64];
	char e[ERRBUF] = "";
	const char *stage = strcmp(o->mode, "verify") == 0 ? "verify" : "time";
	*msg = NULL;
	if (!wants(o, rec_str(rec, "status")))
		return 0;
	static const char *const need[] = {"task", "backend", "source", NULL};
	const char *miss = rec_missing_str(rec, need);
	if (miss) {
		snprintf(m, sizeof m, "missing field \"%s\"", miss);
		rec_invalid(rec, stage, 0, m);
		*msg = m;
		return 1;
	}
	const char *backend = rec_str(rec, "backend");
	if (!task_backend_ok(backend)) {
		snprintf(m, sizeof m, "unknown backend \"%s\" (c, cuda or hip)", backend);
		rec_invalid(rec, stage, 0, m);
		*msg = m;
		return 1;
	}
	const struct task *t = task_get(NULL, rec_str(rec, "task"), e);
	if (!t) {
		snprintf(m, sizeof m, "%s", e);
		rec_invalid(rec, stage, 0, m);
		*msg = m;
		return 1;
	}
	double t0 = proc_now();
	char harness[PATH_MAX];
	if (strcmp(backend, "hip") == 0) {
		rec_fail(rec, stage, ST_UNSUPPORTED, ST_UNSUPPORTED, "unsupported: no HIP device (ksci runs hip candidates only where an AMD GPU and ROCm runtime are present)");
		return 0;
	}
	if (eval_harness_path(backend, harness, sizeof harness) < 0) {
		snprintf(m, sizeof m, "unsupported: no harness for backend %s (%s not built)", backend, harness);
		rec_fail(rec, stage, ST_UNSUPPORTED, ST_UNSUPPORTED, m);
		return 0;
	}
	char cand[PATH_MAX], ref[PATH_MAX], base[PATH_MAX], seedso[PATH_MAX], refdev[PATH_MAX];
	if (compile_role(t, backend, "candidate", rec_str(rec, "source"), o, cand, e) < 0 ||
	    compile_role(t, backend, "reference", NULL, o, ref, e) < 0) {
		rec_fail(rec, stage, "error", ST_CRASHED, e);
		snprintf(m, sizeof m, "%s", e);
		*msg = m;
		return 1;
	}
	/* A device reference for benchmark sizes, where the task has one. */
	char rrole[64];
	snprintf(rrole, sizeof rrole, "reference_%s", backend);
	int have_refdev = 0;
	if (strcmp(backend, "c") != 0 && json_object_get(t->json, rrole)) {
		if (compile_role(t, backend, rrole, NULL, o, refdev, e) < 0) {
			rec_fail(rec, stage, "error", ST_CRASHED, e);
			snprintf(m, sizeof m, "%s", e);
			*msg = m;
			return 1;
		}
		have_refdev = 1;
	}
	int timing = strcmp(o->mode, "time") == 0;
	int have_base = 0, have_seed = 0;
	if (timing) {
		if (compile_role(t, backend, "baseline", NULL, o, base, e) == 0)
			have_base = 1;
		else
			fprintf(stderr, "%s: task %s: %s; timing without a baseline\n", "ktime", t->name, e);
		if (compile_role(t, backend, "seed", NULL, o, seedso, e) == 0)
			have_seed = 1;
	}
	char nonce[33];
	snprintf(nonce, sizeof nonce, "%016" PRIx64 "%016" PRIx64, rng_os_seed(), rng_os_seed());
	json_t *seeds = json_array();
	int nseeds = timing ? 2 * (int)json_array_size(task_bench(t, backend)) : (o->nseeds > 0 ? o->nseeds : 3);
	for (int i = 0; i < nseeds; i++) {
		uint64_t s = o->seed ? o->seed + (uint64_t)i : rng_os_seed();
		json_array_append_new(seeds, json_integer((json_int_t)(s & ((1ULL << 53) - 1))));
	}
	json_t *job = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:O}", "mode", o->mode, "task", t->name,
				"tasks_root", task_root(), "backend", backend, "candidate", cand, "reference", ref,
				"nonce", nonce, "seeds", seeds);
	if (have_base)
		json_object_set_new(job, "baseline", json_string(base));
	if (have_seed)
		json_object_set_new(job, "seed", json_string(seedso));
	if (have_refdev)
		json_object_set_new(job, "reference_dev", json_string(refdev));
	if (cand_compiler[0])
		json_object_set_new(job, "compiler", json_string(cand_compiler));
	if (o->sizes)
		json_object_set_new(job, "sizes", json_string(o->sizes));
	if (o->budget_s > 0)
		json_object_set_new(job, "budget_s", json_real(o->budget_s));
	if (o->processes > 0)
		json_object_set_new(job, "processes", json_integer(o->processes));
	if (o->batch_s > 0)
		json_object_set_new(job, "batch_s", json_real(o->batch_s));
	if (o->stop_below > 0)
		json_object_set_new(job, "stop_below", json_real(o->stop_below));
	if (o->target_rel_sem > 0)
		json_object_set_new(job, "target_rel_sem", json_real(o->target_rel_sem));
	if (o->min_runs > 0)
		json_object_set_new(job, "min_runs", json_integer(o->min_runs));
	if (o->max_runs > 0)
		json_object_set_new(job, "max_runs", json_integer(o->max_runs));
	/* The judge stops a hung child a little before the tool's own deadline
	 * kills the whole jail, so the record says which role hung and where. */
	if (o->timeout_s > 0)
		json_object_set_new(job, "timeout_s", json_real(o->timeout_s > 2 ? o->timeout_s * 0.95 - 0.5 : o->timeout_s * 0.8));
	char *jtext = json_dumps(job, JSON_COMPACT);
	json_decref(job);
	/* For profiling a run outside the sandbox (bench/ncu-agree.sh): the job
	 * of the last record, to feed to the harness by hand. */
	const char *dump = getenv("KSCI_JOB_DUMP");
	if (dump && *dump) {
		char de[ERRBUF];
		if (file_write_atomic(dump, jtext, strlen(jtext), de) < 0)
			fprintf(stderr, "%s: KSCI_JOB_DUMP: %s\n", stage, de);
	}
	char *prog[] = {harness, NULL};
	int gpu = strcmp(backend, "c") != 0;
	/* What the harness may see: itself, the kernels' objects and the task,
	 * read-only; on a GPU also the device-facts cache, read-write, so the
	 * measured peaks survive the run (a kernel could rewrite them: they
	 * only feed "% of peak", never a speedup or a verdict). */
	char devcache[PATH_MAX] = "", cacheroot[PATH_MAX + 16] = "", de[ERRBUF];
	if (gpu && cache_dir("device", devcache, sizeof devcache, de) == 0) {
		snprintf(cacheroot, sizeof cacheroot, "KSCI_CACHE=%.*s", (int)(strrchr(devcache, '/') - devcache),
			 devcache);
	}
	const char *cudadev = getenv("KSCI_CUDA_DEVICE"), *visible = getenv("CUDA_VISIBLE_DEVICES");
	char env_dev[256] = "", env_vis[256] = "";
	if (cudadev)
		snprintf(env_dev, sizeof env_dev, "KSCI_CUDA_DEVICE=%s", cudadev);
	if (visible)
		snprintf(env_vis, sizeof env_vis, "CUDA_VISIBLE_DEVICES=%s", visible);
	const char *env[] = {cacheroot, env_dev, env_vis, NULL}; /* "" (unset) is skipped */
	struct sbx_bind binds[] = {{harness, 0},
				   {cand, 0},
				   {ref, 0},
				   {have_base ? base : NULL, 0},
				   {have_seed ? seedso : NULL, 0},
				   {have_refdev ? refdev : NULL, 0},
				   {task_root(), 0},
				   {devcache[0] ? devcache : NULL, 1}};
	char **argv = sbx_argv(&o->sbx, prog, binds, (int)(sizeof binds / sizeof *binds), gpu, env, NULL);
	struct proc_limits lim = {.wall_s = o->timeout_s, .mem_mb = strcmp(backend, "c") == 0 ? o->mem_mb : 0,
				  .capture = 1 << 20, .no_network = 1};
	/* No file-size limit on the judge: its arena is a memfd, which the limit
	 * counts; each child it starts gets its own (lib/judge/kid.h). */
	struct proc_result r;
	int rc = argv ? proc_run(argv, "/tmp", jtext, strlen(jtext), &lim, &r, e) : errf(e, "out of memory");
	sbx_argv_free(argv);
	free(jtext);
	if (rc < 0) {
		json_decref(seeds);
		rec_fail(rec, stage, "error", ST_CRASHED, e);
		snprintf(m, sizeof m, "%s", e);
		*msg = m;
		return 1;
	}
	sbx_result(&o->sbx, &r);
	json_t *res = r.timed_out ? NULL : find_result(r.out, nonce);
	if (!res) {
		char d[128];
		proc_describe(&r, d, sizeof d);
		const char *st = r.timed_out ? ST_TIMEOUT : ST_CRASHED;
		/* The harness's last words say where it was. */
		const char *tail = r.err_len ? r.err + r.err_len : "";
		while (tail > r.err && tail[-1] == '\n')
			tail--;
		const char *ls = tail;
		while (ls > r.err && ls[-1] != '\n')
			ls--;
		res = json_pack("{s:b, s:s}", "ok", 0, "status", st);
		json_object_set_new(res, "message", json_sprintf("candidate %s%s%.*s", d, ls < tail ? "; last: " : "",
								   (int)(tail - ls), ls));
	}
	json_object_set_new(res, "seconds", json_real(proc_now() - t0));
	json_object_set_new(res, "seeds", seeds);
	json_object_set_new(res, "sandbox", json_string(sbx_name(&o->sbx)));
	if (r.err_len)
		rec_set_log(res, "log", r.err, r.err_len);
	const char *st = json_string_value(json_object_get(res, "status"));
	rec_set_status(rec, top_status(o->mode, st ? st : ST_CRASHED));
	json_object_set_new(rec, stage, res);
	proc_result_free(&r);
	return 0;
}

int eval_tool_fn(struct tool *t, json_t *rec, void *ctx)
{
	const char *msg;
	int bad = eval_record(rec, ctx, &msg);
	if (msg)
		tool_warn(t, "%s", msg);
	tool_emit(t, rec);
	return bad;
}

int eval_init(struct eval_opts *o, char *e)
{
	if (sbx_init(&o->sbx, o->unsafe_no_sandbox ? SBX_NONE : SBX_BWRAP, e) < 0)
		return -1;
	o->copt.sbx = &o->sbx; /* the kernels it compiles (through the cache) too */
	return 0;
}

int eval_option(struct eval_opts *o, int ch, const char *arg, char *e)
{
	switch (ch) {
	case 'f': o->force = 1; return 1;
	case 't': return opt_double("--timeout", arg, 0.1, 86400, &o->timeout_s, e) < 0 ? -1 : 1;
	case 'm': return opt_long("--mem", arg, 0, 1L << 30, &o->mem_mb, e) < 0 ? -1 : 1;
	case 's': return opt_u64("--seed", arg, &o->seed, e) < 0 ? -1 : 1;
	case 'T': setenv("KSCI_TASKS", arg, 1); return 1;
	case 'U': o->unsafe_no_sandbox = 1; return 1;
	default: return 0;
	}
}
