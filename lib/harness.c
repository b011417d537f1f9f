/*
 * harness: the judge.  It never loads a candidate's code: each role
 * (candidate, baseline, seed) runs in its own child process (judge/kid.h)
 * that maps a shared arena, runs calls when asked and says "done"; the
 * judge generates every input, poisons every output, reads the outputs back
 * itself and compares them with the task's reference, which only it loads.
 *
 * Checks (verify, and before timing at each benchmark size) follow the
 * holes known in public harnesses: inputs from seeds the job supplies, fresh
 * for every check; outputs poisoned (NaN for floats, 0xA5 bytes for
 * integers) so an element never written shows up; `in` arguments read back
 * and required bit-identical; NaN/inf must match; a constant output where
 * the reference is not constant fails whatever the tolerance.
 *
 * Timing is by the judge's clock around whole batches: a batch is n calls,
 * each with its own inputs generated fresh for that batch (seeds the child
 * never sees) and its own poisoned outputs (one 32-byte sector in every KiB,
 * where the child cannot know: lib/gen_value.h), so nothing a kernel remembers
 * from an earlier call — by pointer, by sampled contents, by counting calls
 * — gives it a right answer without the work.  After every candidate batch
 * the judge checks one call of it, chosen at random after the batch was
 * laid out, against the reference (inputs unmodified, outputs right).  The
 * cost of the exchange itself is measured with a child that has no kernel
 * (empty calls, the same steps) and subtracted; roles take turns in rotating
 * order so drift cancels; the batch size makes one batch last about
 * batch_s.  GPU: the child's device events are a cross-check only (work off
 * the default stream), and a probe after each batch sees work the child
 * left running on the GPU after it said done.
 *
 * Benchmark sizes are the task's "bench_<backend>" when present.  A task may
 * give a device reference ("reference_cuda"), used for benchmark sizes only,
 * where the host reference would take minutes; test sizes always use the
 * host reference (tests/gpu checks the device reference against it).
 */
#include "harness.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "judge/hot.h"
#include "judge/kid.h"
#include "par.h"
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

enum { K_CAND, K_BASE, K_SEED, K_CAL, NKIDS };
#define KID_REPLICAS 16
/* The process of role w in use now. */
#define KID(J, w) (&(J)->kid[w][(J)->cur[w]])
static const char *const kid_role[NKIDS] = {"candidate", "baseline", "seed", "calibration"};

/* Where call i's arrays live: arg a at set * i + off[a] in the arena. */
struct layout {
	uint64_t off[JCTL_MAXARGS];
	uint64_t set;
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
	/* the children and what they share */
	/* Each timed role runs in nrep processes ("processes", default 1),
	 * used in turn round by round; more processes narrow the ratio's
	 * spread between identical kernels a little (sd 0.21 % with one,
	 * 0.05-0.08 % with two or three on an H100, docs/gpu.md "where the
	 * arena lies"), at about 0.8 s each to start.  cur: the one in use. */
	struct kid kid[NKIDS][KID_REPLICAS];
	int nrep[NKIDS], cur[NKIDS];
	int have[NKIDS];
	struct kid_opts ko;
	unsigned char *arena;
	size_t arena_bytes;
	unsigned char handle[64]; /* the arena's (GPU: its IPC handle) */
	int reused[NKIDS];        /* role w's processes come from an earlier job (struct keep) */
	int spare;                /* the candidate's child is the judge's spare: it loads the candidate first */
	int cand_started;         /* a child was started with the candidate's library (its code may have run) */
	double deadline, spin_s;
	struct rng rng; /* the judge's own: batch seeds, which call is checked */
	json_t *fail;   /* set when a child failed: the result to return */
};

static double jnum(const json_t *o, const char *k, double dflt)
{
	json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : dflt;
}

static json_t *fault(const char *status, const char *msg)
{
	return json_pack("{s:b, s:s, s:s}", "ok", 0, "status", status, "message", msg);
}

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

/* The generator settings of argument a's initial contents (task "init"). */
static struct gen_spec spec_of(const struct task_arg *a, uint64_t seed)
{
	const json_t *in = a->init;
	const char *dist = json_string_value(json_object_get(in, "dist"));
	int isf = dtype_is_float(a->dt);
	struct gen_spec s = {.seed = seed};
	s.dist = !dist ? (isf ? GEN_UNIFORM : GEN_INT)
		 : strcmp(dist, "normal") == 0 ? GEN_NORMAL
		 : strcmp(dist, "int") == 0 ? GEN_INT
		 : strcmp(dist, "const") == 0 ? GEN_CONST : GEN_UNIFORM;
	if (s.dist == GEN_NORMAL)
		s.a = jnum(in, "mean", 0), s.b = jnum(in, "std", 1);
	else if (s.dist == GEN_CONST)
		s.a = jnum(in, "value", 0);
	else
		s.a = jnum(in, "lo", isf ? -1 : 0), s.b = jnum(in, "hi", isf ? 1 : 100);
	return s;
}

static uint64_t arg_seed(uint64_t seed, int i) { return seed ^ (0x9E3779B97F4A7C15ULL * (uint64_t)(i + 1)); }

static int poison_byte(enum dtype dt) { return dtype_is_float(dt) ? 0xFF : 0xA5; }

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

