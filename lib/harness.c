/*
 * harness: the checks follow the holes known in public harnesses —
 *  - inputs come from seeds the job supplies (drawn from the OS by the tool),
 *    fresh for every check;
 *  - every output is poisoned (NaN for floats, 0xA5 bytes for integers)
 *    before every candidate call, so an element the kernel never writes shows
 *    up, even where the allocator hands back memory holding an old result;
 *  - `in` arguments are read back after the call and must be bit-identical;
 *  - NaN/inf must match the reference; a constant output where the reference
 *    is not constant fails whatever the tolerance;
 *  - in time mode the candidate is checked at each benchmark size before the
 *    timing loop and again afterwards with fresh inputs, so a kernel that is
 *    right only on the first call or caches by pointer fails.
 * Timing interleaves candidate, baseline and seed in rotating order so drift
 * cancels, and stops when the standard error of the mean is below the target
 * fraction of the mean for all of them, or the size's time budget is spent.
 * A device layer may flag a timed call whose clocks disagree (the CUDA one:
 * host time around full syncs well above the default-stream events, i.e.
 * work left on another stream); a candidate flagged on more than a tenth of
 * its timed calls is "wrong": it broke the calling convention, and its
 * timings cannot be trusted.
 *
 * Benchmark sizes are the task's "bench_<backend>" when present.  A task may
 * give a device reference ("reference_cuda"), used for benchmark sizes only,
 * where the host reference would take minutes; test sizes always use the
 * host reference (tests/gpu checks the device reference against it).
 */
#include "harness.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc.h"
#include "rec.h"
#include "rng.h"
#include "stats.h"
#include "expr.h"
#include "task.h"

/* Progress on stderr, with seconds since the harness started: the stage's
 * log then shows where the time went, and where a dead kernel was. */
static double t_start;

static void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void progress(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "kharness: [%.3f s] ", proc_now() - t_start);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

struct arrays {
	int n;
	int64_t *numel;
	size_t *bytes;
	void **init; /* host: initial contents (in/inout) */
	void **ref;  /* host: reference result (out/inout) */
	union {
		int64_t i;
		double f;
		char raw[8];
	} *scalar;
};

struct job {
	const struct dev_ops *d;
	const struct task *t;
	const json_t *j;
	ksci_call_fn ref, ref_dev;
	const json_t *bench; /* benchmark sizes for this back end */
	json_t *peak;	     /* measured peak rates, or NULL */
	double max_abs, max_rel;
	int checks;
};

static ksci_call_fn load_fn(const char *path, char *e)
{
	if (!path)
		return NULL;
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		errf(e, "cannot load %s: %s", path, dlerror());
		return NULL;
	}
	ksci_call_fn f;
	*(void **)&f = dlsym(h, "ksci_call");
	if (!f)
		errf(e, "%s has no ksci_call", path);
	return f;
}

static double jnum(const json_t *o, const char *k, double dflt)
{
	json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : dflt;
}

/*
 * Inputs are generated in chunks of FILL_CHUNK elements, chunk k from its own
 * stream seeded by (seed, k), so the values depend only on the seed — not on
 * how many threads filled them — and large benchmark inputs are generated on
 * all cores instead of one.
 */
#define FILL_CHUNK (1 << 16)

enum dist { DIST_UNIFORM, DIST_NORMAL, DIST_INT, DIST_CONST };

/* Run fn(ctx, k) for k in [0, nchunks) on all cores; each k exactly once. */
struct par {
	void (*fn)(void *ctx, int64_t k);
	void *ctx;
	int64_t n;
	atomic_llong next;
};

static void *par_worker(void *arg)
{
	struct par *p = arg;
	int64_t k;
	while ((k = atomic_fetch_add(&p->next, 1)) < p->n)
		p->fn(p->ctx, k);
	return NULL;
}

static void par_chunks(int64_t nchunks, void (*fn)(void *ctx, int64_t k), void *ctx)
{
	struct par p = {fn, ctx, nchunks, 0};
	atomic_init(&p.next, 0);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int nt = (int)(nchunks < ncpu ? nchunks : ncpu);
	if (nt > 32)
		nt = 32;
	pthread_t th[32];
	int started = 0;
	for (int i = 1; i < nt; i++, started++)
		if (pthread_create(&th[started], NULL, par_worker, &p) != 0)
			break;
	par_worker(&p); /* this thread works too, and alone when threads fail */
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
}

