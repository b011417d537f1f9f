/*
 * task: task.json is validated once, when loaded, so that later stages can
 * trust it: every argument has a known kind and dtype, every shape evaluates
 * to a non-negative integer at every test and benchmark size, every scalar
 * has a value at every size, and float outputs have a tolerance.
 */
#include "task.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file.h"
#include "expr.h"
#include "rec.h"

const char *task_root(void)
{
	/* A relative root is made absolute: the judge binds it into the
	 * sandbox, where the caller's directory is not (relative-tasks-dir:
	 * kverify --tasks tasks crashed every candidate, bwrap "Can't find
	 * source path tasks"). */
	static char abs[PATH_MAX];
	const char *e = getenv("KSCI_TASKS");
	if (!e || !*e)
		return KSCI_DATADIR "/tasks";
	return e[0] != '/' && realpath(e, abs) ? abs : e;
}

int task_backend_ok(const char *b) { return rec_backend_known(b); }

void task_free(struct task *t)
{
	if (!t)
		return;
	free(t->name);
	free(t->dir);
	free(t->path);
	free(t->args);
	json_decref(t->json);
	free(t);
}

void task_size_str(const json_t *size, char *buf, size_t n)
{
	const char *k;
	json_t *v;
	size_t o = 0;
	buf[0] = '\0';
	json_object_foreach((json_t *)size, k, v)
	{
		if (o >= n)
			break;
		if (json_is_integer(v)) /* exact: "cols=1048576", not %g's "1.04858e+06" (a key: ktime --best-sizes) */
			o += (size_t)snprintf(buf + o, n - o, "%s%s=%lld", o ? " " : "", k, (long long)json_integer_value(v));
		else
			o += (size_t)snprintf(buf + o, n - o, "%s%s=%g", o ? " " : "", k, json_number_value(v));
	}
}

int task_numel(const struct task *t, int i, const json_t *size, int64_t *n, char *errbuf)
{
	const struct task_arg *a = &t->args[i];
	double total = 1;
	size_t k;
	json_t *d;
	json_array_foreach(a->shape, k, d)
	{
		double v;
		if (expr_eval_json(d, size, &v, errbuf) < 0)
			return -1;
		if (v < 0 || v != floor(v))
			return errf(errbuf, "args[%d] \"%s\": shape[%zu] is %g, not a non-negative integer", i, a->name, k, v);
		total *= v;
	}
	if (total > (double)INT64_MAX / 16)
		return errf(errbuf, "args[%d] \"%s\": too many elements", i, a->name);
	*n = (int64_t)total;
	return 0;
}

double task_formula(const struct task *t, const char *field, const json_t *size)
{
	char e[ERRBUF];
	double v;
	json_t *f = json_object_get(t->json, field);
	if (!f || expr_eval_json(f, size, &v, e) < 0)
		return NAN;
	return v;
}

static int parse_kind(const char *s, enum arg_kind *k)
{
	static const char *names[] = {"in", "out", "inout", "scalar"};
	for (int i = 0; i < 4; i++)
		if (s && strcmp(s, names[i]) == 0) {
			*k = (enum arg_kind)i;
			return 0;
		}
	return -1;
}

/* Every size must give each scalar a value and each shape a valid count. */
static int check_sizes(struct task *t, const char *field, char *e)
{
	const json_t *arr = json_object_get(t->json, field);
	if (!json_is_array(arr) || json_array_size(arr) == 0)
		return errf(e, "%s: \"%s\" must be a non-empty array of sizes", t->path, field);
	size_t i;
	json_t *sz;
	json_array_foreach(arr, i, sz)
	{
		if (!json_is_object(sz))
			return errf(e, "%s: %s[%zu] is not an object", t->path, field, i);
		for (int j = 0; j < t->nargs; j++) {
			const struct task_arg *a = &t->args[j];
			if (a->kind == ARG_SCALAR && !json_is_number(json_object_get(sz, a->name)))
				return errf(e, "%s: %s[%zu] has no number for scalar \"%s\"", t->path, field, i, a->name);
		}
		for (int j = 0; j < t->nargs; j++) {
			const struct task_arg *a = &t->args[j];
			char e2[ERRBUF];
			if (a->kind == ARG_SCALAR)
				continue;
			int64_t n;
			if (task_numel(t, j, sz, &n, e2) < 0)
				return errf(e, "%s: %s[%zu]: %s", t->path, field, i, e2);
		}
	}
	return 0;
}

