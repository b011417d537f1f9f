/*
 * task: a task directory (docs/task.md) — loading and validating task.json,
 * the argument list and the `solve` signature it declares, the files of each
 * role (reference, baseline, seed) per back end, and the generated wrapper
 * that binds a candidate's `solve` to the harness.
 *
 * This is the one reader of task.json: every tool and lib module that needs
 * a task (kcompile, kverify, ktime, kgen's seed and prompts) goes through
 * task_get, so a task is validated once, the same way for all.
 *
 * task_get caches loaded tasks by (root, name) for the life of the process;
 * the returned task is owned by the cache (do not free).  Strings and JSON
 * values inside a task are borrowed from it.  task_read returns malloc'd
 * text the caller frees.
 */
#ifndef KSCI_TASK_H
#define KSCI_TASK_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "dtype.h"
#include "err.h"

enum arg_kind { ARG_IN, ARG_OUT, ARG_INOUT, ARG_SCALAR };

struct task_arg {
	const char *name;
	enum arg_kind kind;
	enum dtype dt;
	const json_t *shape; /* array of numbers/expressions; NULL for scalars */
	const json_t *init;  /* input distribution object, may be NULL */
	double atol, rtol;   /* for out/inout */
};

struct task {
	char *name, *dir, *path; /* dir: the task directory; path: its task.json */
	json_t *json;
	int nargs;
	struct task_arg *args;
	const json_t *tests, *bench; /* arrays of size objects */
};

/* The tasks root: $KSCI_TASKS, else KSCI_DATADIR "/tasks". */
const char *task_root(void);
/* Load (once) and validate root/name/task.json.  root NULL means task_root().
 * NULL with a message naming file and field on failure. */
const struct task *task_get(const char *root, const char *name, char *errbuf);
/* Parse and validate a task from its directory (uncached; caller frees). */
struct task *task_load(const char *dir, const char *name, char *errbuf);
void task_free(struct task *t);

/* Path of the file for role ("reference", "baseline", "seed") and backend
 * into buf.  The reference is host C for every back end.  -1 if none. */
int task_file(const struct task *t, const char *role, const char *backend, char *buf, size_t n, char *errbuf);
/* The text of that file (malloc'd, caller frees); NULL and errbuf when the
 * task names none for backend or it cannot be read. */
char *task_read(const struct task *t, const char *role, const char *backend, char *errbuf);
/* Benchmark sizes for backend: "bench_<backend>" when the task has it, else
 * "bench" (borrowed). */
const json_t *task_bench(const struct task *t, const char *backend);
/* Extra compiler/linker flags a role needs (e.g. "-lcublas"); borrowed, may be NULL. */
const json_t *task_libs(const struct task *t, const char *role, const char *backend);

/* "void solve(const float* x, float* y, int rows, int cols)" for backend. */
int task_signature(const struct task *t, const char *backend, char *buf, size_t n);
/* Write the wrapper translation unit that includes src_path and defines
 * ksci_call(void **args) calling solve with the declared signature.  source
 * is src_path's text (or NULL): the half-precision headers come first where
 * an argument's type or the source (the words "half", "bfloat16") needs them. */
int task_write_wrapper(const struct task *t, const char *backend, const char *src_path, const char *source,
		       FILE *out);

/* Number of elements of array argument i at the given size (>= 0). */
int task_numel(const struct task *t, int i, const json_t *size, int64_t *n, char *errbuf);
/* Formula field ("flops", "bytes") at size; NAN when the task has none. */
double task_formula(const struct task *t, const char *field, const json_t *size);
/* "rows=7 cols=33" — for messages. */
void task_size_str(const json_t *size, char *buf, size_t n);
/* Whether backend is one ksci knows: rec_backend_known(), kept under this
 * name for the task's callers. */
int task_backend_ok(const char *backend);

#endif