struct fill_job {
	enum dtype dt;
	void *p;
	int64_t n;
	uint64_t seed;
	enum dist d;
	double lo, hi, mean, sd, c;
};

static void fill_chunk(void *ctx, int64_t k)
{
	struct fill_job *j = ctx;
	struct rng r;
	rng_seed(&r, j->seed ^ (0xD1B54A32D192ED03ULL * (uint64_t)(k + 1)));
	int64_t end = (k + 1) * FILL_CHUNK < j->n ? (k + 1) * FILL_CHUNK : j->n;
	for (int64_t i = k * FILL_CHUNK; i < end; i++) {
		double v;
		switch (j->d) {
		case DIST_NORMAL: v = j->mean + j->sd * rng_normal(&r); break;
		case DIST_INT: v = j->lo + (double)rng_below(&r, (uint64_t)(j->hi - j->lo + 1)); break;
		case DIST_CONST: v = j->c; break;
		default: v = j->lo + (j->hi - j->lo) * rng_unit(&r); break;
		}
		dtype_set(j->dt, j->p, (size_t)i, v);
	}
}

static void fill(const struct task_arg *a, void *p, int64_t n, uint64_t seed)
{
	const json_t *in = a->init;
	const char *dist = json_string_value(json_object_get(in, "dist"));
	int isf = dtype_is_float(a->dt);
	struct fill_job j = {.dt = a->dt, .p = p, .n = n, .seed = seed};
	j.d = !dist ? (isf ? DIST_UNIFORM : DIST_INT)
	      : strcmp(dist, "normal") == 0 ? DIST_NORMAL
	      : strcmp(dist, "int") == 0 ? DIST_INT
	      : strcmp(dist, "const") == 0 ? DIST_CONST : DIST_UNIFORM;
	j.lo = jnum(in, "lo", isf ? -1 : 0), j.hi = jnum(in, "hi", isf ? 1 : 100);
	j.mean = jnum(in, "mean", 0), j.sd = jnum(in, "std", 1), j.c = jnum(in, "value", 0);
	par_chunks((n + FILL_CHUNK - 1) / FILL_CHUNK, fill_chunk, &j);
}

static void poison(enum dtype dt, void *p, size_t bytes)
{
	memset(p, dtype_is_float(dt) ? 0xFF : 0xA5, bytes);
}

static void arrays_free(struct arrays *A)
{
	for (int i = 0; i < A->n; i++) {
		free(A->init ? A->init[i] : NULL);
		free(A->ref ? A->ref[i] : NULL);
	}
	free(A->numel);
	free(A->bytes);
	free(A->init);
	free(A->ref);
	free(A->scalar);
	memset(A, 0, sizeof *A);
}

static void unstage(struct job *J, void **dev);

/* The reference on the device: inputs up, outputs (zeroed, or inout's
 * initial contents) up, call, outputs back into A->ref. */
static int ref_on_device(struct job *J, struct arrays *A, char *e)
{
	const struct task *t = J->t;
	int n = t->nargs, rc = -1;
	void **dev = calloc((size_t)n, sizeof *dev), **args = calloc((size_t)n, sizeof *args);
	if (!dev || !args) {
		errf(e, "out of memory");
		goto out;
	}
	for (int i = 0; i < n; i++) {
		const struct task_arg *a = &t->args[i];
		if (a->kind == ARG_SCALAR) {
			args[i] = A->scalar[i].raw;
			continue;
		}
		if (!(dev[i] = J->d->alloc(A->bytes[i] ? A->bytes[i] : 1, e)))
			goto out;
		args[i] = dev[i];
		if (A->bytes[i] && J->d->to_dev(dev[i], a->kind == ARG_IN ? A->init[i] : A->ref[i], A->bytes[i], e) < 0)
			goto out;
	}
	if (J->d->call(J->ref_dev, args, NULL, e) < 0) {
		char m[ERRBUF];
		snprintf(m, sizeof m, "%s", e);
		errf(e, "the task's device reference failed: %s", m);
		goto out;
	}
	for (int i = 0; i < n; i++)
		if (t->args[i].kind != ARG_SCALAR && t->args[i].kind != ARG_IN && A->bytes[i] &&
		    J->d->to_host(A->ref[i], dev[i], A->bytes[i], e) < 0)
			goto out;
	rc = 0;
out:
	if (dev)
		unstage(J, dev);
	free(dev);
	free(args);
	return rc;
}