struct task *task_load(const char *dir, const char *name, char *e)
{
	struct task *t = calloc(1, sizeof *t);
	if (!t) {
		errf(e, "out of memory");
		return NULL;
	}
	t->name = strdup(name);
	t->dir = strdup(dir);
	size_t pl = strlen(dir) + 16;
	t->path = malloc(pl);
	if (!t->name || !t->dir || !t->path) {
		errf(e, "out of memory");
		goto fail;
	}
	snprintf(t->path, pl, "%s/task.json", dir);
	json_error_t je;
	t->json = json_load_file(t->path, 0, &je);
	if (!t->json) {
		if (access(t->path, R_OK) != 0)
			errf(e, "unknown task \"%s\": no %s", name, t->path);
		else
			errf(e, "%s: line %d: %s", t->path, je.line, je.text);
		goto fail;
	}
	if (!json_is_object(t->json)) {
		errf(e, "%s: not a JSON object", t->path);
		goto fail;
	}
	json_t *args = json_object_get(t->json, "args");
	if (!json_is_array(args) || json_array_size(args) == 0) {
		errf(e, "%s: \"args\" must be a non-empty array", t->path);
		goto fail;
	}
	t->nargs = (int)json_array_size(args);
	t->args = calloc((size_t)t->nargs, sizeof *t->args);
	if (!t->args) {
		errf(e, "out of memory");
		goto fail;
	}
	const json_t *tol = json_object_get(t->json, "tolerance");
	int nout = 0;
	for (int i = 0; i < t->nargs; i++) {
		json_t *a = json_array_get(args, (size_t)i);
		struct task_arg *ta = &t->args[i];
		ta->name = json_string_value(json_object_get(a, "name"));
		if (!ta->name || !*ta->name) {
			errf(e, "%s: args[%d]: missing \"name\"", t->path, i);
			goto fail;
		}
		if (parse_kind(json_string_value(json_object_get(a, "kind")), &ta->kind) < 0) {
			errf(e, "%s: args[%d] \"%s\": \"kind\" must be in, out, inout or scalar", t->path, i, ta->name);
			goto fail;
		}
		ta->dt = dtype_parse(json_string_value(json_object_get(a, "dtype")));
		if (ta->dt == DT_NONE) {
			errf(e, "%s: args[%d] \"%s\": unknown or missing \"dtype\"", t->path, i, ta->name);
			goto fail;
		}
		ta->init = json_object_get(a, "init");
		if (ta->kind == ARG_SCALAR)
			continue;
		ta->shape = json_object_get(a, "shape");
		if (!json_is_array(ta->shape)) {
			errf(e, "%s: args[%d] \"%s\": \"shape\" must be an array", t->path, i, ta->name);
			goto fail;
		}
		if (ta->kind == ARG_IN)
			continue;
		nout++;
		const json_t *at = json_object_get(a, "tolerance");
		if (!at)
			at = json_object_get(tol, dtype_name(ta->dt));
		if (!at && dtype_is_float(ta->dt)) {
			errf(e, "%s: args[%d] \"%s\": no tolerance for %s (set \"tolerance\": {\"%s\": {\"atol\", \"rtol\"}})",
			     t->path, i, ta->name, dtype_name(ta->dt), dtype_name(ta->dt));
			goto fail;
		}
		ta->atol = at ? json_number_value(json_object_get(at, "atol")) : 0;
		ta->rtol = at ? json_number_value(json_object_get(at, "rtol")) : 0;
	}
	if (nout == 0) {
		errf(e, "%s: no out or inout argument", t->path);
		goto fail;
	}
	if (check_sizes(t, "tests", e) < 0 || check_sizes(t, "bench", e) < 0)
		goto fail;
	/* Per-back-end benchmark sizes ("bench_cuda": a GPU needs far larger
	 * problems than a CPU core to be measured fairly). */
	for (int i = 0; rec_backends[i]; i++) {
		char field[32];
		snprintf(field, sizeof field, "bench_%s", rec_backends[i]);
		if (json_object_get(t->json, field) && check_sizes(t, field, e) < 0)
			goto fail;
	}
	t->tests = json_object_get(t->json, "tests");
	t->bench = json_object_get(t->json, "bench");
	char path[PATH_MAX];
	if (task_file(t, "reference", "c", path, sizeof path, e) < 0)
		goto fail;
	const char *sig = json_string_value(json_object_get(t->json, "signature"));
	char mine[1024];
	task_signature(t, "c", mine, sizeof mine);
	if (sig && strcmp(sig, mine) != 0) {
		errf(e, "%s: \"signature\" says \"%s\" but the args declare \"%s\"", t->path, sig, mine);
		goto fail;
	}
	return t;
fail:
	task_free(t);
	return NULL;
}

