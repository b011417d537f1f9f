/*
 * judge/ctl: the one page the judge and a role's child process share, and
 * the request/"done" exchange over it (docs/harness.md, "The judge").
 *
 * The judge writes a request (what to map, how many calls, where each
 * argument of call i lives in the shared arena) and bumps `req`; the child
 * does it and sets `done` to the request's number.  Everything the child
 * writes here (done, status, msg, event_s) is untrusted: the judge believes
 * only that the child says it has finished, and reads the outputs itself.
 * The child may scribble over the whole page; the judge rewrites every
 * request field before each request and bounds what it reads back.
 *
 * Waiting: the child spins on `req` (it is stopped by the judge between
 * requests, so it spins only for the microseconds after it is continued,
 * whatever time it spent stopped: see ctl_wait);
 * the judge spins (GPU back ends: the request's round trip is part of what
 * it times, so it must be short and steady) or sleeps on a futex (host back
 * end: a spinning judge would steal a core from a multi-threaded kernel).
 *
 * Ownership: the page is a MAP_SHARED mapping made by ctl_create (judge)
 * or ctl_map (child); neither side frees what the other owns.
 */
#ifndef KSCI_JUDGE_CTL_H
#define KSCI_JUDGE_CTL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "../err.h"

#define JCTL_MAXARGS 16
/* The fds a child finds at exec: the control page and (host back end) the arena. */
#define JCTL_FD 3
#define JCTL_ARENA_FD 4

enum jop {
	JOP_MAP = 1, /* map the arena: arena_bytes, handle (GPU) or JCTL_ARENA_FD (host) */
	JOP_RUN,     /* ncalls calls of the role's kernel */
	JOP_EMPTY,   /* ncalls calls of an empty function: the exchange's own cost */
	JOP_EXIT,
	JOP_LOAD,    /* a spare child (started with lib JCTL_LATER): load the library at lib */
};

/* The lib a spare candidate child is started with: it starts its device and
 * installs its filter, then waits for JOP_LOAD (the judge's next job). */
#define JCTL_LATER "-"

struct jctl_arg {
	uint64_t off;  /* buffers: byte offset of call 0's array in the arena */
	uint32_t buf;  /* 1: a buffer (off, + i * stride for call i); 0: the scalar in raw */
	uint32_t pad;
	unsigned char raw[8];
};

struct jctl {
	_Atomic uint32_t req;  /* judge: number of the current request */
	_Atomic uint32_t done; /* child: number of the request it finished */
	_Atomic uint32_t ready; /* child: 1 when started and waiting */
	uint32_t op, ncalls, nargs;
	uint64_t stride, arena_bytes;
	struct jctl_arg arg[JCTL_MAXARGS];
	unsigned char handle[64]; /* the GPU arena's IPC handle */
	char lib[2048];           /* JOP_LOAD: the library's path, NUL-terminated */
	/* child -> judge, untrusted */
	int32_t status; /* 0 done; -1 the device reported a fault (msg) */
	uint32_t pad;
	double event_s; /* GPU: the batch between device events (a cross-check only) */
	/* The child's CLOCK_MONOTONIC when it saw the request and when it had
	 * finished it (its device synchronised): for the judge's log only. */
	double seen_at, finished_at;
	int32_t seen_cpu; /* the CPU it saw the request on (sched_getcpu), for the log only */
	uint32_t pad2;
	char msg[512];
};

/* Judge: a new zeroed page in a memfd; *fd for the child. NULL + e on failure. */
struct jctl *ctl_create(int *fd, char *e);
/* Child: map the page passed at JCTL_FD. */
struct jctl *ctl_map(int fd, char *e);

/* Wake whoever sleeps on w (a futex on shared memory). */
void ctl_wake(_Atomic uint32_t *w);
/* Wait until *w != old: spin for spin_s seconds, then sleep on the futex in
 * slices of at most 5 ms.  A gap of more than CTL_STOPPED_S between two
 * looks at the clock while spinning means the process was stopped (or
 * descheduled) in between: the spin_s starts again from there, so a child
 * continued after any time stopped spins for its request.  Returns 0 when it
 * changed, 1 when `alive` (called between slices and every few thousand
 * spins) returned 0, or the deadline (proc_now() seconds) passed: then 2.
 * *slept (may be NULL): 1 when it slept on the futex at least once. */
#define CTL_STOPPED_S 0.002
int ctl_wait(_Atomic uint32_t *w, uint32_t old, double spin_s, double deadline, int (*alive)(void *), void *ctx,
	     int *slept);
/* For tests: the clock ctl_wait reads (NULL: proc_now). */
void ctl_set_clock(double (*now)(void));

#endif