/* Inputs from seed, and (want_ref) the reference's outputs: from the device
 * reference when `big` and the task has one, else from the host reference. */
static int prepare(struct job *J, const json_t *size, uint64_t seed, int want_ref, int big, struct arrays *A,
		   char *e)
{
	const struct task *t = J->t;
	memset(A, 0, sizeof *A);
	A->n = t->nargs;
	A->numel = calloc((size_t)t->nargs, sizeof *A->numel);
	A->bytes = calloc((size_t)t->nargs, sizeof *A->bytes);
	A->init = calloc((size_t)t->nargs, sizeof *A->init);
	A->ref = calloc((size_t)t->nargs, sizeof *A->ref);
	A->scalar = calloc((size_t)t->nargs, sizeof *A->scalar);
	void **args = calloc((size_t)t->nargs, sizeof *args);
	if (!A->numel || !A->bytes || !A->init || !A->ref || !A->scalar || !args)
		goto oom;
	for (int i = 0; i < t->nargs; i++) {
		const struct task_arg *a = &t->args[i];
		if (a->kind == ARG_SCALAR) {
			dtype_set(a->dt, A->scalar[i].raw, 0, json_number_value(json_object_get(size, a->name)));
			args[i] = A->scalar[i].raw;
			continue;
		}
		if (task_numel(t, i, size, &A->numel[i], e) < 0)
			goto fail;
		A->bytes[i] = (size_t)A->numel[i] * dtype_size(a->dt);
		size_t alloc = A->bytes[i] ? A->bytes[i] : 1;
		if (a->kind != ARG_OUT) {
			if (!(A->init[i] = malloc(alloc)))
				goto oom;
			fill(a, A->init[i], A->numel[i], seed ^ (0x9E3779B97F4A7C15ULL * (uint64_t)(i + 1)));
		}
		if (a->kind != ARG_IN) {
			if (!(A->ref[i] = calloc(1, alloc)))
				goto oom;
			if (a->kind == ARG_INOUT)
				memcpy(A->ref[i], A->init[i], A->bytes[i]);
		}
		args[i] = a->kind == ARG_IN ? A->init[i] : A->ref[i];
	}
	if (want_ref && big && J->ref_dev) {
		if (ref_on_device(J, A, e) < 0)
			goto fail;
	} else if (want_ref)
		J->ref(args);
	free(args);
	return 0;
oom:
	errf(e, "out of memory preparing inputs");
fail:
	free(args);
	arrays_free(A);
	return -1;
}

/* Device copies of inputs and poisoned outputs for one participant. */
static int stage_args(struct job *J, const struct arrays *A, void **dev, void **args, char *e)
{
	const struct task *t = J->t;
	for (int i = 0; i < t->nargs; i++) {
		const struct task_arg *a = &t->args[i];
		dev[i] = NULL;
		if (a->kind == ARG_SCALAR) {
			args[i] = A->scalar[i].raw;
			continue;
		}
		if (!(dev[i] = J->d->alloc(A->bytes[i] ? A->bytes[i] : 1, e)))
			return -1;
		args[i] = dev[i];
		if (A->bytes[i] == 0)
			continue;
		if (a->kind == ARG_OUT) {
			void *p = malloc(A->bytes[i]);
			if (!p)
				return errf(e, "out of memory");
			poison(a->dt, p, A->bytes[i]);
			int rc = J->d->to_dev(dev[i], p, A->bytes[i], e);
			free(p);
			if (rc < 0)
				return -1;
		} else if (J->d->to_dev(dev[i], A->init[i], A->bytes[i], e) < 0)
			return -1;
	}
	return 0;
}

static void unstage(struct job *J, void **dev)
{
	for (int i = 0; i < J->t->nargs; i++)
		if (dev[i])
			J->d->release(dev[i]);
}

/* Compare one output array; fills *mm on the first mismatch. 0 ok, 1 wrong. */
/* One chunk's share of a comparison; chunks are combined in index order. */
struct cmp_part {
	int64_t bad, first;
	const char *why;
	int cand_const, ref_const;
	double max_abs, max_rel;
};

