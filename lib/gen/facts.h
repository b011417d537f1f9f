/*
 * facts: what a model prompt says about the machine and about how a kernel
 * fared on it, read from records (docs/record.md) — nothing is measured
 * here.
 *
 *   the device       time.env of the detected device: GPU or CPU, compute
 *                    capability, SMs, L2, memory, clocks, driver, compiler,
 *                    and the measured peaks (copy bandwidth, fp32 SGEMM)
 *   the timings      per benchmark size: median time and its SEM, speedups
 *                    over baseline and seed, GB/s and GFLOP/s as a fraction
 *                    of the measured peaks, which limit binds and the
 *                    roofline floor
 *   the resources    compile.resources: registers, spills, shared memory per
 *                    kernel and the occupancy they allow (cuda, by the
 *                    compute capability's per-SM limits)
 *
 * Which limit binds is the roofline's answer for the task, not a judgement
 * of the kernel: at each size the task's flops and bytes (time.sizes[].flops
 * / .bytes, else the task's formulas) over the device's peaks give the time
 * each would take at peak; the longer one binds.  Work meant for tensor cores
 * (task "flops_unit" other than fp32) has no measured compute peak: it is
 * memory-bound where its intensity is below the fp32 ridge (the tensor ridge
 * lies higher still), unknown otherwise.  A device without measured peaks
 * (the c back end) has no binding limit.
 *
 * Text functions return a malloc'd NUL-terminated string the caller frees,
 * NULL only when out of memory.  Everything passed in is borrowed;
 * fact_env returns a pointer into one of the records it was given.
 */
#ifndef KSCI_FACTS_H
#define KSCI_FACTS_H

#include <jansson.h>
#include <stddef.h>

struct task;

/* What facts are computed against (all borrowed, any may be NULL). */
struct fact_ctx {
	const char *backend;     /* "c", "cuda", "hip" */
	const struct task *task; /* formulas and benchmark sizes; NULL: the record's own figures */
	const json_t *env;       /* time.env of the detected device; NULL: none detected */
};

enum fact_bound { FACT_UNKNOWN, FACT_MEMORY, FACT_COMPUTE, FACT_MIXED };

/* The detected device: time.env of rec, else of the first of others (an
 * array of records) that has one, else of the newest record in notebook for
 * task (NULL: any) and backend that has one.  NULL when none does. */
const json_t *fact_env(const json_t *rec, const json_t *others, const json_t *notebook, const char *task,
		       const char *backend);
/* The architecture to match knowledge against, into buf: "sm_90" from
 * env.cc, else the target rec was compiled for (compile.flags: code=sm_90a,
 * -arch=sm_90, --offload-arch=gfx942), without feature suffixes ("sm_90a" ->
 * "sm_90", "gfx942:xnack-" -> "gfx942").  "" when neither says.  Returns buf. */
const char *fact_arch(const json_t *env, const json_t *rec, char *buf, size_t n);
/* "sm_90a" -> "sm_90", "gfx90a:sramecc+" -> "gfx90a", in place. */
void fact_arch_normalise(char *arch);
/* Which limit binds over rec's timed sizes (none timed: the task's benchmark
 * sizes for the back end): one for every size, FACT_MIXED when sizes differ,
 * FACT_UNKNOWN without peaks or formulas. */
enum fact_bound fact_bound(const json_t *rec, const struct fact_ctx *c);
/* "memory", "compute", "mixed", "unknown". */
const char *fact_bound_name(enum fact_bound b);
/* One paragraph on the device (c->env) and how rec was compiled. */
char *fact_device(const struct fact_ctx *c, const json_t *rec);
/* rec's timings, one line per size, then the geometric means and the
 * binding limit; for a record without timings its status and the task's
 * roofline per benchmark size. */
char *fact_timings(const json_t *rec, const struct fact_ctx *c);
/* rec's compile.resources, one line per kernel, and the occupancy bound. */
char *fact_resources(const json_t *rec, const struct fact_ctx *c);

#endif
