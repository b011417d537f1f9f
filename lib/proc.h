/*
 * proc: run a program in a child process with limits — the only way ksci
 * runs compilers and untrusted kernel code.
 *
 * The child gets its own process group (so everything it forks is killed
 * with it), dies with its caller (SIGKILL on the caller's death: nobody else
 * would enforce the deadline), stdin from the given bytes, resource limits (CPU seconds, address
 * space, file size, no core dumps) and a wall-clock deadline after which the
 * whole group is killed with SIGKILL.  stdout and stderr are captured up to a
 * bound each; beyond it output is read and discarded (the counts say how
 * much).  Writing the child's stdin never raises SIGPIPE in the caller: a
 * child that exits without reading its input is an outcome, not a crash.
 * The result's buffers belong to the caller: proc_result_free.
 */
#ifndef KSCI_PROC_H
#define KSCI_PROC_H

#include <stddef.h>

#include "err.h"

struct proc_limits {
	double wall_s;    /* 0: none */
	long cpu_s;       /* RLIMIT_CPU, 0: none */
	long mem_mb;      /* RLIMIT_AS, 0: none (CUDA needs none: it maps huge ranges) */
	long fsize_mb;    /* RLIMIT_FSIZE, 0: none */
	size_t capture;   /* bytes kept of stdout and of stderr each; 0: 1 MiB */
	int no_network;   /* try a fresh network namespace (silently skipped where not allowed) */
	int merge_stderr; /* stderr goes into the stdout capture */
	int pass_stderr;  /* stderr is the caller's, not captured (a model command's diagnostics) */
	int nice;         /* added to the child's nice value (0: as the caller) */
	const char *const *env; /* "NAME=VALUE" strings added to the child's environment; NULL-terminated */
};

struct proc_result {
	int exited, code;     /* exited normally, with code */
	int signaled, sig;    /* killed by signal sig (SIGKILL after timeout too) */
	int timed_out;
	double seconds;
	char *out, *err;      /* NUL-terminated captures (never NULL after success) */
	size_t out_len, err_len;
	size_t out_total, err_total; /* bytes written by the child, captured or not */
};

/* 0 when the child ran (whatever its outcome); -1 if it could not be started. */
int proc_run(char *const argv[], const char *cwd, const char *in, size_t in_len,
	     const struct proc_limits *lim, struct proc_result *r, char *errbuf);
void proc_result_free(struct proc_result *r);
/* "killed by signal 11 (Segmentation fault)", "exit status 3", "timed out after 10.0 s". */
void proc_describe(const struct proc_result *r, char *buf, size_t n);
/* A program kept running to answer one request after another (the
 * long-lived judge behind kverify and ktime, lib/evaluate.c): started once,
 * with proc_run's process group, parent-death signal and limits; each
 * exchange writes a request on its stdin and reads its stdout up to a line
 * that starts with out_mark and its stderr up to a line that starts with
 * err_mark (the mark lines are kept in the captures).  The program stays
 * between exchanges; one that dies or passes an exchange's deadline is
 * killed with its whole group and reaped, and the exchange says how it
 * ended, as proc_run would have.  Ownership: struct proc_srv is the
 * caller's; proc_srv_stop releases what proc_srv_start made. */
struct proc_srv {
	int pid; /* 0: not running */
	int in, out, err;
	double started;
};
int proc_srv_start(struct proc_srv *s, char *const argv[], const char *cwd, const struct proc_limits *lim,
		   char *errbuf);
/* 0: both marks came (r: this exchange's output, the program still runs);
 * 1: the program ended, or passed wall_s (0: no deadline) and was killed —
 * r says how, s is stopped; -1 + errbuf: out of memory (s is stopped). */
int proc_srv_ask(struct proc_srv *s, const char *req, size_t req_len, const char *out_mark, const char *err_mark,
		 double wall_s, size_t capture, struct proc_result *r, char *errbuf);
/* Close its stdin, give it a second to leave, then kill the group; reap. */
void proc_srv_stop(struct proc_srv *s);

double proc_now(void);
/* 1 when no process has this PID on this host (kill(pid, 0): ESRCH); a
 * live one, or one we may not signal, is not gone.  What the sweeps of a
 * killed tool's leftovers ask before they remove anything. */
int proc_gone(long pid);
/* Field `field` (numbered as in proc(5): 1 pid, 2 comm, 3 state, ...,
 * 39 processor) of /proc/PID/stat, as text, into buf (n bytes); the
 * name in field 2 may hold spaces and ")", so the fields after it are
 * counted from its last ")".  0, or -1 where the process is gone, the
 * field is not there or it does not fit. */
int proc_stat_field(long pid, int field, char *buf, size_t n);

#endif