struct cmp_job {
	enum dtype dt;
	const void *got, *want;
	int64_t n;
	double atol, rtol, g0, w0;
	struct cmp_part *parts;
};

#define CMP_CHUNK (1 << 18)

static void cmp_chunk(void *ctx, int64_t k)
{
	struct cmp_job *j = ctx;
	struct cmp_part *p = &j->parts[k];
	*p = (struct cmp_part){0, -1, NULL, 1, 1, 0, 0};
	int64_t end = (k + 1) * CMP_CHUNK < j->n ? (k + 1) * CMP_CHUNK : j->n;
	for (int64_t i = k * CMP_CHUNK; i < end; i++) {
		double g = dtype_get(j->dt, j->got, (size_t)i), w = dtype_get(j->dt, j->want, (size_t)i);
		if (p->cand_const && !(g == j->g0 || (isnan(g) && isnan(j->g0))))
			p->cand_const = 0;
		if (p->ref_const && !(w == j->w0 || (isnan(w) && isnan(j->w0))))
			p->ref_const = 0;
		int ok;
		const char *r = NULL;
		if (isnan(w))
			ok = isnan(g), r = "expected NaN";
		else if (isinf(w))
			ok = g == w, r = "expected inf";
		else if (!isfinite(g))
			ok = 0, r = isnan(g) ? "NaN (element never written, or computed NaN)" : "inf where the reference is finite";
		else {
			double d = fabs(g - w);
			ok = d <= j->atol + j->rtol * fabs(w);
			if (d > p->max_abs)
				p->max_abs = d;
			if (w != 0 && d / fabs(w) > p->max_rel)
				p->max_rel = d / fabs(w);
			r = "outside tolerance";
		}
		if (!ok) {
			if (p->first < 0)
				p->first = i, p->why = r;
			p->bad++;
		}
	}
}

static int compare(struct job *J, int ai, const void *got, const void *want, int64_t n, const json_t *size,
		   uint64_t seed, json_t **mm)
{
	const struct task_arg *a = &J->t->args[ai];
	int64_t nchunks = (n + CMP_CHUNK - 1) / CMP_CHUNK;
	struct cmp_job cj = {a->dt, got, want, n, a->atol, a->rtol, n ? dtype_get(a->dt, got, 0) : 0,
			     n ? dtype_get(a->dt, want, 0) : 0, calloc((size_t)(nchunks ? nchunks : 1), sizeof(struct cmp_part))};
	if (!cj.parts)
		return -1;
	par_chunks(nchunks, cmp_chunk, &cj);
	int64_t bad = 0, first = -1;
	const char *why = NULL;
	int cand_const = 1, ref_const = 1;
	for (int64_t k = 0; k < nchunks; k++) {
		struct cmp_part *p = &cj.parts[k];
		if (first < 0 && p->first >= 0)
			first = p->first, why = p->why;
		bad += p->bad;
		cand_const &= p->cand_const;
		ref_const &= p->ref_const;
		if (p->max_abs > J->max_abs)
			J->max_abs = p->max_abs;
		if (p->max_rel > J->max_rel)
			J->max_rel = p->max_rel;
	}
	free(cj.parts);
	if (!bad && n > 1 && cand_const && !ref_const) {
		first = 0, bad = n, why = "output is constant where the reference is not";
	}
	if (!bad)
		return 0;
	/* The multi-dimensional index of the first mismatch. */
	json_t *idx = json_array();
	int64_t rest = first;
	size_t nd = json_array_size(a->shape);
	int64_t *dims = calloc(nd ? nd : 1, sizeof *dims);
	char e[ERRBUF];
	for (size_t k = 0; dims && k < nd; k++) {
		double v = 0;
		expr_eval_json(json_array_get(a->shape, k), size, &v, e);
		dims[k] = (int64_t)v;
	}
	for (size_t k = nd; dims && k-- > 0;) {
		int64_t dk = dims[k] > 0 ? dims[k] : 1;
		json_array_insert_new(idx, 0, json_integer(rest % dk));
		rest /= dk;
	}
	free(dims);
	double g = dtype_get(a->dt, got, (size_t)first), w = dtype_get(a->dt, want, (size_t)first);
	*mm = json_pack("{s:O, s:I, s:s, s:o, s:I, s:o, s:o, s:I, s:s}", "size", size, "seed", (json_int_t)seed,
			"arg", a->name, "index", idx, "flat", (json_int_t)first,
			"got", isfinite(g) ? json_real(g) : json_string(isnan(g) ? "nan" : g > 0 ? "inf" : "-inf"),
			"want", isfinite(w) ? json_real(w) : json_string(isnan(w) ? "nan" : w > 0 ? "inf" : "-inf"),
			"count", (json_int_t)bad, "reason", why);
	return 1;
}