static struct cached {
	char *key;
	struct task *t;
	struct cached *next;
} *cache;

const struct task *task_get(const char *root, const char *name, char *e)
{
	if (!name || !*name || strchr(name, '/') || name[0] == '.') {
		errf(e, "bad task name \"%s\"", name ? name : "");
		return NULL;
	}
	if (!root)
		root = task_root();
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/%s", root, name);
	for (struct cached *c = cache; c; c = c->next)
		if (strcmp(c->key, dir) == 0)
			return c->t;
	struct task *t = task_load(dir, name, e);
	if (!t)
		return NULL;
	struct cached *c = malloc(sizeof *c);
	if (!c || !(c->key = strdup(dir))) {
		free(c);
		task_free(t);
		errf(e, "out of memory");
		return NULL;
	}
	c->t = t;
	c->next = cache;
	cache = c;
	return t;
}

/* A role's entry: "file.c" or {"file": "file.c", "libs": [...]}. */
static const json_t *role_entry(const struct task *t, const char *role, const char *backend)
{
	const json_t *r = json_object_get(t->json, role);
	if (json_is_string(r)) /* one file for every back end (the reference) */
		return r;
	return json_object_get(r, backend);
}

int task_file(const struct task *t, const char *role, const char *backend, char *buf, size_t n, char *e)
{
	if (strcmp(role, "reference") == 0)
		backend = "c";
	const json_t *r = role_entry(t, role, backend);
	const char *f = json_is_object(r) ? json_string_value(json_object_get(r, "file")) : json_string_value(r);
	if (!f)
		return errf(e, "%s: no %s for backend %s", t->path, role, backend);
	if ((size_t)snprintf(buf, n, "%s/%s", t->dir, f) >= n)
		return errf(e, "%s: path too long", t->path);
	if (access(buf, R_OK) != 0)
		return errf(e, "%s: %s file %s is missing", t->path, role, buf);
	return 0;
}

char *task_read(const struct task *t, const char *role, const char *backend, char *e)
{
	char path[PATH_MAX];
	char *text;
	if (task_file(t, role, backend, path, sizeof path, e) < 0 || file_read(path, &text, NULL, e) < 0)
		return NULL;
	return text;
}

const json_t *task_bench(const struct task *t, const char *backend)
{
	char k[32];
	snprintf(k, sizeof k, "bench_%s", backend ? backend : "");
	const json_t *b = backend ? json_object_get(t->json, k) : NULL;
	return b ? b : t->bench;
}

