/*
 * harness: what runs inside the sandboxed child (kharness): generate inputs
 * from seeds, run the reference, run the candidate on poisoned outputs,
 * compare, and time candidate / baseline / seed interleaved.  It talks to the
 * device through struct dev_ops, so the same logic serves host C and CUDA.
 *
 * The job and the result are JSON (docs/harness.md).  harness_run returns a
 * new result object the caller owns.  Kernel libraries are dlopen'ed here,
 * so this code only ever runs in the child process, never in a tool.
 */
#ifndef KSCI_HARNESS_H
#define KSCI_HARNESS_H

#include <jansson.h>
#include <stddef.h>

#include "err.h"

typedef void (*ksci_call_fn)(void **args);

struct dev_ops {
	const char *name;
	/* -1: the device failed; -2: there is no such device here (the result
	 * is then status "unsupported" with the message). */
	int (*init)(char *e);
	void *(*alloc)(size_t n, char *e);
	void (*release)(void *p);
	int (*to_dev)(void *dst, const void *src, size_t n, char *e);
	int (*to_host)(void *dst, const void *src, size_t n, char *e);
	/* Call fn and wait for everything it started; an asynchronous fault is
	 * returned as -1 with the message.  *seconds: the call's duration
	 * (NULL when not timing).  1: timed, but the device layer's clocks
	 * disagree (e.g. work outside the events' stream); *seconds is then the
	 * conservative figure and e says why. */
	int (*call)(ksci_call_fn fn, void **args, double *seconds, char *e);
	/* Evict caches between timed calls (may be NULL). */
	int (*flush)(char *e);
	/* Facts about the device for the record's time.env (new reference). */
	json_t *(*env)(void);
	/* Measured peak rates {"copy_gbps", "sgemm_gflops", ...} for % of peak
	 * (new reference; may be NULL). */
	json_t *(*peak)(void);
};

extern const struct dev_ops dev_host;
/* The host CPU's model name from /proc/cpuinfo, "unknown" when there is none:
 * the c back end's time.env.cpu and part of its compile-cache key. */
void dev_host_cpu_model(char *buf, size_t n);

/* Run a job; returns the result object, or NULL with errbuf set when the job
 * itself is malformed or a kernel library cannot be loaded. */
json_t *harness_run(const struct dev_ops *d, const json_t *job, char *errbuf);

#endif