/* One correctness check of fn at size with inputs from seed.
 * 0 ok, 1 wrong (*mm set), -1 device fault or setup failure (e). */
/* keep (may be NULL): on success the inputs are moved there (the caller
 * frees them with arrays_free), so timing reuses them instead of generating
 * the same arrays again. */
static int check(struct job *J, ksci_call_fn fn, const json_t *size, int big, uint64_t seed, json_t **mm,
		 struct arrays *keep, char *e)
{
	struct arrays A;
	if (prepare(J, size, seed, 1, big, &A, e) < 0)
		return -1;
	if (big)
		progress("inputs and reference ready");
	int n = J->t->nargs, rc = -1;
	void **dev = calloc((size_t)n, sizeof *dev), **args = calloc((size_t)n, sizeof *args);
	void *host = NULL;
	if (!dev || !args) {
		errf(e, "out of memory");
		goto out;
	}
	if (stage_args(J, &A, dev, args, e) < 0)
		goto out;
	if (big)
		progress("candidate's buffers staged");
	if (J->d->call(fn, args, NULL, e) < 0)
		goto out;
	if (big)
		progress("candidate ran");
	J->checks++;
	rc = 0;
	for (int i = 0; i < n && rc == 0; i++) {
		const struct task_arg *a = &J->t->args[i];
		if (a->kind == ARG_SCALAR || A.bytes[i] == 0)
			continue;
		free(host);
		if (!(host = malloc(A.bytes[i]))) {
			rc = errf(e, "out of memory");
			break;
		}
		if (J->d->to_host(host, dev[i], A.bytes[i], e) < 0) {
			rc = -1;
			break;
		}
		if (a->kind == ARG_IN) {
			if (memcmp(host, A.init[i], A.bytes[i]) != 0) {
				*mm = json_pack("{s:O, s:I, s:s, s:s}", "size", size, "seed", (json_int_t)seed, "arg",
						a->name, "reason", "input argument was modified");
				rc = 1;
			}
			continue;
		}
		rc = compare(J, i, host, A.ref[i], A.numel[i], size, seed, mm);
	}
	if (big)
		progress("compared");
out:
	free(host);
	if (dev)
		unstage(J, dev);
	free(dev);
	free(args);
	if (keep && rc == 0)
		*keep = A;
	else
		arrays_free(&A);
	return rc;
}

static uint64_t job_seed(const json_t *seeds, size_t k)
{
	json_t *s = json_array_get(seeds, k % (json_array_size(seeds) ? json_array_size(seeds) : 1));
	return json_is_integer(s) ? (uint64_t)json_integer_value(s) : 0x5eed + k;
}

static json_t *fault(const char *status, const char *msg)
{
	return json_pack("{s:b, s:s, s:s}", "ok", 0, "status", status, "message", msg);
}

static json_t *verify(struct job *J, ksci_call_fn cand, char *e)
{
	const json_t *seeds = json_object_get(J->j, "seeds");
	size_t ns = json_array_size(seeds) ? json_array_size(seeds) : 1;
	const char *which = json_string_value(json_object_get(J->j, "sizes"));
	const json_t *lists[2] = {J->t->tests, which && strcmp(which, "all") == 0 ? J->bench : NULL};
	for (int l = 0; l < 2; l++) {
		size_t i;
		json_t *size;
		json_array_foreach(lists[l], i, size)
		{
			for (size_t k = 0; k < ns; k++) {
				uint64_t seed = job_seed(seeds, k);
				char sz[256];
				task_size_str(size, sz, sizeof sz);
				progress("check %s seed=%" PRIu64, sz, seed);
				json_t *mm = NULL;
				int rc = check(J, cand, size, l == 1, seed, &mm, NULL, e);
				if (rc < 0) {
					char m[ERRBUF + 300];
					snprintf(m, sizeof m, "at %s seed=%" PRIu64 ": %s", sz, seed, e);
					return fault(ST_CRASHED, m);
				}
				if (rc == 1) {
					json_t *r = json_pack("{s:b, s:s, s:i, s:f, s:f, s:o}", "ok", 0, "status", ST_WRONG,
							      "checks", J->checks, "max_abs_err", J->max_abs,
							      "max_rel_err", J->max_rel, "mismatch", mm);
					json_object_set_new(r, "message", json_sprintf("wrong at %s (arg %s): %s", sz,
							      json_string_value(json_object_get(mm, "arg")),
							      json_string_value(json_object_get(mm, "reason"))));
					return r;
				}
			}
		}
	}
	return json_pack("{s:b, s:s, s:i, s:f, s:f, s:s}", "ok", 1, "status", "ok", "checks", J->checks,
			 "max_abs_err", J->max_abs, "max_rel_err", J->max_rel, "message", "matches the reference");
}