static void unstage(struct job *J, void **dev)
{
	for (int i = 0; i < J->t->nargs; i++)
		if (dev[i])
			J->d->release(dev[i]);
}

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
	if (J->d->call(J->ref_dev, args, e) < 0) {
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

static int prepare_fill(struct job *J, const json_t *size, uint64_t seed, int want_ref, int big, int fill,
			struct arrays *A, char *e);

/* Sizes, scalars and host arrays at size: inputs from seed (prepare_fill:
 * unless !fill), and (want_ref) the reference's outputs: from the device
 * reference when `big` and the task has one, else from the host reference. */
static int prepare(struct job *J, const json_t *size, uint64_t seed, int want_ref, int big, struct arrays *A,
		   char *e)
{
	return prepare_fill(J, size, seed, want_ref, big, 1, A, e);
}

static int prepare_fill(struct job *J, const json_t *size, uint64_t seed, int want_ref, int big, int fill,
			struct arrays *A, char *e)
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
	if (t->nargs > JCTL_MAXARGS) {
		errf(e, "task %s has %d arguments; the judge takes at most %d", t->name, t->nargs, JCTL_MAXARGS);
		goto fail;
	}
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
			struct gen_spec sp = spec_of(a, arg_seed(seed, i));
			if (fill)
				dev_host.gen(A->init[i], a->dt, A->numel[i], &sp, e);
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

static void layout_of(const struct task *t, const struct arrays *A, struct layout *L)
{
	uint64_t o = 0;
	for (int i = 0; i < t->nargs; i++) {
		L->off[i] = o;
		if (t->args[i].kind != ARG_SCALAR)
			o += ((A->bytes[i] ? A->bytes[i] : 1) + 255) / 256 * 256;
	}
	L->set = o ? o : 256;
}

/* A child's failure as the result the judge returns (J->fail). */
static int kid_failed(struct job *J, int who, int rc, const char *msg)
{
	char tail[300], m[ERRBUF + 400];
	kid_log_tail(KID(J, who), tail, sizeof tail);
	if (rc == -2)
		snprintf(m, sizeof m, "%s timed out%s%s", kid_role[who], tail[0] ? "; last: " : "", tail);
	else if (rc == -3)
		snprintf(m, sizeof m, "%s: %s", kid_role[who], msg);
	else
		snprintf(m, sizeof m, "%s%s%s", msg, tail[0] ? "; last: " : "", tail);
	json_decref(J->fail);
	J->fail = fault(rc == -2 ? ST_TIMEOUT : ST_CRASHED, m);
	return -1;
}

/* The arena at least `bytes`; every running child maps the new one. */
static int arena_ensure(struct job *J, size_t bytes, char *e)
{
	if (bytes <= J->arena_bytes)
		return 0;
	unsigned char handle[64] = {0};
	unsigned char *old = J->arena;
	size_t oldn = J->arena_bytes;
	unsigned char *p = J->d->share(bytes, J->ko.arena_fd, handle, e);
	if (!p)
		return -1;
	J->arena = p, J->arena_bytes = bytes;
	memcpy(J->handle, handle, sizeof handle);
	for (int w = 0; w < NKIDS; w++) {
		if (!J->have[w])
			continue;
		for (int r = 0; r < J->nrep[w]; r++) {
			struct jctl *c = J->kid[w][r].c;
			c->arena_bytes = bytes;
			memcpy(c->handle, handle, sizeof handle);
			double wall;
			char m[ERRBUF];
			int rc = kid_request(&J->kid[w][r], JOP_MAP, J->spin_s, J->deadline, &wall, m);
			if (rc < 0) {
				J->cur[w] = r;
				return kid_failed(J, w, rc, m);
			}
		}
	}
	if (old)
		J->d->unshare(old, oldn);
	return 0;
}

/* One batch of n calls by child `who`, arrays at the arena's sets 0..n-1. */
static int run_batch(struct job *J, int who, uint32_t op, uint32_t n, const struct layout *L, const struct arrays *A,
		     double *wall)
{
	struct jctl *c = KID(J, who)->c;
	c->nargs = (uint32_t)J->t->nargs;
	c->ncalls = n;
	c->stride = L->set;
	for (int i = 0; i < J->t->nargs; i++) {
		c->arg[i].buf = J->t->args[i].kind != ARG_SCALAR;
		c->arg[i].off = L->off[i];
		memcpy(c->arg[i].raw, A->scalar[i].raw, 8);
	}
	char m[ERRBUF];
	int rc = kid_request(KID(J, who), op, J->spin_s, J->deadline, wall, m);
	return rc < 0 ? kid_failed(J, who, rc, m) : 0;
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

/* One correctness check of the candidate at size with inputs from seed, in
 * the arena's first set.  0 ok, 1 wrong (*mm set), -1 a failure: J->fail
 * when the child failed, else e. */
static int check(struct job *J, const json_t *size, int big, uint64_t seed, json_t **mm, char *e)
{
	struct arrays A;
	if (prepare(J, size, seed, 1, big, &A, e) < 0)
		return -1;
	if (big)
		progress("inputs and reference ready");
	struct layout L;
	layout_of(J->t, &A, &L);
	int n = J->t->nargs, rc = -1;
	void *host = NULL;
	double wall;
	if (arena_ensure(J, L.set, e) < 0)
		goto out;
	for (int i = 0; i < n; i++) {
		const struct task_arg *a = &J->t->args[i];
		unsigned char *p = J->arena + L.off[i];
		if (a->kind == ARG_SCALAR || A.bytes[i] == 0)
			continue;
		if ((a->kind == ARG_OUT ? J->d->set_bytes(p, poison_byte(a->dt), A.bytes[i], e)
					: J->d->to_dev(p, A.init[i], A.bytes[i], e)) < 0)
			goto out;
	}
	if ((J->d->sync && J->d->sync(e) < 0) || run_batch(J, K_CAND, JOP_RUN, 1, &L, &A, &wall) < 0)
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
		if (J->d->to_host(host, J->arena + L.off[i], A.bytes[i], e) < 0) {
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
	arrays_free(&A);
	return rc;
}

static uint64_t job_seed(const json_t *seeds, size_t k)
{
	json_t *s = json_array_get(seeds, k % (json_array_size(seeds) ? json_array_size(seeds) : 1));
	return json_is_integer(s) ? (uint64_t)json_integer_value(s) : 0x5eed + k;
}

static json_t *failure(struct job *J, const char *where, char *e)
{
	if (J->fail) {
		json_t *f = J->fail;
		J->fail = NULL;
		return f;
	}
	char m[ERRBUF + 300];
	snprintf(m, sizeof m, "%s%s%s", where, where[0] ? ": " : "", e);
	return fault(ST_CRASHED, m);
}

static json_t *verify(struct job *J, char *e)
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
				int rc = check(J, size, l == 1, seed, &mm, e);
				if (rc < 0) {
					char w[300];
					snprintf(w, sizeof w, "at %s seed=%" PRIu64, sz, seed);
					return failure(J, w, e);
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

/* --- timing ---------------------------------------------------------------- */

struct who {
	int kid;
	const char *name;
	double *s;  /* per batch: seconds per call */
	double *x;  /* per batch: seconds the judge's clock saw beyond the device's events (GPU) */
	double *wake, *tail; /* per batch, by the child's own clock (kid_split): the log's only */
	size_t n, nx, busy; /* busy: batches after which the GPU was still busy */
	size_t nsplit;
	size_t woken, elsewhere; /* batches whose child's CPU was woken first; of them, seen on another (its word) */
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median_of(double *x, size_t n)
{
	qsort(x, n, sizeof *x, cmp_double);
	return n ? (n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2) : 0;
}

/* The device's state after each timed batch (struct dev_state), summed up
 * per size in the result's "device_state": whether clocks, temperature or a
 * power or thermal limit moved while the roles were timed. */
struct states {
	struct dev_state *v;
	size_t n, cap;
};

static void states_add(struct states *S, const struct dev_ops *d)
{
	struct dev_state st;
	if (!d->state || d->state(&st) < 0)
		return;
	if (S->n == S->cap) {
		size_t cap = S->cap ? 2 * S->cap : 64;
		struct dev_state *p = realloc(S->v, cap * sizeof *p);
		if (!p)
			return;
		S->v = p, S->cap = cap;
	}
	S->v[S->n++] = st;
}

static void states_free(struct states *S)
{
	free(S->v);
	*S = (struct states){0};
}

/* {"min", "median", "max"} of the finite values of one field (at byte
 * offset off in struct dev_state) over the readings, or NULL. */
static json_t *range_of(const struct states *S, size_t off)
{
	double *v = malloc((S->n ? S->n : 1) * sizeof *v);
	size_t m = 0;
	for (size_t i = 0; v && i < S->n; i++) {
		double x;
		memcpy(&x, (const char *)&S->v[i] + off, sizeof x);
		if (isfinite(x))
			v[m++] = x;
	}
	json_t *r = NULL;
	if (m) {
		double med = median_of(v, m); /* sorts v */
		r = json_pack("{s:f, s:f, s:f}", "min", v[0], "median", med, "max", v[m - 1]);
	}
	free(v);
	return r;
}

/* NVML's clock-event reasons (nvml.h, nvmlClocksEventReason*), by bit; the
 * GPU being idle between batches is not a limit and is left out. */
static const char *const limit_names[] = {NULL, "applications_clocks_setting", "sw_power_cap", "hw_slowdown",
					  "sync_boost", "sw_thermal_slowdown", "hw_thermal_slowdown",
					  "hw_power_brake_slowdown", "display_clock_setting"};

static json_t *states_json(const struct states *S)
{
	if (!S->n)
		return NULL;
	static const struct {
		const char *name;
		size_t off;
	} fields[] = {{"sm_mhz", offsetof(struct dev_state, sm_mhz)},
		      {"mem_mhz", offsetof(struct dev_state, mem_mhz)},
		      {"temp_c", offsetof(struct dev_state, temp_c)},
		      {"power_w", offsetof(struct dev_state, power_w)}};
	json_t *o = json_object(), *r;
	for (size_t k = 0; k < sizeof fields / sizeof *fields; k++)
		if ((r = range_of(S, fields[k].off)))
			json_object_set_new(o, fields[k].name, r);
	uint64_t limits = 0;
	for (size_t i = 0; i < S->n; i++)
		limits |= S->v[i].limits;
	json_t *l = json_array();
	for (size_t b = 1; b < sizeof limit_names / sizeof *limit_names; b++)
		if (limits & (1ULL << b))
			json_array_append_new(l, json_string(limit_names[b]));
	json_object_set_new(o, "limits", l);
	json_object_set_new(o, "samples", json_integer((json_int_t)S->n));
	return o;
}

static json_t *summary(const struct who *w, struct stats *st, uint32_t calls)
{
	stats_summarize(w->s, w->n, st);
	return json_pack("{s:f, s:f, s:f, s:f, s:I, s:i}", "median_us", st->median * 1e6, "mean_us", st->mean * 1e6,
			 "sem_us", st->sem * 1e6, "min_us", st->min * 1e6, "n", (json_int_t)st->n, "calls_per_batch",
			 (int)calls);
}

/* Fresh inputs (seeds[s * nargs + i]) and poisoned outputs (by sectors:
 * lib/gen_value.h, gen_poison_span) for sets 0..n-1,
 * then the caches flushed and the device idle. */
static int gen_batch(struct job *J, uint32_t n, const struct layout *L, const struct arrays *A, uint64_t *seeds,
		     char *e)
{
	const struct task *t = J->t;
	for (uint32_t s = 0; s < n; s++)
		for (int i = 0; i < t->nargs; i++) {
			const struct task_arg *a = &t->args[i];
			unsigned char *p = J->arena + (uint64_t)s * L->set + L->off[i];
			if (a->kind == ARG_SCALAR || A->bytes[i] == 0)
				continue;
			if (a->kind == ARG_OUT) {
				if (J->d->poison(p, poison_byte(a->dt), A->bytes[i], rng_next(&J->rng), e) < 0)
					return -1;
				continue;
			}
			seeds[(size_t)s * (size_t)t->nargs + (size_t)i] = rng_next(&J->rng);
			struct gen_spec sp = spec_of(a, seeds[(size_t)s * (size_t)t->nargs + (size_t)i]);
			if (J->d->gen(p, a->dt, A->numel[i], &sp, e) < 0)
				return -1;
		}
	if (J->d->flush && J->d->flush(J->arena, (size_t)n * L->set, e) < 0)
		return -1;
	return J->d->sync ? J->d->sync(e) : 0;
}

/* Check call s of the batch just run: its inputs regenerated by the judge
 * (priv: the judge's own device buffers) must equal what is in the arena,
 * and its outputs must match the reference for them. */
static int check_set_host(struct job *J, uint32_t s, const struct layout *L, struct arrays *A, void **priv,
			  const uint64_t *seeds, const json_t *size, json_t **mm, char *e);

/* check_set on the device: the judge's copy of the inputs (priv), the device
 * reference on it, and device comparisons; the host comparison only to
 * explain a mismatch. */
static int check_set_dev(struct job *J, uint32_t s, const struct layout *L, struct arrays *A, void **priv,
			 const uint64_t *seeds, const json_t *size, json_t **mm, char *e)
{
	const struct task *t = J->t;
	void *args[JCTL_MAXARGS];
	for (int i = 0; i < t->nargs; i++) {
		const struct task_arg *a = &t->args[i];
		if (a->kind == ARG_SCALAR) {
			args[i] = A->scalar[i].raw;
			continue;
		}
		args[i] = priv[i];
		if (A->bytes[i] == 0)
			continue;
		if (a->kind == ARG_OUT) {
			if (J->d->set_bytes(priv[i], 0, A->bytes[i], e) < 0)
				return -1;
			continue;
		}
		struct gen_spec sp = spec_of(a, seeds[(size_t)s * (size_t)t->nargs + (size_t)i]);
		if (J->d->gen(priv[i], a->dt, A->numel[i], &sp, e) < 0)
			return -1;
		int same = 1;
		if (a->kind == ARG_IN &&
		    J->d->equal(priv[i], J->arena + (uint64_t)s * L->set + L->off[i], A->bytes[i], &same, e) < 0)
			return -1;
		if (!same) {
			*mm = json_pack("{s:O, s:s, s:s}", "size", size, "arg", a->name, "reason",
					"input argument was modified");
			return 1;
		}
	}
	if (J->d->call(J->ref_dev, args, e) < 0) {
		char m[ERRBUF];
		snprintf(m, sizeof m, "%s", e);
		return errf(e, "the task's device reference failed: %s", m);
	}
	J->checks++;
	for (int i = 0; i < t->nargs; i++) {
		const struct task_arg *a = &t->args[i];
		if (a->kind == ARG_SCALAR || a->kind == ARG_IN || A->bytes[i] == 0)
			continue;
		const void *got = J->arena + (uint64_t)s * L->set + L->off[i];
		struct dev_cmp r;
		if (J->d->compare(got, priv[i], a->dt, A->numel[i], a->atol, a->rtol, &r, e) < 0)
			return -1;
		if (r.max_abs > J->max_abs)
			J->max_abs = r.max_abs;
		if (r.max_rel > J->max_rel)
			J->max_rel = r.max_rel;
		if (!r.bad && !(A->numel[i] > 1 && !r.got_varies && r.want_varies))
			continue;
		/* Wrong: the host comparison says where and why. */
		if (J->d->to_host(A->ref[i], priv[i], A->bytes[i], e) < 0)
			return -1;
		void *host = malloc(A->bytes[i] ? A->bytes[i] : 1);
		if (!host)
			return errf(e, "out of memory");
		int rc = J->d->to_host(host, got, A->bytes[i], e) < 0 ? -1
			 : compare(J, i, host, A->ref[i], A->numel[i], size, 0, mm);
		free(host);
		if (rc == 0) {
			*mm = json_pack("{s:O, s:s, s:I, s:s}", "size", size, "arg", a->name, "count", (json_int_t)r.bad,
					"reason", "outside tolerance (device check)");
			rc = 1;
		}
		return rc;
	}
	return 0;
}

static int dev_checks(const struct job *J) { return J->d->compare && J->d->equal && J->ref_dev; }

static int check_set(struct job *J, uint32_t s, const struct layout *L, struct arrays *A, void **priv,
		     const uint64_t *seeds, const json_t *size, json_t **mm, char *e)
{
	if (dev_checks(J))
		return check_set_dev(J, s, L, A, priv, seeds, size, mm, e);
	return check_set_host(J, s, L, A, priv, seeds, size, mm, e);
}

static int check_set_host(struct job *J, uint32_t s, const struct layout *L, struct arrays *A, void **priv,
			  const uint64_t *seeds, const json_t *size, json_t **mm, char *e)
{
	const struct task *t = J->t;
	void *host = NULL;
	int rc = -1;
	void **args = calloc((size_t)t->nargs, sizeof *args);
	if (!args)
		return errf(e, "out of memory");
	for (int i = 0; i < t->nargs; i++) {
		const struct task_arg *a = &t->args[i];
		if (a->kind == ARG_SCALAR) {
			args[i] = A->scalar[i].raw;
			continue;
		}
		args[i] = a->kind == ARG_IN ? A->init[i] : A->ref[i];
		if (a->kind == ARG_OUT || A->bytes[i] == 0)
			continue;
		struct gen_spec sp = spec_of(a, seeds[(size_t)s * (size_t)t->nargs + (size_t)i]);
		if (J->d->gen(priv[i], a->dt, A->numel[i], &sp, e) < 0 ||
		    J->d->to_host(A->init[i], priv[i], A->bytes[i], e) < 0)
			goto out;
		if (a->kind == ARG_INOUT) {
			memcpy(A->ref[i], A->init[i], A->bytes[i]);
			continue;
		}
		free(host);
		if (!(host = malloc(A->bytes[i]))) {
			errf(e, "out of memory");
			goto out;
		}
		if (J->d->to_host(host, J->arena + (uint64_t)s * L->set + L->off[i], A->bytes[i], e) < 0)
			goto out;
		if (memcmp(host, A->init[i], A->bytes[i]) != 0) {
			*mm = json_pack("{s:O, s:s, s:s}", "size", size, "arg", a->name, "reason",
					"input argument was modified");
			rc = 1;
			goto out;
		}
	}
	if (J->ref_dev) {
		if (ref_on_device(J, A, e) < 0)
			goto out;
	} else
		J->ref(args);
	J->checks++;
	rc = 0;
	for (int i = 0; i < t->nargs && rc == 0; i++) {
		const struct task_arg *a = &t->args[i];
		if (a->kind == ARG_SCALAR || a->kind == ARG_IN || A->bytes[i] == 0)
			continue;
		free(host);
		if (!(host = malloc(A->bytes[i]))) {
			rc = errf(e, "out of memory");
			break;
		}
		if (J->d->to_host(host, J->arena + (uint64_t)s * L->set + L->off[i], A->bytes[i], e) < 0) {
			rc = -1;
			break;
		}
		rc = compare(J, i, host, A->ref[i], A->numel[i], size, 0, mm);
	}
out:
	free(host);
	free(args);
	return rc;
}


#define CAL_BATCHES 11

/*
 * Anchors: the baseline's and seed's timings at one size, kept by a judge
 * that serves many jobs ("anchor_every" N > 0 in the job), so that the next
 * candidates are timed beside the seed only (the baseline's anchor carried
 * over by the seed's drift), or alone where the task has no seed, instead
 * of re-timing every role every time.  An anchor is measured by an ordinary interleaved run (all
 * roles, rotating order) and serves at most N candidates, for at most
 * "anchor_max_age_s" (default 600), and only while the device's state is
 * what it was (SM and memory clock within 2 % and temperature within 8 °C
 * while it timed, else that size is timed again with every role); then
 * the next job measures a new one.  It is per (task, size, baseline
 * and seed objects, processes, batch length): the same arena (struct keep)
 * and batch size as when it was measured.  What this costs in accuracy is
 * measured by the A/A benchmark (docs/gpu.md).
 */
#define MAX_ANCHORS 64
static struct anchor {
	char key[1024];
	uint32_t n;		/* calls per batch */
	double base_med, seed_med; /* seconds per call; 0: the role was not timed */
	json_t *base, *seed;	/* their summaries, as the anchoring run wrote them */
	int roles;		/* roles timed in the anchoring run */
	struct dev_state st; /* medians of the anchoring run; sm_mhz 0: not known */
	double at;
	int uses;
	long job; /* the judge's job that measured it */
} anchors[MAX_ANCHORS];
static int nanchors;
static long jobs_served;

/* Candidates an anchor serves: the job's "anchor_every", else 8 on a GPU
 * (on an H100 the A/A of softmax held at 20/20 within 1 %, max 0.77 %,
 * with 35.6 new candidates a minute against 26.2 with every role timed
 * every time; docs/gpu.md "Throughput") and 0 on the CPU, where it was
 * not measured. */
static int anchor_every(const struct job *J)
{
	return (int)jnum(J->j, "anchor_every", J->d->probe ? 8 : 0);
}

static struct anchor *anchor_find(const char *key)
{
	for (int i = 0; i < nanchors; i++)
		if (strcmp(anchors[i].key, key) == 0)
			return &anchors[i];
	return NULL;
}

/* Whether anchor a may serve this job (why not in *why). */
static int anchor_valid(struct job *J, const struct anchor *a, const char **why)
{
	int every = anchor_every(J);
	*why = NULL;
	if (a->uses >= every)
		*why = "used";
	else if (proc_now() - a->at > jnum(J->j, "anchor_max_age_s", 600))
		*why = "old";
	return *why == NULL;
}

/* The medians of a size's device_state in res (0 for a clock it lacks,
 * NaN for a temperature it lacks: never compared). */
static void state_medians(const json_t *res, struct dev_state *st)
{
	const json_t *ds = json_object_get(res, "device_state");
	const json_t *tj = json_object_get(json_object_get(ds, "temp_c"), "median");
	*st = (struct dev_state){
		.sm_mhz = json_number_value(json_object_get(json_object_get(ds, "sm_mhz"), "median")),
		.mem_mhz = json_number_value(json_object_get(json_object_get(ds, "mem_mhz"), "median")),
		.temp_c = json_is_number(tj) ? json_number_value(tj) : NAN,
		.power_w = NAN,
	};
}

/* Whether the state a size was timed at (its device_state's medians) moved
 * from its anchor's (dev_state_moved: a clock by 2 %, the temperature by
 * 15 °C); what moved in moved (n bytes).  Asked after the timing, not
 * before: a GPU idle for the verify stage between two jobs read 345 MHz
 * where it times at 1980, and on an H200 that renewed the anchor of matmul
 * 4096^3 for 13 of the first 20 candidates; the temperature read before the
 * job, of a GPU that cooled while the next candidate compiled (42 °C),
 * against the anchor's median while it timed (54 °C), renewed it for every
 * candidate sent one at a time, and with it cuBLAS timed again each time
 * (docs/gpu.md). */
static int state_moved(const json_t *res, const struct anchor *a, char *moved, size_t n)
{
	struct dev_state now;
	state_medians(res, &now);
	return dev_state_moved(&now, &a->st, moved, n);
}

/* Keep (or renew) the anchor of key from a full run's result at one size. */
static void anchor_store(const char *key, const json_t *res, uint32_t n, int roles)
{
	struct anchor *a = anchor_find(key);
	if (!a) {
		if (nanchors == MAX_ANCHORS) { /* the oldest goes */
			int old = 0;
			for (int i = 1; i < nanchors; i++)
				if (anchors[i].at < anchors[old].at)
					old = i;
			a = &anchors[old];
		} else
			a = &anchors[nanchors++];
	}
	json_decref(a->base);
	json_decref(a->seed);
	memset(a, 0, sizeof *a);
	snprintf(a->key, sizeof a->key, "%s", key);
	a->n = n, a->roles = roles, a->at = proc_now(), a->job = jobs_served;
	const json_t *b = json_object_get(res, "baseline"), *sd = json_object_get(res, "seed");
	a->base = b ? json_deep_copy(b) : NULL;
	a->seed = sd ? json_deep_copy(sd) : NULL;
	a->base_med = b ? json_number_value(json_object_get(b, "median_us")) * 1e-6 : 0;
	a->seed_med = sd ? json_number_value(json_object_get(sd, "median_us")) * 1e-6 : 0;
	state_medians(res, &a->st);
}


/* The arena's budget when the job names none: on a GPU, half of what is
 * free on the device (counting the arena this judge already holds), at
 * most 32 GiB — every call of a batch has arrays of its own, and a batch
 * of calls with large arrays (softmax 4096x4096: 128 MiB a call) held
 * only 64 calls at a fixed 8 GiB, a 5 ms batch instead of the 20 ms asked
 * for, and runs of the same kernel then differed by 0.4-0.5 % (CV of the
 * median) against 0.2-0.3 % with the batch at its length (docs/gpu.md,
 * "the arena's size"); 8 GiB where the device cannot tell; 256 MiB for
 * host memory. */
static double arena_default_mb(const struct job *J)
{
	if (!J->d->probe)
		return 256;
	size_t fr = 0, tot = 0;
	char e[ERRBUF];
	if (!J->d->mem_info || J->d->mem_info(&fr, &tot, e) < 0)
		return 8192;
	double mb = ((double)fr + (double)J->arena_bytes) / 2 / 1048576.0;
	return mb > 32768 ? 32768 : mb < 1024 ? 1024 : mb;
}
/* When this judge last finished a timed loop (the warm-up's measure of an
 * idle GPU), and the SM clock it ran at (the median of its readings; NAN
 * until one, or where the device reports none). */
static double last_timed = -1e9, last_sm_mhz = NAN;

/* Attempts at a size before the checks on the timing itself condemn a
 * candidate (time_size). */
#define XCHECK_TRIES 3

/* A role's standard error of the mean, as a fraction of it, above which a
 * GPU size is timed on past its budget (time_size). */
#define NOISY_SEM 0.004

/* The judge's exchange with a child, as a share of a batch (time_size):
 * the batch size is grown until it is at most EXCH_SHARE of a batch of the
 * fastest role, where the arena allows (on a GPU, batches of 20 ms against
 * an exchange of tens of us: never binding); a size where it still came out
 * above EXCH_SHARE_BAD of some role's median batch is held back as
 * implausible.  Under two busy loops and four jobs on two cores a c size's
 * exchange cost 5.9 ms against a candidate's 8 ms batch: its median
 * (wall - exchange) was below zero, 1e-6 us a call, a speed-up of 2.5e9. */
#define EXCH_SHARE 0.1
#define EXCH_SHARE_BAD 0.9

/* Early rejection beyond doubt (time_size): after FAR_BATCHES batches a
 * role, before --min-runs, a candidate whose fastest batch against the
 * seed's slowest is below the bound / the factor (stats_far_below) is
 * stopped.  Its batches are sized for the seed: a candidate 32x slower than
 * the seed spent 32x the seed's batch in each of the min_runs batches the
 * median rule waits for (on a GPU 6 x 0.64 s at matmul's 4096^3).  On a
 * GPU, where batches of one kernel agree within about 1 %, a factor of 4;
 * on the c back end 16: under two busy loops and make check the seed's own
 * copy measured 3.4x the seed on the medians of 2 batches. */
#define FAR_BATCHES 2
#define FAR_FACTOR_GPU 4.0
#define FAR_FACTOR_CPU 16.0

/* The batch sizes a size may pick: a grid of steps of about sqrt(2)
 * (1 2 3 4 6 8 12 16 24 ...), so that runs of the same kernel mostly pick
 * the same batch, and so the same arena (where arrays lie can move a
 * memory-bound kernel's time).  The largest step not above want (up: the
 * smallest not below it), none above nmax; at least 1. */
static uint32_t batch_grid(double want, uint32_t nmax, int up)
{
	uint32_t n = 1;
	for (uint32_t g = 1; g <= nmax; g = g < 2 ? 2 : (g & (g - 1)) ? g / 3 * 4 : g / 2 * 3) {
		if (g > want)
			return up ? g : n;
		n = g;
	}
	return n;
}

/* The plausibility guard (harness.h). */
json_t *harness_implausible(const json_t *sizes, const json_t *peak)
{
	size_t i;
	json_t *size;
	/* The plausibility guard: a candidate faster than the device's peak
	 * allows (its bytes or flops per second above the measured copy
	 * bandwidth or SGEMM rate) is flagged, and the selectors and the
	 * pipelines hold it back until it is verified and timed again
	 * (docs/tools/ktime.md, "implausible").
	 * A kernel may outrun a memcpy (rowsum's seed, which only reads, read
	 * at 102 % of an H100's copy rate and 100.5 % of an H200's): the bound
	 * for bytes is the larger of the copy rate and the DRAM's rated
	 * bandwidth (bus width x memory clock, NVML), which none can beat. */
	double copy = jnum(peak, "copy_gbps", 0), dram = jnum(peak, "dram_gbps", 0);
	double bw_lim = copy > 0 && dram > copy ? 100 * dram / copy : 100;
	/* So is a size timed in batches that were mostly the judge's exchange
	 * with its children (EXCH_SHARE_BAD): its figures are that exchange's
	 * noise, whatever the speed-up says. */
	json_t *imp = json_array();
	json_array_foreach(sizes, i, size)
	{
		double pb = jnum(size, "pct_peak_bw", 0), pf = jnum(size, "pct_peak_flops", 0);
		double xs = jnum(size, "exchange_share", 0);
		if (pb > bw_lim || pf > 100 || xs > EXCH_SHARE_BAD) {
			json_t *o = json_pack("{s:O}", "size", json_object_get(size, "size"));
			if (pb > bw_lim)
				json_object_set_new(o, "pct_peak_bw", json_real(pb));
			if (pf > 100)
				json_object_set_new(o, "pct_peak_flops", json_real(pf));
			if (xs > EXCH_SHARE_BAD)
				json_object_set_new(o, "exchange_share", json_real(xs));
			json_array_append_new(imp, o);
		}
	}
	if (!json_array_size(imp)) {
		json_decref(imp);
		return NULL;
	}
	const json_t *f = json_array_get(imp, 0);
	char sz[256];
	task_size_str(json_object_get(f, "size"), sz, sizeof sz);
	double pb = jnum(f, "pct_peak_bw", 0), pf = jnum(f, "pct_peak_flops", 0), xs = jnum(f, "exchange_share", 0);
	const char *more = json_array_size(imp) > 1 ? " (and other sizes)" : "";
	json_t *msg = pb > bw_lim || pf > 100
			      ? json_sprintf("faster than the device allows: %.0f %% of its %s at %s%s; held "
					     "back until verified and timed again",
					     pb > bw_lim ? pb : pf,
					     pb > bw_lim ? (bw_lim > 100 ? "copy bandwidth peak, above the DRAM's rated bandwidth too" : "copy bandwidth peak") : "SGEMM peak",
					     sz, more)
			      : json_sprintf("timed in batches that were %.0f %% the judge's exchange with its child "
					     "at %s%s (a loaded machine?): the figures are not the kernel's; held back "
					     "until verified and timed again",
					     100 * xs, sz, more);
	return json_pack("{s:o, s:b, s:o}", "sizes", imp, "rechecked", 0, "message", msg);
}

/* Time the roles at one size.  NULL with *fail_res (the candidate is wrong
 * or a child failed) or e.  an: W holds the candidate and (where there is
 * one) the seed; the baseline comes from that anchor. */
static json_t *time_size(struct job *J, struct who *W, int nw, const json_t *size, uint64_t seed, char *e,
			 json_t **fail_res, const struct anchor *an)
{
	const json_t *o = J->j;
	const struct task *t = J->t;
	int gpu = J->d->probe != NULL;
	/* The back end's defaults (ktime --budget, --min-runs): on a GPU 0.5 s
	 * and 6 batches of about 20 ms (one cycle of the six orders) held the
	 * A/A of softmax and matmul as well as 1 s and 10 did, at 1.4 s less
	 * per candidate (docs/gpu.md, "the arena's size"); at least 4 (two
	 * cycles of a candidate and the seed, beside an anchor; with three
	 * roles still one cycle of six, since sampling stops only after whole
	 * cycles) held it too, at 0.19 s less of a new matmul candidate's time
	 * stage (docs/gpu.md, "Throughput", fifteenth session). */
	double budget = jnum(o, "budget_s", gpu ? 0.5 : 1.0), target = jnum(o, "target_rel_sem", 0.001);
	double batch_s = jnum(o, "batch_s", gpu ? 0.02 : 0.01);
	/* The stopping rule: the job's "stop_stat", else on a GPU the paired
	 * ratios' — the A/A of matmul and softmax held with it (20/20 within 1 %,
	 * worst 0.47 %, back to back and from idle) and on one H200 a new matmul
	 * candidate's time stage went from 0.565 to 0.54 s (median; 15 of 15
	 * at 4 batches a role at both sizes, against 9 with the mean's), softmax's
	 * 0.67 to 0.645 s; where a role's own noise spreads its batches it does
	 * what the mean's does (docs/gpu.md, twenty-sixth session) — and on the
	 * CPU the mean's (its A/A is not measured with another). */
	const char *stop_stat = json_string_value(json_object_get(o, "stop_stat"));
	if (!stop_stat)
		stop_stat = gpu ? "paired" : "mean";
	int stop_median = strcmp(stop_stat, "median") == 0;
	int stop_paired = strcmp(stop_stat, "paired") == 0;
	/* Early rejection: the bound on the speedup over the seed, this size's
	 * own where the job has one (ktime --best-sizes) — the best there may
	 * be a size's own winner, far from the best overall. */
	double stop_below = jnum(o, "stop_below", 0);
	const json_t *per_size = json_object_get(o, "stop_below_sizes");
	if (json_is_object(per_size)) {
		char lab[256];
		task_size_str(size, lab, sizeof lab);
		stop_below = jnum(per_size, lab, stop_below);
	}
	int seed_w = -1;
	for (int k = 0; k < nw; k++)
		if (W[k].kid == K_SEED)
			seed_w = k;
	size_t min_runs = (size_t)jnum(o, "min_runs", gpu ? 4 : 10), max_runs = (size_t)jnum(o, "max_runs", 10000);
	min_runs = min_runs > max_runs ? max_runs : min_runs;
	double arena_mb = jnum(o, "arena_mb", 0);
	if (arena_mb <= 0)
		arena_mb = gpu && J->arena_bytes ? (double)J->arena_bytes / 1048576.0 : arena_default_mb(J);
	struct arrays A;
	if (prepare_fill(J, size, seed, 0, 1, 0, &A, e) < 0)
		return NULL;
	struct layout L;
	layout_of(t, &A, &L);
	json_t *res = NULL, *ds;
	struct states S = {0};
	void **priv = calloc((size_t)t->nargs, sizeof *priv);
	uint64_t *seeds = NULL;
	uint32_t nmax = (uint32_t)(arena_mb * 1048576.0 / (double)L.set);
	nmax = nmax < 1 ? 1 : nmax > 1024 ? 1024 : nmax;
	seeds = calloc((size_t)nmax * (size_t)t->nargs, sizeof *seeds);
	if (!priv || !seeds) {
		errf(e, "out of memory");
		goto out;
	}
	for (int i = 0; i < t->nargs; i++) /* the judge's own copy of one call's arrays, for its check */
		if (t->args[i].kind != ARG_SCALAR && !(priv[i] = J->d->alloc(A.bytes[i] ? A.bytes[i] : 1, e)))
			goto out;
	for (int k = 0; k < nw; k++) {
		W[k].s = malloc(max_runs * sizeof(double));
		W[k].x = malloc(max_runs * sizeof(double));
		W[k].wake = malloc(max_runs * sizeof(double));
		W[k].tail = malloc(max_runs * sizeof(double));
		W[k].n = W[k].nx = W[k].busy = W[k].nsplit = W[k].woken = W[k].elsewhere = 0;
		if (!W[k].s || !W[k].x || !W[k].wake || !W[k].tail) {
			errf(e, "out of memory");
			goto out;
		}
	}
	/* The batch size: one call of each role (a warm-up too), less what the
	 * exchange costs, measured with empty calls of the child that has no
	 * kernel; then that cost again at the batch size, with the same steps. */
	double tau = INFINITY, wall, cal[CAL_BATCHES], idle[CAL_BATCHES], single[3];
	/* The whole arena at once, not grown batch size by batch size: where
	 * it lies in device memory moved a memory-bound kernel's time by up to
	 * 10 % from run to run (docs/gpu.md, A/A). */
	if (arena_ensure(J, (size_t)nmax * L.set, e) < 0)
		goto out;
	progress("arena ready: %zu bytes", J->arena_bytes);
	for (int k = 0; k < nw; k++) {
		double one[3];
		for (int r = 0; r < 3; r++) {
			if (gen_batch(J, 1, &L, &A, seeds, e) < 0 || run_batch(J, W[k].kid, JOP_RUN, 1, &L, &A, &one[r]) < 0)
				goto out;
			json_t *mm = NULL;
			int rc = W[k].kid == K_CAND ? check_set(J, 0, &L, &A, priv, seeds, size, &mm, e) : 0;
			if (rc < 0)
				goto out;
			if (rc == 1) {
				char sz[256];
				task_size_str(size, sz, sizeof sz);
				*fail_res = json_pack("{s:b, s:s, s:o}", "ok", 0, "status", ST_WRONG, "mismatch", mm);
				json_object_set_new(*fail_res, "message", json_sprintf("wrong at benchmark size %s (arg %s): %s", sz,
						    json_string_value(json_object_get(mm, "arg")),
						    json_string_value(json_object_get(mm, "reason"))));
				goto out;
			}
		}
		wall = median_of(one, 3);
		tau = wall < tau ? wall : tau;
		single[k] = wall;
		progress("%s: single calls %.1f us", W[k].name, wall * 1e6);
	}
	progress("single calls done: %.1f us the fastest", tau * 1e6);
	uint32_t n = 1;
	if (an) { /* the anchor's batch size: its timings are per call of such batches */
		n = an->n < nmax ? an->n : nmax;
		if (arena_ensure(J, (size_t)n * L.set, e) < 0)
			goto out;
		budget *= (double)nw / an->roles; /* each role gets as many batches as in a full run */
	}
	double fastest = 0; /* the fastest role's time a call, from the first guess */
	int regrown = 0;
	for (int pass = an ? 1 : 0; pass < 2; pass++) {
		for (int k = 0; k < CAL_BATCHES; k++) {
			if ((J->d->flush && J->d->flush(J->arena, (size_t)n * L.set, e) < 0) || (J->d->sync && J->d->sync(e) < 0) ||
			    run_batch(J, K_CAL, JOP_EMPTY, n, &L, &A, &cal[k]) < 0)
				goto out;
			idle[k] = 0;
			if (gpu && J->d->probe(&idle[k], e) < 0)
				goto out;
		}
		progress("exchange calibrated (%s)", pass ? "at the batch size" : "single calls");
		if (pass == 1) {
			/* The exchange at the batch size may cost more than at single
			 * calls (a loaded CPU): grown again, twice at most.  An
			 * anchor's batch size is its own. */
			double need = an ? 0 : stats_exchange_calls(median_of(cal, CAL_BATCHES), fastest, EXCH_SHARE);
			uint32_t g = n < need ? batch_grid(need, nmax, 1) : n;
			if (g == n || regrown++ == 2)
				break;
			progress("the exchange over %.0f %% of a batch: %u calls", 100 * EXCH_SHARE, g);
			n = g;
			if (arena_ensure(J, (size_t)n * L.set, e) < 0)
				goto out;
			pass = 0; /* calibrate again at n */
			continue;
		}
		/* A first guess from the single calls, then each role's time per
		 * call from one batch of half that size: a single call is mostly
		 * the exchange's cost, and a noisy guess moved the batch size
		 * (and the arena) from run to run. */
		double ovh1 = median_of(cal, CAL_BATCHES), one = tau - ovh1, per_call[3];
		double guess = batch_s / (one > 1e-7 ? one : 1e-7) / 2;
		uint32_t m = guess > nmax ? nmax : guess < 1 ? 1 : (uint32_t)guess;
		for (int k = 0; k < nw; k++)
			per_call[k] = single[k] - ovh1;
		if (m > 1) {
			if (arena_ensure(J, (size_t)m * L.set, e) < 0)
				goto out;
			one = INFINITY;
			for (int k = 0; k < nw; k++) {
				if (gen_batch(J, m, &L, &A, seeds, e) < 0 || run_batch(J, W[k].kid, JOP_RUN, m, &L, &A, &wall) < 0)
					goto out;
				per_call[k] = (wall - ovh1) / m;
				one = fmin(one, per_call[k]);
			}
		}
		progress("first guess: %u calls, %.3f us a call", m, one * 1e6);
		/* On a GPU a batch lasts batch_s for the seed, where there is one,
		 * and at least a quarter of it for the fastest role: sized by the
		 * fastest role (cuBLAS, 2.7 ms a call at 4096^3 against the seed's
		 * 8.3) every matmul batch of the seed and of candidates like it
		 * took 50 ms instead of 20, and a candidate 2.5 s of ktime; sized
		 * by the seed, the batch is the same for every candidate of a task
		 * that is not far faster than the seed (one arena placement, one
		 * anchor).  Where the seed is the fastest this is the old rule. */
		double want = batch_s / (one > 1e-7 ? one : 1e-7);
		if (gpu && seed_w >= 0 && per_call[seed_w] > one)
			want = fmax(batch_s / per_call[seed_w], want / 4);
		/* On the grid; then at least enough calls for the exchange to be a
		 * small share of the fastest role's batch. */
		n = batch_grid(want, nmax, 0);
		fastest = one;
		double need = stats_exchange_calls(ovh1, one, EXCH_SHARE);
		if (n < need)
			n = batch_grid(need, nmax, 1);
		if (arena_ensure(J, (size_t)n * L.set, e) < 0)
			goto out;
	}
	double ovh = median_of(cal, CAL_BATCHES), idle_probe = median_of(idle, CAL_BATCHES);
	double busy_at = gpu ? fmax(1e-3, 20 * idle_probe) : INFINITY;
	int attempt = 1;
retime: /* again from here when an attempt's timing failed its own checks (below) */
	progress("batches of %u calls; the exchange costs %.1f us; timing", n, ovh * 1e6);
	/* Warm-up at the batch size: two batches of each role in each of its
	 * processes, and at least 0.1 s, so the clocks have left whatever state
	 * an idle GPU was in; one batch each (every call's arrays touched once
	 * by every process) when this judge timed until less than a second ago
	 * (the next size, the next job of a long-lived judge): the GPU is not
	 * idle then — or when, after that one batch each, the SM clock is back
	 * within DEV_CLOCK_TOL (the anchors' own) of the one this judge's last
	 * timed loop ran at (a new candidate's GPU idled through its compile,
	 * at 345 MHz on an H100: the floor was 0.07 s of its time stage;
	 * docs/gpu.md). */
	int reps = 1, warm = gpu && proc_now() - last_timed < 1.0;
	const char *warm_why = warm ? "timed until less than 1 s ago" : "from idle: 2 batches a role, at least 0.1 s";
	char clock_why[96];
	for (int k = 0; k < nw; k++)
		reps = J->nrep[W[k].kid] > reps ? J->nrep[W[k].kid] : reps;
	double wu0 = proc_now();
	for (int q = 0; q < reps; q++) /* every process of every role */
		for (double w0 = proc_now(), r = 0;
		     r < (q || warm ? 1 : 2) || (q == 0 && !warm && proc_now() - w0 < 0.1); r++) {
			for (int k = 0; k < nw; k++) {
				J->cur[W[k].kid] = q % J->nrep[W[k].kid];
				if (gen_batch(J, n, &L, &A, seeds, e) < 0 ||
				    run_batch(J, W[k].kid, JOP_RUN, n, &L, &A, &wall) < 0)
					goto out;
			}
			struct dev_state st;
			if (gpu && !warm && q == 0 && r == 0 && isfinite(last_sm_mhz) && J->d->state &&
			    J->d->state(&st) == 0 && stats_clock_back(st.sm_mhz, last_sm_mhz, DEV_CLOCK_TOL)) {
				warm = 1;
				snprintf(clock_why, sizeof clock_why, "SM clock %.0f MHz after a batch a role, the last loop's %.0f",
					 st.sm_mhz, last_sm_mhz);
				warm_why = clock_why;
			}
		}
	progress("warmed up in %.3f s (%s)", proc_now() - wu0, warm_why);
	double t0 = proc_now(), maxprobe = 0;
	size_t extend_to = 0; /* batches a noisy role may reach past the budget (below) */
	int extended = 0;
	double spent[4] = {0, 0, 0, 0}; /* inputs, the batches, probe and state, the check: for the log */
	size_t rounds = 0;
	for (;; rounds++) {
		/* Every order of the roles in turn (2: AB BA; 3: the six
		 * permutations), so each role follows each other equally often:
		 * whatever one batch leaves behind (clocks, caches) is shared out. */
		static const int perm3[6][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {0, 2, 1}, {2, 1, 0}, {1, 0, 2}};
		for (int k = 0; k < nw; k++) {
			int pos = nw == 3 ? perm3[rounds % 6][k] : nw == 2 ? (int)((rounds + (size_t)k) % 2) : 0;
			struct who *w = &W[pos];
			J->cur[w->kid] = (int)(rounds % (size_t)J->nrep[w->kid]);
			uint32_t chk = (uint32_t)rng_below(&J->rng, n);
			double p0 = proc_now();
			if (gen_batch(J, n, &L, &A, seeds, e) < 0)
				goto out;
			double p1 = proc_now();
			if (run_batch(J, w->kid, JOP_RUN, n, &L, &A, &wall) < 0)
				goto out;
			double p2 = proc_now(), ev = KID(J, w->kid)->c->event_s, probe = 0;
			if (gpu && J->d->probe(&probe, e) < 0)
				goto out;
			states_add(&S, J->d);
			double p3 = proc_now();
			spent[0] += p1 - p0, spent[1] += p2 - p1, spent[2] += p3 - p2;
			maxprobe = probe > maxprobe ? probe : maxprobe;
			if (probe > busy_at)
				w->busy++;
			if (ev >= 0)
				w->x[w->nx++] = wall - ovh - ev;
			double wk, tl;
			if (w->nsplit < max_runs && kid_split(KID(J, w->kid), &wk, &tl))
				w->wake[w->nsplit] = wk, w->tail[w->nsplit++] = tl;
			int there = kid_woke_there(KID(J, w->kid));
			if (there >= 0)
				w->woken++, w->elsewhere += !there;
			double x = (wall - ovh) / n;
			w->s[w->n++] = x > 1e-12 ? x : 1e-12;
			if (w->kid == K_CAND) {
				json_t *mm = NULL;
				int rc = check_set(J, chk, &L, &A, priv, seeds, size, &mm, e);
				spent[3] += proc_now() - p3;
				if (rc < 0)
					goto out;
				if (rc == 1) {
					char sz[256];
					task_size_str(size, sz, sizeof sz);
					*fail_res = json_pack("{s:b, s:s, s:o}", "ok", 0, "status", ST_WRONG, "mismatch", mm);
					json_object_set_new(*fail_res, "message",
							    json_sprintf("wrong at benchmark size %s in timed batch %zu, call %u of %u (arg %s): %s",
									 sz, rounds + 1, chk + 1, n,
									 json_string_value(json_object_get(mm, "arg")),
									 json_string_value(json_object_get(mm, "reason"))));
					goto out;
				}
			}
		}
		size_t have = W[0].n, cycle = nw == 3 ? 6 : (size_t)nw;
		if (have >= max_runs)
			break;
		/* Early rejection (ktime --stop-slower): far slower than the best
		 * so far is settled long before the SEM target; the bound is a
		 * factor, so the noise of the first batches cannot decide it —
		 * on medians at every point where sampling could stop, and before
		 * that only beyond doubt (FAR_BATCHES). */
		int due = have >= min_runs && (rounds + 1) % cycle == 0; /* stop only after whole cycles of orders */
		int seeded = seed_w > 0 || (an && an->seed_med > 0);
		double far_factor = gpu ? FAR_FACTOR_GPU : FAR_FACTOR_CPU;
		int far = stop_below > 0 && seeded && !due && have >= FAR_BATCHES &&
			  stats_far_below(W[0].s, W[0].n, seed_w > 0 ? W[seed_w].s : NULL, seed_w > 0 ? W[seed_w].n : 0,
					  seed_w > 0 ? 0 : an->seed_med, stop_below, far_factor);
		/* The cross-check beyond doubt (stats_xcheck_far): the attempt
		 * ends after the candidate's first two batches, failed as it
		 * would at its end, where each saw more than a second and more
		 * than half the batch beyond the events — the hog's attempts
		 * (6.4 s batches) ran their 4 rounds at least, 113 s of GPU.
		 * Early rejection goes first: such batches are far slower than
		 * the seed's (sized to 20 ms), and "slow" ends the size at once
		 * where three failed attempts take 74 s. */
		int beyond = gpu && W[0].n == 2 && W[0].nx == 2 &&
			     stats_xcheck_far(W[0].x, (const double[2]){W[0].s[0] * n, W[0].s[1] * n});
		if (!due && !far && !beyond)
			continue;
		if (stop_below > 0 && seeded && (due || far)) {
			struct stats cs, ss;
			if (stats_summarize(W[0].s, W[0].n, &cs) < 0 ||
			    (seed_w > 0 && stats_summarize(W[seed_w].s, W[seed_w].n, &ss) < 0)) {
				errf(e, "out of memory");
				goto out;
			}
			double cm = cs.median, sm = seed_w > 0 ? ss.median : an->seed_med;
			if (far || sm / cm < stop_below) {
				char sz[256];
				task_size_str(size, sz, sizeof sz);
				*fail_res = json_pack("{s:b, s:s}", "ok", 0, "status", ST_SLOW);
				json_object_set_new(*fail_res, "slow",
						    json_pack("{s:O, s:f, s:f, s:f, s:f, s:I, s:b}", "size", size, "speedup_vs_seed",
							      sm / cm, "bound", stop_below, "candidate_median_us", cm * 1e6,
							      "seed_median_us", sm * 1e6, "batches", (json_int_t)W[0].n,
							      "beyond_doubt", far));
				if (far)
					json_object_set_new(json_object_get(*fail_res, "slow"), "far_factor", json_real(far_factor));
				json_object_set_new(*fail_res, "message",
						    json_sprintf("far slower than the best: %.3fx the seed at size %s after %zu "
								 "batches, below the bound %.3fx; timing stopped",
								 sm / cm, sz, W[0].n, stop_below));
				goto out;
			}
		}
		if (beyond) {
			progress("the candidate's first two batches: %.0f and %.0f us beyond the events, of %.0f and %.0f us; "
				 "the attempt ends", W[0].x[0] * 1e6, W[0].x[1] * 1e6, W[0].s[0] * n * 1e6, W[0].s[1] * n * 1e6);
			break;
		}
		int settled = 1, noisy = 0;
		if (stop_paired && nw > 1) {
			/* Each pair of roles: the standard error of their ratio, from
			 * the rounds' pairs of batches (each role ran one batch a
			 * round), against sqrt(2) x the target — what the mean's rule
			 * allows the ratio where the two roles' noise is their own;
			 * noise they share (the device warming across the rounds)
			 * cancels here and not there (ktime --stop-stat paired). */
			for (int k = 0; k < nw; k++)
				for (int l = k + 1; l < nw; l++) {
					double se = stats_paired_log_se(W[k].s, W[l].s, W[k].n < W[l].n ? W[k].n : W[l].n);
					if (!(se <= M_SQRT2 * target))
						settled = 0;
					if (!(se <= M_SQRT2 * NOISY_SEM))
						noisy = 1;
				}
		} else
			for (int k = 0; k < nw; k++) {
				struct stats st;
				stats_summarize(W[k].s, W[k].n, &st);
				if (stop_median ? !(stats_median_se(W[k].s, W[k].n) <= target * st.median) : !(st.sem <= target * st.mean))
					settled = 0;
				if (!(st.sem <= NOISY_SEM * st.mean))
					noisy = 1;
			}
		if (settled)
			break;
		/* Past the budget, a GPU role whose batches spread far more than
		 * usual (a transient, not the kernel) gets more of them, up to
		 * twice what it had: on an H200 one copy in 20 of an A/A came out
		 * at 1.011 because 3 of the kept seed's 6 batches ran slow (its
		 * SEM 0.96 % of its mean; the other 79 role-sizes of that bench
		 * at most 0.36 %, 95 % of them under 0.33 %; docs/gpu.md). */
		if (proc_now() - t0 > budget) {
			if (!extend_to && gpu && noisy)
				extend_to = 2 * have < max_runs ? 2 * have : max_runs, extended = 1;
			if (have >= extend_to || !noisy)
				break;
		}
	}
	last_timed = proc_now();
	if (gpu) { /* the median of its SM clock readings */
		json_t *sm = range_of(&S, offsetof(struct dev_state, sm_mhz));
		last_sm_mhz = sm ? json_number_value(json_object_get(sm, "median")) : NAN;
		json_decref(sm);
	}
	progress("timed: %zu batches of %u calls each in %.3f s%s (inputs %.3f, batches %.3f, probe and state %.3f, "
		 "checks %.3f)", W[0].n, n, proc_now() - t0, extended ? ", extended past the budget (noisy)" : "",
		 spent[0], spent[1], spent[2], spent[3]);
	/* The two checks on the timing itself (work left running after "done",
	 * work the default stream's events do not see) are evidence about an
	 * attempt, not about a call's result: on an H100 the first 2 of 64
	 * honest softmax children failed the cross-check (3.0 and 2.1 ms beyond
	 * the events in batches of 22 and 15 ms) while a pipeline started, the
	 * next 62 saw 0.02-0.04 ms (docs/gpu.md).  So a failed attempt is timed
	 * again, its batches dropped; a candidate is condemned only when
	 * XCHECK_TRIES attempts in a row fail.  The verdict stands on the last
	 * attempt alone, so a kernel that cheats in some attempts gains nothing
	 * from the one it passed honestly; the exchange's cost and the idle
	 * probe are not measured again, so work a failed attempt left running
	 * cannot inflate them (a larger cost subtracted from every role would
	 * raise a faster kernel's ratio). */
	int busy = W[0].busy * 10 > W[0].n;
	double excess[3] = {0, 0, 0};
	for (int k = 0; k < nw; k++)
		if (W[k].nx) {
			double tmp[W[k].nx > 0 ? W[k].nx : 1];
			memcpy(tmp, W[k].x, W[k].nx * sizeof *tmp);
			excess[k] = median_of(tmp, W[k].nx);
		}
	double per = 0;
	if (W[0].n) {
		double tmp[W[0].n];
		memcpy(tmp, W[0].s, W[0].n * sizeof *tmp);
		per = median_of(tmp, W[0].n) * n;
	}
	int disagree = W[0].nx && stats_xcheck_disagree(excess[0], per);
	if ((busy || disagree) && attempt < XCHECK_TRIES) {
		progress("attempt %d of %d failed (%s: %zu of %zu batches busy after done; %.0f us a batch beyond the events, "
			 "of %.0f us); timing again", attempt, XCHECK_TRIES, busy ? "busy" : "cross-check", W[0].busy, W[0].n,
			 excess[0] * 1e6, per * 1e6);
		attempt++;
		for (int k = 0; k < nw; k++)
			W[k].n = W[k].nx = W[k].busy = W[k].nsplit = W[k].woken = W[k].elsewhere = 0;
		goto retime;
	}
	if (busy) {
		*fail_res = json_pack("{s:b, s:s, s:i}", "ok", 0, "status", ST_WRONG, "attempts", attempt);
		json_object_set_new(*fail_res, "message",
				    json_sprintf("the GPU was still busy after the candidate said it was done, in %zu of %zu "
						 "batches (a probe waited up to %.0f us), in each of %d attempts: work left "
						 "running outside the call",
						 W[0].busy, W[0].n, maxprobe * 1e6, attempt));
		goto out;
	}
	/* The cross-check, on medians (single batches jitter by a context
	 * switch): the device's events on the default stream must account for
	 * nearly all of what the judge's clock saw. */
	if (disagree) {
		*fail_res = json_pack("{s:b, s:s, s:i}", "ok", 0, "status", ST_WRONG, "attempts", attempt);
		json_object_set_new(*fail_res, "message",
				    json_sprintf("timing cross-check failed in each of %d attempts: the judge's clock saw %.0f us "
						 "per batch of %u calls beyond the device's events on the default stream (median "
						 "of %zu batches, of %.0f us): work left on another stream?",
						 attempt, excess[0] * 1e6, n, W[0].nx, per * 1e6));
		goto out;
	}
	res = json_pack("{s:O, s:i, s:f, s:f}", "size", size, "batch_calls", (int)n, "overhead_us", ovh * 1e6, "arena_mb",
			floor(arena_mb));
	if (gpu)
		json_object_set_new(res, "probe_us", json_pack("{s:f, s:f}", "idle", idle_probe * 1e6, "max", maxprobe * 1e6));
	struct stats st[3];
	double share = 0; /* the exchange's largest share of a role's median batch */
	for (int k = 0; k < nw; k++) {
		json_object_set_new(res, W[k].name, summary(&W[k], &st[k], n));
		share = fmax(share, stats_exchange_share(ovh, st[k].median, n));
	}
	json_object_set_new(res, "exchange_share", json_real(share));
	/* Each speedup with its 95 % interval: the medians' standard errors
	 * (order statistics of the batches) and the method's own spread between
	 * judges (job "noise"; ktime --noise), in quadrature. */
	double noise = jnum(o, "noise", gpu ? 0.004 : 0.05);
	for (int k = 1; k < nw; k++) {
		double a = stats_median_log_se(W[k].s, W[k].n), b = stats_median_log_se(W[0].s, W[0].n);
		double r = st[k].median / st[0].median, se = sqrt(a * a + b * b + noise * noise);
		const char *key = W[k].kid == K_BASE ? "speedup_vs_baseline" : "speedup_vs_seed";
		char ci[64];
		json_object_set_new(res, key, json_real(r));
		snprintf(ci, sizeof ci, "%s_ci", key);
		if (isfinite(se))
			json_object_set_new(res, ci, json_pack("[f, f]", r * exp(-1.96 * se), r * exp(1.96 * se)));
	}
	if (an) {
		/* The seed ran beside the candidate (when the task has one): the
		 * baseline's anchor is carried over by the seed's drift since. */
		double scale = seed_w > 0 && an->seed_med > 0 ? st[seed_w].median / an->seed_med : 1;
		if (an->base) {
			json_object_set_new(res, "baseline", json_deep_copy(an->base));
			json_object_set_new(res, "speedup_vs_baseline", json_real(an->base_med * scale / st[0].median));
		}
		if (an->seed && seed_w < 0) {
			json_object_set_new(res, "seed", json_deep_copy(an->seed));
			json_object_set_new(res, "speedup_vs_seed", json_real(an->seed_med / st[0].median));
		}
		json_object_set_new(res, "anchor", json_pack("{s:b, s:i, s:f, s:I, s:f}", "cached", 1, "uses", an->uses,
							      "age_s", proc_now() - an->at, "measured_in_job",
							      (json_int_t)an->job, "seed_drift", scale));
	}
	double fl = task_formula(t, "flops", size), by = task_formula(t, "bytes", size);
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
	const char *unit = json_string_value(json_object_get(t->json, "flops_unit"));
	int fp32 = !unit || strcmp(unit, "fp32") == 0;
	if (unit)
		json_object_set_new(res, "flops_unit", json_string(unit));
	double pf = fp32 ? jnum(J->peak, "sgemm_gflops", 0) : 0, pb = jnum(J->peak, "copy_gbps", 0);
	if (isfinite(fl) && pf > 0)
		json_object_set_new(res, "pct_peak_flops", json_real(100 * fl / st[0].median / 1e9 / pf));
	if (isfinite(by) && pb > 0)
		json_object_set_new(res, "pct_peak_bw", json_real(100 * by / st[0].median / 1e9 / pb));
	for (int k = 0; k < nw; k++)
		if (W[k].nx)
			json_object_set_new(json_object_get(res, W[k].name), "xcheck_excess_us", json_real(excess[k] * 1e6));
	/* Where each role's exchanges went by its child's own clock: from the
	 * request to the child seeing it (its wake-up from the stop), and from
	 * its end to the judge seeing "done" — the child's word, for reading
	 * a timing, never in a figure (docs/record.md). */
	for (int k = 0; k < nw; k++)
		if (W[k].nsplit) {
			double wk = median_of(W[k].wake, W[k].nsplit), tl = median_of(W[k].tail, W[k].nsplit);
			json_object_set_new(json_object_get(res, W[k].name), "child_clock_us",
					    json_pack("{s:f, s:f}", "to_request", wk * 1e6, "after_done", tl * 1e6));
			progress("%s: by its child's clock, %.1f us to see a request, %.1f us from its end to done seen (medians of %zu)",
				 W[k].name, wk * 1e6, tl * 1e6, W[k].nsplit);
			if (W[k].woken) {
				json_object_set_new(json_object_get(res, W[k].name), "woken_cpu",
						    json_pack("{s:I, s:I}", "batches", (json_int_t)W[k].woken, "elsewhere",
							      (json_int_t)W[k].elsewhere));
				progress("%s: its CPU woken first for %zu batches, seen on another in %zu (its word)", W[k].name,
					 W[k].woken, W[k].elsewhere);
			}
		}
	json_object_set_new(res, "converged", json_boolean(W[0].n < max_runs && proc_now() - t0 <= budget));
	if (stop_median || stop_paired)
		json_object_set_new(res, "stop_stat", json_string(stop_stat));
	if (attempt > 1)
		json_object_set_new(res, "attempts", json_integer(attempt));
	if (extended)
		json_object_set_new(res, "extended", json_true());
	if ((ds = states_json(&S)))
		json_object_set_new(res, "device_state", ds);
out:
	states_free(&S);
	for (int k = 0; k < nw; k++) {
		free(W[k].s);
		free(W[k].x);
		free(W[k].wake);
		free(W[k].tail);
		W[k].s = W[k].x = W[k].wake = W[k].tail = NULL;
	}
	for (int i = 0; priv && i < t->nargs; i++)
		if (priv[i])
			J->d->release(priv[i]);
	free(priv);
	free(seeds);
	arrays_free(&A);
	if (!res && !*fail_res && J->fail) {
		*fail_res = J->fail;
		J->fail = NULL;
	}
	return res;
}

/* The log standard error a size's interval stands for (NAN: none). */
static double ci_se(const json_t *size, const char *key, double r)
{
	const json_t *ci = json_object_get(size, key);
	double hi = json_number_value(json_array_get(ci, 1));
	return json_array_size(ci) == 2 && hi > 0 && r > 0 ? log(hi / r) / 1.96 : NAN;
}

/* The geometric mean's interval, when every size has one. */
static void geo_ci(json_t *r, const char *key, double g, const double *se, size_t n, double noise)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(se[i]))
			return;
	double lo, hi;
	stats_geomean_ci(g, se, n, noise, &lo, &hi);
	if (isfinite(lo) && isfinite(hi))
		json_object_set_new(r, key, json_pack("[f, f]", lo, hi));
}

static json_t *time_all(struct job *J, char *e)
{
	struct who W[3] = {{.kid = K_CAND, .name = "candidate"}};
	int nw = 1;
	const json_t *j = J->j;
	if (J->have[K_BASE])
		W[nw++] = (struct who){.kid = K_BASE, .name = "baseline"};
	if (J->have[K_SEED])
		W[nw++] = (struct who){.kid = K_SEED, .name = "seed"};
	const json_t *seeds = json_object_get(j, "seeds");
	json_t *sizes = json_array();
	size_t i;
	json_t *size;
	double sb[64], ss[64], seb[64], ses[64];
	size_t nsb = 0, nss = 0, k = 0;
	if (J->d->peak)
		J->peak = J->d->peak();
	/* Peaks the user gives (ktime --peak-gbps, --peak-gflops,
	 * --peak-dram-gbps) stand in for the measured ones (a CPU has none
	 * measured); the record says which. */
	double given_gb = jnum(j, "peak_gbps", 0), given_gf = jnum(j, "peak_gflops", 0), given_dram = jnum(j, "peak_dram_gbps", 0);
	if (given_gb > 0 || given_gf > 0 || given_dram > 0) {
		if (!json_is_object(J->peak)) {
			json_decref(J->peak);
			J->peak = json_object();
		}
		if (given_gb > 0)
			json_object_set_new(J->peak, "copy_gbps", json_real(given_gb));
		if (given_gf > 0)
			json_object_set_new(J->peak, "sgemm_gflops", json_real(given_gf));
		if (given_dram > 0)
			json_object_set_new(J->peak, "dram_gbps", json_real(given_dram));
		json_object_set_new(J->peak, "given", json_true());
	}
	int anchoring = anchor_every(J) > 0 && nw > 1; /* anchors: a judge that serves many jobs */
	/* A size where --stop-slower stopped the candidate is left there, and
	 * the others are still timed: a kernel far behind at one size may be
	 * the best at another, and the composer takes per-size winners. */
	json_t *slow = json_array();
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
		int rc = 0;
		if (!dev_checks(J)) { /* else time_size checks the candidate's first calls */
			progress("check before timing %s", sz);
			rc = check(J, size, 1, s1, &mm, e);
		}
		if (rc == 0) {
			/* The anchor of this size, where the job asks for them (anchor_every). */
			char key[1024];
			snprintf(key, sizeof key, "%s|%s|%s|%s|%d|%g", J->t->name, sz,
				 J->have[K_BASE] ? json_string_value(json_object_get(j, "baseline")) : "-",
				 J->have[K_SEED] ? json_string_value(json_object_get(j, "seed")) : "-", J->nrep[K_CAND],
				 jnum(j, "batch_s", 0));
			struct anchor *an = anchoring ? anchor_find(key) : NULL;
			const char *why = "none yet";
			if (an && !anchor_valid(J, an, &why))
				an = NULL;
			if (an)
				an->uses++;
			/* Anchored: the candidate and the seed, interleaved (the
			 * candidate timed alone ran 0.4 % faster than beside the
			 * other roles, docs/gpu.md); the baseline from the anchor. */
			struct who Wa[2] = {W[0]};
			int nwa = 1;
			for (int q = 1; q < nw; q++)
				if (W[q].kid == K_SEED)
					Wa[nwa++] = W[q];
			if (an)
				progress("time %s: the candidate%s, against the anchor of job %ld (use %d)", sz,
					 nwa > 1 ? " and the seed" : " alone", an->job, an->uses);
			else
				progress("time %s", sz);
			json_t *fail_res = NULL;
			long wa0, wl0, wa1, wl1;
			hot_counts(&wa0, &wl0);
			json_t *r = an ? time_size(J, Wa, nwa, size, s2, e, &fail_res, an) : time_size(J, W, nw, size, s2, e, &fail_res, an);
			char moved[128] = "";
			if (r && an && state_moved(r, an, moved, sizeof moved)) {
				progress("time %s: the device's state moved from the anchor's (%s); every role, a new anchor", sz, moved);
				json_decref(r);
				an = NULL, why = "device state changed";
				r = time_size(J, W, nw, size, s2, e, &fail_res, NULL);
			}
			hot_counts(&wa1, &wl1);
			if (r && hot_on()) {
				progress("time %s: the children's CPUs woken %ld times, %ld not in time", sz, wa1 - wa0, wl1 - wl0);
				json_object_set_new(r, "cpu_wakes", json_pack("{s:I, s:I}", "asked", (json_int_t)(wa1 - wa0),
										"late", (json_int_t)(wl1 - wl0)));
			}
			/* A confirmation (ktime --retime) times a few batches: never an anchor. */
			if (r && !an && anchoring && !json_is_true(json_object_get(j, "confirm"))) {
				anchor_store(key, r, (uint32_t)json_integer_value(json_object_get(r, "batch_calls")), nw);
				json_object_set_new(r, "anchor", json_pack("{s:b, s:s}", "cached", 0, "why", why));
				if (moved[0])
					json_object_set_new(json_object_get(r, "anchor"), "moved", json_string(moved));
			}
			if (!r && fail_res && json_is_object(json_object_get(fail_res, "slow"))) {
				json_array_append(slow, json_object_get(fail_res, "slow"));
				json_decref(fail_res);
				continue;
			}
			if (!r) {
				json_decref(sizes);
				json_decref(slow);
				json_decref(J->peak);
				return fail_res ? fail_res : failure(J, sz, e);
			}
			json_array_append_new(sizes, r);
			double v = json_number_value(json_object_get(r, "speedup_vs_baseline"));
			if (v > 0 && nsb < 64) {
				seb[nsb] = ci_se(r, "speedup_vs_baseline_ci", v);
				sb[nsb++] = v;
			}
			v = json_number_value(json_object_get(r, "speedup_vs_seed"));
			if (v > 0 && nss < 64) {
				ses[nss] = ci_se(r, "speedup_vs_seed_ci", v);
				ss[nss++] = v;
			}
		}
		if (rc != 0) {
			json_decref(sizes);
			json_decref(slow);
			json_decref(J->peak);
			if (rc < 0)
				return failure(J, sz, e);
			json_t *r = json_pack("{s:b, s:s, s:o}", "ok", 0, "status", ST_WRONG, "mismatch", mm);
			json_object_set_new(r, "message", json_sprintf("wrong at benchmark size %s (arg %s): %s", sz,
					    json_string_value(json_object_get(mm, "arg")),
					    json_string_value(json_object_get(mm, "reason"))));
			return r;
		}
	}
	json_t *r = json_pack("{s:b, s:s, s:o, s:i, s:s}", "ok", 1, "status", "ok", "sizes", sizes, "checks", J->checks,
			      "method", "judge");
	json_t *imp = harness_implausible(sizes, J->peak);
	if (imp)
		json_object_set_new(r, "implausible", imp);
	double noise = jnum(j, "noise", J->d->probe ? 0.004 : 0.05);
	if (json_array_size(slow)) {
		/* status slow: the sizes it was stopped at in slow_sizes (the
		 * first also in slow), those it finished in sizes; no speed-up
		 * over all sizes, which it has not got. */
		const json_t *f = json_array_get(slow, 0);
		char sz[256];
		task_size_str(json_object_get(f, "size"), sz, sizeof sz);
		json_object_set_new(r, "ok", json_false());
		json_object_set_new(r, "status", json_string(ST_SLOW));
		json_object_set(r, "slow", (json_t *)f);
		json_object_set_new(r, "slow_sizes", slow);
		char why[128] = "";
		if (json_is_true(json_object_get(f, "beyond_doubt")))
			snprintf(why, sizeof why, " (beyond doubt: its fastest batch against the seed's slowest below the bound / %g)",
				 jnum(f, "far_factor", 0));
		json_object_set_new(r, "message",
				    json_sprintf("far slower than the best: %.3fx the seed at size %s after %g batches%s, below "
						 "the bound %.3fx; timing stopped there (%zu of %zu sizes stopped, %zu timed)",
						 jnum(f, "speedup_vs_seed", 0), sz, jnum(f, "batches", 0), why, jnum(f, "bound", 0),
						 json_array_size(slow), json_array_size(slow) + json_array_size(sizes),
						 json_array_size(sizes)));
		nsb = nss = 0;
	} else {
		json_decref(slow);
	}
	if (nsb) {
		double g = stats_geomean(sb, nsb);
		json_object_set_new(r, "speedup_vs_baseline", json_real(g));
		geo_ci(r, "speedup_vs_baseline_ci", g, seb, nsb, noise);
	}
	if (nss) {
		double g = stats_geomean(ss, nss);
		json_object_set_new(r, "speedup_vs_seed", json_real(g));
		geo_ci(r, "speedup_vs_seed_ci", g, ses, nss, noise);
	}
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

/*
 * What a judge that serves many jobs (kharness --serve) keeps between them
 * (harness_keep): the arena — one place in device memory for the judge's
 * life, so that timings of different jobs see the same placement (docs/gpu.md:
 * where a GiB-sized arena lies moved whole runs by up to 10 %) — and the
 * baseline's, seed's and calibration child processes, which only ever run
 * the task's own trusted objects: a job whose roles name the same objects
 * takes them over instead of starting its own (0.4 s on an H100).  A
 * candidate's child is never kept.  Processes are retired after KEEP_USES
 * jobs (their CPU-time limit is per process), and everything is dropped
 * after a job that did not end well (the judge then leaves anyway).
 *
 * The spare: after a job that ended well, a candidate child is started
 * without a library (JCTL_LATER) — its device context, its filter — so the
 * next job's candidate is loaded into it instead of waiting for a new
 * process (the context alone took 0.17 s of each kverify and ktime job on
 * an H100, docs/gpu.md).  It has run nothing before the candidate, and it
 * is used once: still one fresh process per candidate.
 */
#define KEEP_USES 32
static struct keep {
	int on;
	int arena_fd;
	unsigned char *arena;
	size_t arena_bytes;
	unsigned char handle[64];
	struct kid kid[NKIDS][KID_REPLICAS];
	int n[NKIDS], uses[NKIDS];
	char lib[NKIDS][4096];
	/* The spare: a candidate child without a library yet (above).  One:
	 * with two, the one a job took was ready, but the other, started after
	 * the last answer, made its device context while the job timed, and on
	 * an H100 the seed's median in a confirmation of a cached candidate
	 * came out 4 to 18 % slower than in its earlier timing (7 of 8 matmul
	 * confirmations disagreed; docs/gpu.md).  Waiting for the one spare to
	 * be ready (0.09 to 0.23 s of such a job) keeps its start out of the
	 * timing. */
	struct kid spare;
	int spare_on;
	int spare_ready;               /* waited for already (harness_spare_now): stopped, ready */
	struct kid_opts spare_ko;      /* what it was started with (its lib: JCTL_LATER) */
	int spare_want;                /* start one after this job's answer (harness_after_job), with: */
	struct kid_opts spare_want_ko;
	int spare_asked;               /* this (or the last) job said "spare_asked": only harness_spare_now starts it */
	/* Such a job's candidate children, stopped since its answer: ended by
	 * harness_spare_now, under the caller's lock, or else before the next job. */
	struct kid done[KID_REPLICAS];
	int ndone;
} K = {.arena_fd = -1};

static void done_end(void)
{
	for (int r = 0; r < K.ndone; r++)
		kid_end(&K.done[r]);
	K.ndone = 0;
}

static void spare_drop(void)
{
	if (K.spare_on)
		kid_end(&K.spare);
	K.spare_on = 0, K.spare_ready = 0;
}

/* After a job that ended well: a spare for the next one, started with the
 * options this job's candidate had (ko). */
static void spare_start(const struct kid_opts *ko)
{
	char e[ERRBUF];
	if (!K.on || K.spare_on)
		return;
	K.spare_ko = *ko;
	K.spare_ko.lib = JCTL_LATER;
	K.spare_ready = 0;
	if (kid_spawn(&K.spare, kid_role[K_CAND], &K.spare_ko, e) == 0)
		K.spare_on = 1;
	else
		kid_end(&K.spare); /* no spare: the next job starts its own */
}

void harness_after_job(void)
{
	if (K.spare_want && !K.spare_asked) {
		spare_start(&K.spare_want_ko);
		K.spare_want = 0;
	}
}

const char *harness_spare_now(double deadline, char *e)
{
	e[0] = '\0';
	if (!K.spare_want || K.spare_on) {
		done_end();
		return K.spare_on ? "ready" : "none";
	}
	K.spare_want = 0;
	spare_start(&K.spare_want_ko);
	done_end(); /* while the spare starts */
	if (!K.spare_on) {
		errf(e, "the spare could not be started");
		return "failed";
	}
	if (kid_ready(&K.spare, deadline, e) < 0) {
		spare_drop();
		return "failed";
	}
	K.spare_ready = 1;
	return "ready";
}

/* The spare as this job's candidate child, where it was started as this
 * job would start one (same program, arena, CPU limit; one process) and is
 * ready now — one that died or never came up is no fault of this job's
 * candidate: it gets a child of its own instead. */
static int spare_take(struct job *J, int procs)
{
	const struct kid_opts *a = &K.spare_ko, *b = &J->ko;
	char e[ERRBUF];
	/* One made ready already (harness_spare_now) is stopped: kid_ready
	 * would wait for a stop that was reported before; only its death is news. */
	if (!K.on || !K.spare_on || procs != 1 || K.spare.dead || a->arena_fd != b->arena_fd || a->cpu_s != b->cpu_s ||
	    strcmp(a->self, b->self) != 0 || (K.spare_ready ? !kid_alive(&K.spare) : kid_ready(&K.spare, J->deadline, e) < 0)) {
		spare_drop();
		return 0;
	}
	J->kid[K_CAND][0] = K.spare;
	J->nrep[K_CAND] = 1, J->have[K_CAND] = 1, J->spare = 1;
	J->reused[K_CAND] = 1; /* ready and stopped already: kids_ready passes it */
	K.spare_on = 0, K.spare_ready = 0;
	return 1;
}

/* The candidate's library into the spare (after kids_ready; its
 * constructors run now, under its filter, as they would at a start). */
static json_t *spare_load(struct job *J, char *e)
{
	const char *lib = json_string_value(json_object_get(J->j, "candidate"));
	struct kid *k = &J->kid[K_CAND][0];
	if (!lib || strlen(lib) >= sizeof k->c->lib)
		return fault(ST_CRASHED, "the candidate's path does not fit the control page");
	memset(k->c->lib, 0, sizeof k->c->lib);
	memcpy(k->c->lib, lib, strlen(lib));
	double wall;
	int rc = kid_request(k, JOP_LOAD, J->spin_s, J->deadline, &wall, e);
	if (rc == 0)
		return NULL;
	if (rc == -2) {
		char tail[300];
		kid_log_tail(k, tail, sizeof tail);
		errf(e, "candidate did not start in time%s%s", tail[0] ? "; last: " : "", tail);
	}
	J->have[K_CAND] = 0;
	kid_end(k);
	return fault(ST_CRASHED, e);
}

void harness_keep(int on) { K.on = on; }

/* Drop role w's kept processes. */
static void keep_drop(int w)
{
	for (int r = 0; r < K.n[w]; r++)
		kid_end(&K.kid[w][r]);
	K.n[w] = K.uses[w] = 0;
	K.lib[w][0] = '\0';
}

/* Role w's processes for a job (lib, procs of them), from the kept ones
 * when they run the same object; 1 when taken over. */
static int keep_take(struct job *J, int w, const char *lib, int procs)
{
	if (!K.on || K.n[w] == 0)
		return 0;
	if (K.n[w] != procs || strcmp(K.lib[w], lib ? lib : "") != 0 || K.uses[w] >= KEEP_USES) {
		keep_drop(w);
		return 0;
	}
	for (int r = 0; r < procs; r++)
		J->kid[w][r] = K.kid[w][r];
	J->nrep[w] = procs, J->have[w] = 1, J->reused[w] = 1;
	K.n[w] = 0;
	K.uses[w]++;
	return 1;
}

/* After the job: keep what may be kept (ok: the job ended well), end the rest. */
static void keep_put(struct job *J, int ok)
{
	/* The candidate's children end here, before the answer: their device
	 * contexts torn down after it, outside the tool's GPU lock, disturbed
	 * the other stage's timing (on an H100 a cached softmax candidate's
	 * confirmation disagreed with its earlier timing 18 times in 24 where
	 * the stages ran side by side, against 0 in 24 with this order;
	 * docs/gpu.md) — unless the job's caller asks for the spare under its
	 * lock (spare_asked): then they end there, stopped until then, and
	 * their 0.06 s is not part of the answer's time. */
	int later = K.on && ok && K.spare_asked;
	for (int w = 0; w < NKIDS; w++)
		for (int r = 0; r < J->nrep[w]; r++) {
			if (later && w == K_CAND && J->have[w] && !J->kid[w][r].dead && K.ndone < KID_REPLICAS) {
				K.done[K.ndone++] = J->kid[w][r];
				continue;
			}
			if (!(K.on && ok && w != K_CAND && J->have[w] && !J->kid[w][r].dead))
				kid_end(&J->kid[w][r]);
		}
	for (int w = K_BASE; w < NKIDS; w++) {
		if (!(K.on && ok && J->have[w]))
			continue;
		int alive = 1;
		for (int r = 0; r < J->nrep[w]; r++)
			alive &= !J->kid[w][r].dead;
		if (!alive) {
			for (int r = 0; r < J->nrep[w]; r++)
				kid_end(&J->kid[w][r]);
			continue;
		}
		for (int r = 0; r < J->nrep[w]; r++)
			K.kid[w][r] = J->kid[w][r];
		K.n[w] = J->nrep[w];
		if (!J->reused[w])
			K.uses[w] = 0;
		const char *lib = w == K_BASE ? json_string_value(json_object_get(J->j, "baseline"))
				  : w == K_SEED ? json_string_value(json_object_get(J->j, "seed")) : "";
		snprintf(K.lib[w], sizeof K.lib[w], "%s", lib ? lib : "");
	}
	if (!(K.on && ok)) {
		for (int w = 0; w < NKIDS; w++)
			keep_drop(w);
		spare_drop();
	}
}

/* Every child of the job maps the arena as it is now (a new child, or a kept
 * one from before the arena grew). */
static json_t *kids_map(struct job *J, char *e)
{
	for (int w = 0; w < NKIDS; w++)
		for (int r = 0; J->have[w] && r < J->nrep[w]; r++) {
			struct jctl *c = J->kid[w][r].c;
			if (!J->arena_bytes || c->arena_bytes == J->arena_bytes)
				continue;
			c->arena_bytes = J->arena_bytes;
			memcpy(c->handle, J->handle, sizeof J->handle);
			double wall;
			int rc = kid_request(&J->kid[w][r], JOP_MAP, J->spin_s, J->deadline, &wall, e);
			if (rc < 0) {
				J->cur[w] = r;
				kid_failed(J, w, rc, e);
				json_t *f = J->fail;
				J->fail = NULL;
				return f;
			}
		}
	return NULL;
}

/* Start the children this job needs, all at once (kids_ready waits for
 * them): in time mode each timed role "processes" times (struct job). */
static json_t *spawn_kids(struct job *J, int timing, char *e)
{
	const char *lib[NKIDS] = {json_string_value(json_object_get(J->j, "candidate")),
				  timing ? json_string_value(json_object_get(J->j, "baseline")) : NULL,
				  timing ? json_string_value(json_object_get(J->j, "seed")) : NULL, NULL};
	int want[NKIDS] = {1, lib[K_BASE] != NULL, lib[K_SEED] != NULL, timing};
	int procs = timing ? (int)jnum(J->j, "processes", 1) : 1;
	procs = procs < 1 ? 1 : procs > KID_REPLICAS ? KID_REPLICAS : procs;
	for (int w = 0; w < NKIDS; w++) {
		if (!want[w])
			continue;
		if (w != K_CAND && keep_take(J, w, lib[w], w == K_CAL ? 1 : procs))
			continue;
		if (w == K_CAND && spare_take(J, procs))
			continue;
		struct kid_opts ko = J->ko;
		ko.lib = lib[w];
		J->have[w] = 1;
		J->cand_started |= w == K_CAND;
		for (int r = 0; r < (w == K_CAL ? 1 : procs); r++) {
			J->nrep[w] = r + 1; /* kid_end releases even a half-started one */
			if (kid_spawn(&J->kid[w][r], kid_role[w], &ko, e) < 0)
				return fault(ST_CRASHED, e);
		}
	}
	return NULL;
}

static json_t *kids_ready(struct job *J, char *e)
{
	for (int w = 0; w < NKIDS; w++)
		for (int r = 0; J->have[w] && !J->reused[w] && r < J->nrep[w]; r++)
			if (kid_ready(&J->kid[w][r], J->deadline, e) < 0) {
				J->have[w] = 0;
				return fault(ST_CRASHED, e);
			}
	progress("children ready (%d process%s per timed role%s%s%s)", J->nrep[K_CAND], J->nrep[K_CAND] > 1 ? "es" : "",
		 J->reused[K_BASE] ? "; baseline" : "", J->reused[K_SEED] ? "; seed" : "",
		 J->reused[K_BASE] || J->reused[K_SEED] ? " kept from an earlier job" : "");
	return NULL;
}

/* The children's own output, last bytes of each, into the judge's log. */
static void kids_log(struct job *J)
{
	for (int w = 0; w < NKIDS; w++)
		for (int r = 0; r < J->nrep[w]; r++) {
			if (!J->kid[w][r].c)
				continue;
			char tail[2048], who[48];
			kid_log_text(&J->kid[w][r], tail, sizeof tail);
			snprintf(who, sizeof who, J->nrep[w] > 1 ? "%s (process %d)" : "%s", kid_role[w], r + 1);
			if (tail[0])
				fprintf(stderr, "kharness: %s's output (last %zu bytes):\n%s\n", who, strlen(tail), tail);
		}
}

/* A failure of the judge's own device or memory.  Before any code of the
 * candidate ran (no child started with its library: on a GPU the judge
 * starts its device, and timing its arena, first), the machine's, not the
 * candidate's — crashed with "transient" (docs/record.md), which the
 * pipelines' fix pass leaves alone and a reprocess judges again; before, a
 * GPU that could not make a context or hold the arena marked every
 * candidate as its own crash.  After a child loaded the candidate (a device
 * without a probe: the children start beside the judge's), its code may
 * have taken the device (all its memory, say): crashed, as any crash of its
 * own. */
static json_t *machine_fault(const struct job *J, const char *what, const char *e)
{
	char m[ERRBUF + 96];
	if (J->cand_started) {
		snprintf(m, sizeof m, "the judge's %s: %s (after the candidate's child had started)", what, e);
		return fault(ST_CRASHED, m);
	}
	snprintf(m, sizeof m, "the judge's %s: %s (the machine's, not the candidate's)", what, e);
	json_t *f = fault(ST_CRASHED, m);
	json_object_set_new(f, "transient", json_true());
	return f;
}

/* The judge's device, once per process: a judge that serves many jobs
 * (kharness --serve) keeps its context between them.  NULL when ready, else
 * the failure's result. */
static json_t *dev_ready(const struct dev_ops *d, const struct job *J, char *e)
{
	static const struct dev_ops *ready;
	int irc = !d->init || ready == d ? 0 : d->init(e);
	if (irc == 0) {
		ready = d;
		return NULL;
	}
	if (irc == -2) {
		char m[ERRBUF + 16];
		snprintf(m, sizeof m, "unsupported: %s", e);
		return fault(ST_UNSUPPORTED, m);
	}
	return machine_fault(J, "device did not start", e);
}

json_t *harness_run(const struct dev_ops *d, const json_t *job, const char *self, char *e)
{
	const char *mode = json_string_value(json_object_get(job, "mode"));
	const char *tname = json_string_value(json_object_get(job, "task"));
	t_start = proc_now();
	jobs_served++;
	done_end(); /* the last job's candidate, where its spare was not asked for */
	/* Not dumpable: a child cannot ptrace the judge or open its /proc files. */
	prctl(PR_SET_DUMPABLE, 0);
	if (!mode || !tname) {
		errf(e, "job needs \"mode\" and \"task\"");
		return NULL;
	}
	if (strcmp(mode, "verify") != 0 && strcmp(mode, "time") != 0) {
		errf(e, "unknown mode \"%s\"", mode);
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
	if (!json_string_value(json_object_get(job, "candidate"))) {
		errf(e, "job has no candidate");
		return NULL;
	}
	if (json_object_get(job, "reference_dev") &&
	    !(J.ref_dev = load_fn(json_string_value(json_object_get(job, "reference_dev")), e)))
		return NULL;
	rng_seed(&J.rng, rng_os_seed());
	J.deadline = proc_now() + jnum(job, "timeout_s", 86400);
	J.spin_s = d->probe ? 1.0 : 0; /* GPU: the round trip is timed, so spin */
	/* CPU seconds: the whole deadline on every core, a backstop only. */
	double cpu = jnum(job, "timeout_s", 86400) * (double)sysconf(_SC_NPROCESSORS_ONLN) + 10;
	if (K.arena_fd < 0)
		K.arena_fd = memfd_create("ksci-arena", MFD_CLOEXEC);
	J.ko = (struct kid_opts){.self = self, .arena_fd = K.arena_fd, .cpu_s = cpu < 1e9 ? (long)cpu : 0};
	if (J.ko.arena_fd < 0)
		return fault(ST_CRASHED, "memfd_create failed");
	if (K.on && K.arena) { /* the kept arena (struct keep) */
		J.arena = K.arena, J.arena_bytes = K.arena_bytes;
		memcpy(J.handle, K.handle, sizeof J.handle);
	}
	int timing = strcmp(mode, "time") == 0;
	/* ktime --wake-cpu (judge/hot.h): GPU timing only — a host back end's
	 * children are many threads, and verifying times nothing. */
	const char *wv = json_string_value(json_object_get(job, "wake_cpu"));
	int wake = 0; /* off, also for a word it does not know */
	for (int i = 0; timing && d->probe && wv && hot_modes[i]; i++)
		if (strcmp(wv, hot_modes[i]) == 0)
			wake = i;
	if (wake && !hot_started() && hot_init() == 0)
		progress("a child's CPU is woken before each request%s", wake == 2 ? ", and the child pinned to it until asked" : "");
	hot_enable(wake);
	/* On a GPU: the judge's device first, before any child has a context
	 * or memory of its own — and timing, its whole arena too.  Where in
	 * device memory the arena lands moved softmax 4096x4096 between 72 and
	 * 96 us for every role alike (rows of 16 KiB; 32768x1000 did not move),
	 * and with the arena allocated after the children it depended on how
	 * many there were (ktime --processes 1, 2, 3: 79.3, 95.5, 72.7 us;
	 * docs/gpu.md, "where the arena lies").  Verifying, so that the judge's
	 * device failing to start is the machine's failure (machine_fault), not
	 * the candidate's crash, which a child whose code ran beside it would
	 * make it: at the cost of starting the children after the judge's
	 * context, not beside it, in a judge's first job. */
	int early = d->probe != NULL;
	json_t *r = early ? dev_ready(d, &J, e) : spawn_kids(&J, timing, e);
	if (!r && early && timing && !J.arena) { /* time_size takes its size from it */
		double mb = jnum(job, "arena_mb", 0);
		if (arena_ensure(&J, (size_t)((mb > 0 ? mb : arena_default_mb(&J)) * 1048576.0), e) < 0)
			r = machine_fault(&J, "arena could not be made", e);
		else
			progress("arena ready: %zu bytes", J.arena_bytes);
	}
	/* Otherwise the children start their devices while the judge starts its own. */
	if (!r)
		r = early ? spawn_kids(&J, timing, e) : dev_ready(d, &J, e);
	if (!r) {
		progress("%s ready", d->name);
		r = kids_ready(&J, e);
	}
	if (!r && J.spare) {
		r = spare_load(&J, e);
		if (!r)
			progress("candidate loaded into the spare child");
	}
	if (!r)
		r = kids_map(&J, e);
	if (!r)
		r = timing ? time_all(&J, e) : verify(&J, e);
	kids_log(&J);
	const char *st = json_string_value(json_object_get(r, "status"));
	int ok = st && (strcmp(st, "ok") == 0 || strcmp(st, ST_WRONG) == 0 || strcmp(st, ST_SLOW) == 0);
	if (json_is_object(r))
		json_object_set_new(r, "candidate_child", json_string(J.spare ? "spare" : "fresh"));
	int spare_next = J.have[K_CAND] && J.nrep[K_CAND] == 1;
	K.spare_asked = json_is_true(json_object_get(J.j, "spare_asked"));
	keep_put(&J, ok && !J.fail);
	/* The spare is started after the answer is out (harness_after_job), so
	 * that forking the judge is not part of this job's time. */
	K.spare_want = K.on && ok && !J.fail && spare_next;
	K.spare_want_ko = J.ko;
	if (K.on && ok && !J.fail) {
		K.arena = J.arena, K.arena_bytes = J.arena_bytes;
		memcpy(K.handle, J.handle, sizeof K.handle);
	} else {
		if (J.arena)
			d->unshare(J.arena, J.arena_bytes);
		K.arena = NULL, K.arena_bytes = 0;
		close(K.arena_fd);
		K.arena_fd = -1;
	}
	json_decref(J.fail);
	return r;
}
