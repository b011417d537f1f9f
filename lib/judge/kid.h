/*
 * judge/kid: the judge's handle on one role's child process (candidate,
 * baseline, seed, or the calibration child that has no kernel at all).
 *
 * kid_start forks and execs `self --child ROLE [LIB]` with the control page
 * at JCTL_FD, the arena memfd at JCTL_ARENA_FD, stdout and stderr into a
 * log file of at most KID_LOG_MAX bytes in the jail's /tmp (SIGXFSZ
 * ignored: a flood is cut, not fatal), no core dumps, a CPU-time limit, the
 * address-space limit the judge has, and a parent-death signal; it can
 * start no process of its own (the seccomp filter).  The child installs its
 * seccomp filter (lib/jail_filter.h) before it loads LIB.
 *
 * The child runs only inside kid_request: the judge continues it, asks,
 * waits for "done", and stops it again (SIGSTOP, waited for), so that
 * nothing it left running — a thread, a spinning OpenMP team — runs while
 * the judge prepares inputs, checks outputs or times another role.
 *
 * The judge is the child's parent and is not dumpable (prctl), so the child
 * can neither trace it nor open its /proc files; the filter keeps it from
 * signalling anyone but itself.
 *
 * Ownership: struct kid is the caller's; kid_end releases what kid_start made.
 */
#ifndef KSCI_JUDGE_KID_H
#define KSCI_JUDGE_KID_H

#include <stddef.h>
#include <sys/types.h>

#include "ctl.h"

#define KID_LOG_MAX (1 << 20)
/* The longest a request waits, before its clock, for the CPU the child will
 * wake on to be awake (judge/hot.h). */
#define KID_WARM_S 0.0003

struct kid {
	const char *role;
	pid_t pid;
	struct jctl *c;
	int ctl_fd, log_fd;
	uint32_t seq;
	int dead;    /* reaped: status below */
	double t0, t1; /* the last request's start and "done", by the judge's clock */
	int warm_cpu;  /* the CPU woken before the last request (judge/hot.h), -1 none */
	int wstatus;
};

struct kid_opts {
	const char *self;  /* the program to exec (the judge's own) */
	const char *lib;   /* NULL: the calibration child */
	int arena_fd;      /* -1: none */
	double spin_s;     /* how long the judge spins before it sleeps, waiting */
	long cpu_s;        /* RLIMIT_CPU of the child (0: none): a backstop behind the judge's deadline */
};

/* Start the child and wait (until deadline, proc_now() seconds) for it to be
 * ready; it is stopped on return.  -1 + e (its log's last line says why). */
int kid_start(struct kid *k, const char *role, const struct kid_opts *o, double deadline, char *e);
/* kid_start in two halves, so several children can start at once. */
int kid_spawn(struct kid *k, const char *role, const struct kid_opts *o, char *e);
int kid_ready(struct kid *k, double deadline, char *e);
/* One request: the caller has filled k->c's request fields and op.
 * *wall: seconds from the request to "done" by the judge's clock.
 * 0 done; -1 the child died (e says how), -2 the deadline passed (the child
 * is killed), -3 the child reported a device fault (e: its message, cut
 * and cleaned). */
int kid_request(struct kid *k, uint32_t op, double spin_s, double deadline, double *wall, char *e);
/* Where the last request's exchange went, by the child's own clock (the
 * same CLOCK_MONOTONIC as the judge's, but the child's word: for the log,
 * never for a figure): *wake from the request to the child seeing it, *tail
 * from the child's end of it to the judge seeing "done".  0 when the
 * child's stamps are not within the exchange. */
int kid_split(const struct kid *k, double *wake, double *tail);
/* Whether the last request's child saw it on the CPU woken for it, by the
 * child's word (the log's only): 1 yes, 0 elsewhere, -1 none was woken or
 * its stamps are not within the exchange. */
int kid_woke_there(const struct kid *k);
/* The CPU process pid last ran on (/proc/PID/stat's 39th field), -1 where
 * it cannot be read. */
int kid_last_cpu(pid_t pid);
/* The last line(s) of the child's log, at most n-1 bytes, printable ASCII. */
void kid_log_tail(struct kid *k, char *buf, size_t n);
/* The end of the child's log (whole lines, at most n-1 bytes), cleaned the same way. */
void kid_log_text(struct kid *k, char *buf, size_t n);
/* Whether a stopped child is still there (an exit is reaped and noted). */
int kid_alive(struct kid *k);
void kid_end(struct kid *k);

#endif