struct who {
	const char *name;
	ksci_call_fn fn;
	void **dev, **args;
	double *s;
	size_t n, flagged; /* flagged: timed calls the device layer distrusted */
};

static json_t *summary(const struct who *w, struct stats *st)
{
	stats_summarize(w->s, w->n, st);
	return json_pack("{s:f, s:f, s:f, s:f, s:I}", "median_us", st->median * 1e6, "mean_us", st->mean * 1e6,
			 "sem_us", st->sem * 1e6, "min_us", st->min * 1e6, "n", (json_int_t)st->n);
}

/* Time at one size on the inputs A (prepared by the check before timing). */
static json_t *time_size(struct job *J, struct who *W, int nw, const json_t *size, struct arrays *keep, char *e,
			 json_t **fail_res)
{
	const json_t *o = J->j;
	double budget = jnum(o, "budget_s", 2.0), target = jnum(o, "target_rel_sem", 0.001);
	size_t min_runs = (size_t)jnum(o, "min_runs", 10), max_runs = (size_t)jnum(o, "max_runs", 10000);
	int warmup = (int)jnum(o, "warmup", 3);
	struct arrays A = *keep;
	memset(keep, 0, sizeof *keep);
	char xmsg[ERRBUF] = "";
	json_t *res = NULL;
	int n = J->t->nargs, staged = 0;
	for (int w = 0; w < nw; w++) {
		W[w].dev = calloc((size_t)n, sizeof(void *));
		W[w].args = calloc((size_t)n, sizeof(void *));
		W[w].s = malloc(max_runs * sizeof(double));
		W[w].n = W[w].flagged = 0;
		if (!W[w].dev || !W[w].args || !W[w].s || stage_args(J, &A, W[w].dev, W[w].args, e) < 0) {
			if (!W[w].s)
				errf(e, "out of memory");
			staged = w + 1;
			goto out;
		}
		staged = w + 1;
	}
	for (int k = 0; k < warmup; k++)
		for (int w = 0; w < nw; w++)
			if (J->d->call(W[w].fn, W[w].args, NULL, e) < 0) {
				*fail_res = fault(ST_CRASHED, e);
				goto out;
			}
	progress("inputs staged, warmed up; timing");
	double t0 = proc_now();
	for (size_t round = 0;; round++) {
		for (int k = 0; k < nw; k++) {
			struct who *w = &W[(round + (size_t)k) % (size_t)nw];
			if (J->d->flush && J->d->flush(e) < 0)
				goto out;
			double s;
			int rc = J->d->call(w->fn, w->args, &s, e);
			if (rc < 0) {
				*fail_res = fault(ST_CRASHED, e);
				goto out;
			}
			if (rc == 1) {
				w->flagged++;
				if (w == &W[0] && !xmsg[0])
					snprintf(xmsg, sizeof xmsg, "%s", e);
			}
			w->s[w->n++] = s;
		}
		size_t have = W[0].n;
		if (have >= max_runs)
			break;
		if (have < min_runs)
			continue;
		int settled = 1;
		for (int k = 0; k < nw; k++) {
			struct stats st;
			stats_summarize(W[k].s, W[k].n, &st);
			if (!(st.sem <= target * st.mean))
				settled = 0;
		}
		if (settled || proc_now() - t0 > budget)
			break;
	}
	progress("timed: %zu calls each in %.3f s", W[0].n, proc_now() - t0);
	if (W[0].flagged * 10 > W[0].n) {
		*fail_res = json_pack("{s:b, s:s}", "ok", 0, "status", ST_WRONG);
		json_object_set_new(*fail_res, "message",
				    json_sprintf("timing cross-check failed on %zu of %zu calls: %s", W[0].flagged, W[0].n, xmsg));
		goto out;
	}
	res = json_pack("{s:O}", "size", size);
	struct stats st[3];
	for (int k = 0; k < nw; k++)
		json_object_set_new(res, W[k].name, summary(&W[k], &st[k]));
	if (nw > 1)
		json_object_set_new(res, "speedup_vs_baseline", json_real(st[1].median / st[0].median));
	if (nw > 2)
		json_object_set_new(res, "speedup_vs_seed", json_real(st[2].median / st[0].median));
	double fl = task_formula(J->t, "flops", size), by = task_formula(J->t, "bytes", size);
	if (isfinite(fl)) {
		json_object_set_new(res, "flops", json_real(fl));
		json_object_set_new(res, "gflops", json_real(fl / st[0].median / 1e9));
	}
	if (isfinite(by)) {
		json_object_set_new(res, "bytes", json_real(by));
		json_object_set_new(res, "gbps", json_real(by / st[0].median / 1e9));
	}
	/* The measured matrix peak is fp32 SGEMM: a task whose work is meant for
	 * tensor cores ("flops_unit": "tensor-f16", ...) gets no % of it. */
	const char *unit = json_string_value(json_object_get(J->t->json, "flops_unit"));
	int fp32 = !unit || strcmp(unit, "fp32") == 0;
	if (unit)
		json_object_set_new(res, "flops_unit", json_string(unit));
	double pf = fp32 ? jnum(J->peak, "sgemm_gflops", 0) : 0, pb = jnum(J->peak, "copy_gbps", 0);
	if (isfinite(fl) && pf > 0)
		json_object_set_new(res, "pct_peak_flops", json_real(100 * fl / st[0].median / 1e9 / pf));
	if (isfinite(by) && pb > 0)
		json_object_set_new(res, "pct_peak_bw", json_real(100 * by / st[0].median / 1e9 / pb));
	for (int k = 0; k < nw; k++)
		if (W[k].flagged)
			json_object_set_new(json_object_get(res, W[k].name), "xcheck_flagged", json_integer((json_int_t)W[k].flagged));
	json_object_set_new(res, "converged", json_boolean(W[0].n < max_runs && proc_now() - t0 <= budget));
out:
	for (int w = 0; w < staged; w++)
		unstage(J, W[w].dev);
	for (int w = 0; w < nw; w++) {
		free(W[w].dev);
		free(W[w].args);
		free(W[w].s);
		W[w].dev = W[w].args = NULL;
		W[w].s = NULL;
	}
	arrays_free(&A);
	return res;
}

