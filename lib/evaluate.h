/*
 * evaluate: the part of kverify and ktime that runs one record's candidate in
 * the sandboxed harness (kharness, or kharness-cuda for `cuda`) and writes
 * the outcome into the record's stage object and status.  Compiles the
 * candidate and the task's reference / baseline / seed first through the
 * compile cache, so a record from another machine needs nothing but its
 * source.  The record is modified in place; nothing is returned to own.
 */
#ifndef KSCI_EVALUATE_H
#define KSCI_EVALUATE_H

#include <getopt.h>
#include <jansson.h>
#include <stdint.h>

#include "compile.h"
#include "err.h"
#include "judge/hot.h"
#include "sandbox.h"

/* ktime --stop-stat's words, NULL-ended: the standard error of each role's
 * mean, of its median, or of the paired ratios between roles (the job's
 * "stop_stat"; docs/tools/ktime.md). */
extern const char *const stop_stats[];

struct eval_opts {
	const char *mode;     /* "verify" or "time" */
	double timeout_s;     /* wall-clock limit for the whole harness run */
	long mem_mb;          /* address-space limit for host back ends (0: none) */
	int nseeds;           /* verify: input seeds per test size */
	uint64_t seed;        /* 0: fresh seeds from the OS for every record */
	const char *sizes;    /* verify: "tests" or "all" (tests + benchmark sizes) */
	double budget_s;      /* time: per benchmark size */
	double target_rel_sem;
	int stop_stat;        /* time: what the target bounds, an index into stop_stats (ktime --stop-stat; -1: the back end's, paired on a GPU, the mean on the CPU) */
	int wake_cpu;         /* time, GPU: wake a child's CPU before each request (ktime --wake-cpu: an index into hot_modes, judge/hot.h; 1 in ktime, 0 elsewhere) */
	int min_runs, max_runs;
	int processes;        /* time: processes per role (0: the back end's default) */
	double batch_s;       /* time: seconds one batch lasts (0: the back end's default) */
	double arena_mb;      /* time: the arena's budget in MiB (0: the back end's default) */
	double peak_gbps, peak_gflops; /* time: peaks given instead of the measured ones (0: measured) */
	double peak_dram_gbps;         /* time: the DRAM's rated bandwidth given (0: NVML's) */
	double noise;         /* time: the method's relative spread between judges, for intervals (0: the back end's) */
	double stop_below;    /* time: stop a candidate whose speedup vs the seed falls below this (0: never) */
	json_t *stop_below_sizes; /* time: per size label (task_size_str), that size's own bound; NULL: none (owned) */
	int anchor_every;     /* time, long-lived judge: baseline and seed timed again after this many candidates (0: with every one; -1: the back end's default, 8 on a GPU, 0 on the CPU) */
	int force;            /* redo records already past this stage */
	int retime;           /* time: a candidate timed before (lib/timecache.h): 1 confirmed at one size, 0 timed in full, -1 confirmed unless force */
	double confirm_pct;   /* time: how far (per cent) a confirmation's speed-up may be from the earlier one's */
	int unsafe_no_sandbox; /* run candidates without bubblewrap (the user said so) */
	int fresh_judge;      /* a new judge process for every record (default: one long-lived judge per back end) */
	struct compile_opts copt;
	struct sbx sbx;       /* set by eval_init */
};

/* ktime --best-sizes: the JSON object text s, {"SIZE": best speedup over the
 * seed at that size, ...} (SIZE as task_size_str writes it, "rows=4096
 * cols=4096"), into a new object of the same keys with each value times
 * factor (the bounds of --stop-slower).  NULL with errbuf (naming option)
 * when s is no such object or a value is outside 1e-6..1e9. */
json_t *eval_size_bounds(const char *option, const char *s, double factor, char *errbuf);

/* After the options: set up the sandbox candidates run in (lib/sandbox.h).
 * -1 + errbuf when bubblewrap cannot run here and the user did not pass
 * --unsafe-no-sandbox: the tool then refuses to start. */
int eval_init(struct eval_opts *o, char *errbuf);
/* After the last record: stop the long-lived judges and remove their stage
 * directory (lib/evaluate.c). */
void eval_finish(void);

/* Process one record.  Returns 0 when the record went through (whatever the
 * candidate did), 1 when the record itself was bad (it is marked invalid);
 * *msg (static) then says why, for the tool's warning. */
int eval_record(json_t *rec, const struct eval_opts *o, const char **msg);
/* The options kverify and ktime share, by their getopt letters: f --force,
 * t --timeout, m --mem, s --seed, T --tasks, U --unsafe-no-sandbox, F --fresh-judge.  1 when ch was one of them,
 * 0 when not, -1 for a bad value (errbuf says which). */
int eval_option(struct eval_opts *o, int ch, const char *arg, char *errbuf);
/* The getopt_long entries of the options eval_option parses (and --help), for
 * the head of kverify's and ktime's option tables: one list, so the two
 * tools cannot drift apart. */
#define EVAL_LONGOPTS                                                                  \
	{"force", no_argument, 0, 'f'}, {"timeout", required_argument, 0, 't'},          \
		{"mem", required_argument, 0, 'm'}, {"seed", required_argument, 0, 's'}, \
		{"tasks", required_argument, 0, 'T'}, {"unsafe-no-sandbox", no_argument, 0, 'U'}, \
		{"fresh-judge", no_argument, 0, 'F'}, \
		{"help", no_argument, 0, 'h'}

struct tool;
/* tool_fn for kverify and ktime: eval_record, a warning naming the line
 * when the record was bad, and the record written on (ctx: struct eval_opts). */
int eval_tool_fn(struct tool *t, json_t *rec, void *ctx);
/* Path of the harness binary for a back end: $KSCI_HARNESS_DIR or the
 * directory of the running executable. */
int eval_harness_path(const char *backend, char *buf, size_t n);

#endif
