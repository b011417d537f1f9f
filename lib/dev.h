/*
 * dev: the device layer's contract (struct dev_ops) — what the judge
 * (lib/harness.c) and a role's child (lib/judge/child.c) ask of a back end:
 * memory, copies, the shared arena, input generation, checks on the device,
 * and a batch's brackets in the child.  One instance per back end:
 * dev_host (lib/dev_host.c, `c`) and dev_cuda (lib/cuda/dev_cuda.c).
 * Everything a dev_ops function returns that needs freeing says so.
 * Beside the contract, one rule on its struct dev_state: when the state
 * moved too far for a timing's anchor (dev_state_moved, lib/dev_state.c).
 */
#ifndef KSCI_DEV_H
#define KSCI_DEV_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "gen_value.h"

typedef void (*ksci_call_fn)(void **args);

/* What a device-side comparison found (struct dev_ops.compare). */
struct dev_cmp {
	int64_t bad, first; /* elements outside tolerance; the first one's index, -1 */
	double max_abs, max_rel;
	int got_varies, want_varies; /* not every element equals the first */
};

/* The device's state at one moment (struct dev_ops.state): what can move a
 * kernel's time between runs without any change to the kernel.  A field the
 * device cannot tell is NaN; limits is NVML's clock-event-reason mask. */
struct dev_state {
	double sm_mhz, mem_mhz, temp_c, power_w;
	uint64_t limits;
};

/* How far the state may move before a size's anchor (lib/harness.c) no
 * longer serves: a clock by DEV_CLOCK_TOL of the anchor's (also where the
 * judge's warm-up counts the clock as back), the temperature by
 * DEV_TEMP_TOL_C.  Why these values: lib/dev_state.c. */
#define DEV_CLOCK_TOL 0.02
#define DEV_TEMP_TOL_C 15.0
/* Whether now moved from then by more than those: 1 with what moved and both
 * values in moved (n bytes), else 0 and "".  Nothing moved where then's SM
 * clock or now's is not known (0 or NaN); a NaN temperature is not compared. */
int dev_state_moved(const struct dev_state *now, const struct dev_state *then, char *moved, size_t n);

struct dev_ops {
	const char *name;
	/* -1: the device failed; -2: there is no such device here (the result
	 * is then status "unsupported" with the message). */
	int (*init)(char *e);
	void *(*alloc)(size_t n, char *e);
	void (*release)(void *p);
	int (*to_dev)(void *dst, const void *src, size_t n, char *e);
	int (*to_host)(void *dst, const void *src, size_t n, char *e);
	/* Call fn (the judge's own: the task's device reference) and wait for
	 * everything it started; an asynchronous fault is -1 with the message. */
	int (*call)(ksci_call_fn fn, void **args, char *e);
	/* Evict caches before a timed batch (may be NULL): at least the n bytes
	 * at p, the arrays the batch's calls are about to use. */
	int (*flush)(const void *p, size_t n, char *e);
	/* Facts about the device for the record's time.env (new reference). */
	json_t *(*env)(void);
	/* Measured peak rates {"copy_gbps", "sgemm_gflops", ...} for % of peak
	 * (new reference; may be NULL). */
	json_t *(*peak)(void);

	/* The device's state now (may be NULL; -1 when it cannot be read). */
	int (*state)(struct dev_state *s);
	/* Bytes of device memory free now and in all (may be NULL: the judge
	 * then sizes its arena by a fixed budget). */
	int (*mem_info)(size_t *free_b, size_t *total_b, char *e);

	/* --- the judge's side of the shared arena and the batch loop --- */
	/* n bytes a child can map: host, the memfd `fd` grown to n and mapped;
	 * GPU, device memory whose IPC handle goes to handle[64]. */
	void *(*share)(size_t n, int fd, unsigned char *handle, char *e);
	void (*unshare)(void *p, size_t n);
	int (*copy)(void *dst, const void *src, size_t n, char *e); /* device to device */
	int (*set_bytes)(void *p, int byte, size_t n, char *e);
	/* Poison an output of n bytes at p before a timed batch: byte over one
	 * 32-byte sector of every 1 KiB block, chosen by seed (gen_poison_span in
	 * lib/gen_value.h).  Every back end has one. */
	int (*poison)(void *p, int byte, size_t n, uint64_t seed, char *e);
	/* Fresh inputs: n elements of dtype dt from spec (lib/gen_value.h). */
	int (*gen)(void *p, int dt, int64_t n, const struct gen_spec *spec, char *e);
	int (*sync)(char *e); /* everything the judge queued is done */
	/* GPU: seconds a trivial operation of the judge takes now; long when
	 * another process keeps the GPU busy (may be NULL). */
	int (*probe)(double *s, char *e);
	/* Checks on the device, by the host comparison's rules (may be NULL:
	 * the judge copies to the host and compares there). */
	int (*compare)(const void *got, const void *want, int dt, int64_t n, double atol, double rtol,
		       struct dev_cmp *r, char *e);
	int (*equal)(const void *a, const void *b, size_t n, int *same, char *e);

	/* --- the child's side --- */
	int (*init_child)(char *e);
	void *(*open_shared)(const unsigned char *handle, int fd, size_t n, char *e);
	void (*close_shared)(void *p, size_t n);
	/* Around a batch of calls: begin before the first, end after the last
	 * (launch errors, a full device sync; *event_s the device's own time of
	 * the batch on the default stream, or -1). */
	int (*batch_begin)(char *e);
	int (*batch_end)(double *event_s, char *e);
};

extern const struct dev_ops dev_host;
/* The host CPU's model name from /proc/cpuinfo, "unknown" when there is none:
 * the c back end's time.env.cpu and part of its compile-cache key. */
void dev_host_cpu_model(char *buf, size_t n);

#endif