static json_t *time_all(struct job *J, ksci_call_fn cand, char *e)
{
	struct who W[3] = {{.name = "candidate", .fn = cand}};
	int nw = 1;
	const json_t *j = J->j;
	if ((W[nw].fn = load_fn(json_string_value(json_object_get(j, "baseline")), e)))
		W[nw++].name = "baseline";
	else if (json_object_get(j, "baseline"))
		return NULL;
	if ((W[nw].fn = load_fn(json_string_value(json_object_get(j, "seed")), e)))
		W[nw++].name = "seed";
	else if (json_object_get(j, "seed"))
		return NULL;
	const json_t *seeds = json_object_get(j, "seeds");
	json_t *sizes = json_array();
	size_t i;
	json_t *size;
	double sb[64], ss[64];
	size_t nsb = 0, nss = 0, k = 0;
	if (J->d->peak)
		J->peak = J->d->peak();
	/* "only_size": k times benchmark size k alone (profiling one size under ncu). */
	const json_t *only = json_object_get(j, "only_size");
	json_array_foreach(J->bench, i, size)
	{
		if (json_is_integer(only) && (json_int_t)i != json_integer_value(only))
			continue;
		char sz[256];
		task_size_str(size, sz, sizeof sz);
		uint64_t s1 = job_seed(seeds, k++), s2 = job_seed(seeds, k++);
		json_t *mm = NULL;
		progress("check before timing %s", sz);
		struct arrays A;
		int rc = check(J, cand, size, 1, s1, &mm, &A, e);
		if (rc == 0) {
			progress("time %s", sz);
			json_t *fail_res = NULL;
			json_t *r = time_size(J, W, nw, size, &A, e, &fail_res);
			if (!r) {
				json_decref(sizes);
				json_decref(J->peak);
				return fail_res ? fail_res : fault(ST_CRASHED, e);
			}
			json_array_append_new(sizes, r);
			double v = json_number_value(json_object_get(r, "speedup_vs_baseline"));
			if (v > 0 && nsb < 64)
				sb[nsb++] = v;
			v = json_number_value(json_object_get(r, "speedup_vs_seed"));
			if (v > 0 && nss < 64)
				ss[nss++] = v;
			/* Fresh inputs after the timing loop: a result cached by
			 * pointer or right only on the first call fails here. */
			progress("check after timing %s", sz);
			rc = check(J, cand, size, 1, s2, &mm, NULL, e);
		}
		if (rc != 0) {
			json_decref(sizes);
			json_decref(J->peak);
			if (rc < 0)
				return fault(ST_CRASHED, e);
			json_t *r = json_pack("{s:b, s:s, s:o}", "ok", 0, "status", ST_WRONG, "mismatch", mm);
			json_object_set_new(r, "message", json_sprintf("wrong at benchmark size %s (arg %s): %s", sz,
					    json_string_value(json_object_get(mm, "arg")),
					    json_string_value(json_object_get(mm, "reason"))));
			return r;
		}
	}
	json_t *r = json_pack("{s:b, s:s, s:o, s:i}", "ok", 1, "status", "ok", "sizes", sizes, "checks", J->checks);
	if (nsb)
		json_object_set_new(r, "speedup_vs_baseline", json_real(stats_geomean(sb, nsb)));
	if (nss)
		json_object_set_new(r, "speedup_vs_seed", json_real(stats_geomean(ss, nss)));
	if (J->d->env) {
		json_t *env = J->d->env();
		const char *cc = json_string_value(json_object_get(j, "compiler"));
		if (json_is_object(env) && cc)
			json_object_set_new(env, "compiler", json_string(cc));
		/* What reports read for "% of peak" (docs/reports.md). */
		double pg = jnum(J->peak, "copy_gbps", 0), pf = jnum(J->peak, "sgemm_gflops", 0);
		if (json_is_object(env) && pg > 0)
			json_object_set_new(env, "peak_gbps", json_real(pg));
		if (json_is_object(env) && pf > 0)
			json_object_set_new(env, "peak_gflops", json_real(pf));
		json_object_set_new(r, "env", env);
	}
	if (J->peak)
		json_object_set_new(r, "peak", J->peak);
	return r;
}