const json_t *task_libs(const struct task *t, const char *role, const char *backend)
{
	const json_t *r = role_entry(t, role, backend);
	return json_is_object(r) ? json_object_get(r, "libs") : NULL;
}

int task_signature(const struct task *t, const char *backend, char *buf, size_t n)
{
	size_t o = (size_t)snprintf(buf, n, "void solve(");
	for (int i = 0; i < t->nargs && o < n; i++) {
		const struct task_arg *a = &t->args[i];
		const char *ty = dtype_ctype(a->dt, backend);
		if (a->kind == ARG_SCALAR)
			o += (size_t)snprintf(buf + o, n - o, "%s%s %s", i ? ", " : "", ty, a->name);
		else
			o += (size_t)snprintf(buf + o, n - o, "%s%s%s* %s", i ? ", " : "",
					      a->kind == ARG_IN ? "const " : "", ty, a->name);
	}
	if (o < n)
		snprintf(buf + o, n - o, ")");
	return o < n ? 0 : -1;
}

/* Whether the wrapper includes the header of half-precision type dt: an
 * argument has it, or the source names it ("half": __half, half2,
 * __float2half...; "bfloat16": __nv_bfloat16, hip_bfloat16...).  The two
 * headers are a fifth of the preprocessed lines nvcc's host and device
 * front ends read (46 k with them, 36 k without: about 15 % of a float
 * task's compile CPU, docs/gpu.md), so a task and a source without either
 * go without them; a source that hides the names gets the compiler's
 * "undefined" message, as any missing include. */
static int needs_half(const struct task *t, const char *source, enum dtype dt)
{
	for (int i = 0; i < t->nargs; i++)
		if (t->args[i].dt == dt)
			return 1;
	return !source || strstr(source, dt == DT_F16 ? "half" : "bfloat16") != NULL;
}

int task_write_wrapper(const struct task *t, const char *backend, const char *src_path, const char *source,
		       FILE *out)
{
	int cxx = strcmp(backend, "c") != 0;
	int cuda = strcmp(backend, "cuda") == 0, hip = strcmp(backend, "hip") == 0;
	char sig[1024];
	task_signature(t, backend, sig, sizeof sig);
	fprintf(out, "/* generated by ksci: binds solve() of task %s to the harness */\n", t->name);
	fprintf(out, "#include <stdint.h>\n");
	if (cuda || hip) {
		fprintf(out, cuda ? "#include <cuda_runtime.h>\n" : "#include <hip/hip_runtime.h>\n");
		if (needs_half(t, source, DT_F16))
			fprintf(out, cuda ? "#include <cuda_fp16.h>\n" : "#include <hip/hip_fp16.h>\n");
		if (needs_half(t, source, DT_BF16))
			fprintf(out, cuda ? "#include <cuda_bf16.h>\n" : "#include <hip/hip_bfloat16.h>\n");
	}
	/* The prototype comes first so that a candidate whose solve differs from
	 * the declared signature fails to compile with a clear message. */
	fprintf(out, "%s%s;\n", cxx ? "extern \"C\" " : "", sig);
	fprintf(out, "#include \"%s\"\n", src_path);
	fprintf(out, "%svoid ksci_call(void **a)\n{\n\tsolve(", cxx ? "extern \"C\" " : "");
	for (int i = 0; i < t->nargs; i++) {
		const struct task_arg *a = &t->args[i];
		const char *ty = dtype_ctype(a->dt, backend);
		if (a->kind == ARG_SCALAR)
			fprintf(out, "%s*(const %s *)a[%d]", i ? ", " : "", ty, i);
		else
			fprintf(out, "%s(%s%s *)a[%d]", i ? ", " : "", a->kind == ARG_IN ? "const " : "", ty, i);
	}
	fprintf(out, ");\n}\n");
	return ferror(out) ? -1 : 0;
}