json_t *harness_run(const struct dev_ops *d, const json_t *job, char *e)
{
	const char *mode = json_string_value(json_object_get(job, "mode"));
	const char *tname = json_string_value(json_object_get(job, "task"));
	t_start = proc_now();
	if (!mode || !tname) {
		errf(e, "job needs \"mode\" and \"task\"");
		return NULL;
	}
	const struct task *t = task_get(json_string_value(json_object_get(job, "tasks_root")), tname, e);
	if (!t)
		return NULL;
	const char *backend = json_string_value(json_object_get(job, "backend"));
	struct job J = {.d = d, .t = t, .j = job, .bench = task_bench(t, backend ? backend : "c")};
	if (!(J.ref = load_fn(json_string_value(json_object_get(job, "reference")), e))) {
		if (!e[0])
			errf(e, "job has no reference");
		return NULL;
	}
	ksci_call_fn cand = load_fn(json_string_value(json_object_get(job, "candidate")), e);
	if (!cand)
		return NULL;
	if (json_object_get(job, "reference_dev") &&
	    !(J.ref_dev = load_fn(json_string_value(json_object_get(job, "reference_dev")), e)))
		return NULL;
	int irc = d->init ? d->init(e) : 0;
	if (irc == -2) {
		char m[ERRBUF + 16];
		snprintf(m, sizeof m, "unsupported: %s", e);
		return fault(ST_UNSUPPORTED, m);
	}
	if (irc < 0)
		return fault(ST_CRASHED, e);
	progress("%s ready", d->name);
	if (strcmp(mode, "verify") == 0)
		return verify(&J, cand, e);
	if (strcmp(mode, "time") == 0)
		return time_all(&J, cand, e);
	errf(e, "unknown mode \"%s\"", mode);
	return NULL;
}
