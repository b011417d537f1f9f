/*
 * tool: the record loop every ksci filter shares.
 *
 * tool_run reads records from each input in turn, calls the tool's function
 * on each, and keeps the exit status of the contract in err.h: a line that is
 * not JSON is reported with its line number and skipped (exit 1); a record
 * the function marks bad is still written (exit 1); a write error stops
 * everything (exit 3), and so does a damaged gzip input (exit 4, with the
 * message of docs/exit-codes.md: lib/ndjson.h).  The function owns nothing: it emits (possibly
 * several) records through tool_emit and the loop frees the input record.
 *
 * The ends of a tool are here too, so every tool ends the same way (jq's
 * main.c "out:", sbase's fshut): tool_usage prints --help or the usage of a
 * usage error, tool_exit checks stdout once more before the exit code is
 * returned, and a write error is reported once per process, however many
 * writes fail after it.  Exit codes come from these return values only.
 */
#ifndef KSCI_TOOL_H
#define KSCI_TOOL_H

#include <jansson.h>
#include <stdio.h>

struct tool {
	FILE *out;
	const char *input; /* name of the current input, for messages */
	long line;         /* line number of the current record */
	int status;        /* exit code so far */
	/* jobs > 1: up to jobs records at once, each in a forked process of
	 * its own (no state is shared, so the tool's function need not be
	 * thread-safe), their output written in input order.  lost is called
	 * with a record whose process died before writing it whole (a signal,
	 * out of memory): it marks the record failed, and it is written on
	 * (NULL: status "invalid" with the reason). */
	int jobs;
	void (*lost)(json_t *rec, const char *why);
	/* jobs > 1, optional: each record a process wrote, read back here in
	 * input order; collect emits it (tool_emit) or what stands for it.
	 * For state the processes could not share (kgen: the ids made in
	 * this run).  rec is borrowed. */
	void (*collect)(struct tool *t, json_t *rec, void *ctx);
	void *collect_ctx;
};

/* Process one record; emit what should go on.  Return 0, or 1 when the
 * record was bad input (it should still have been emitted, marked). */
typedef int (*tool_fn)(struct tool *t, json_t *rec, void *ctx);

/* Run over paths[0..n) ("-" = stdin; n == 0 means stdin), t->jobs records
 * at a time.  Returns the exit code. */
int tool_run(struct tool *t, char *const *paths, int n, tool_fn fn, void *ctx);
/* Write rec as one line.  A failure to write is fatal (sets status 3, returns -1). */
int tool_emit(struct tool *t, const json_t *rec);
/* Report a problem with the current record: "prog: <input>: line N: msg". */
void tool_warn(struct tool *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A warn callback for lib code with something to say that is about no one
 * record (struct compile_opts.warn: a cache entry being rebuilt):
 * "prog: msg".  ctx is not used. */
void tool_warn_cb(void *ctx, const char *msg);

/* "prog: write error: <strerror>" on stderr, the first time only.  Call with
 * errno as the failed write left it.  Returns KSCI_EXIT_FATAL. */
int tool_write_error(void);
/* code 0 (--help): usage and help on stdout.  Otherwise (a usage error,
 * already explained by a message): usage on stderr.  Returns code, or
 * KSCI_EXIT_FATAL when stdout could not be written (after tool_write_error). */
int tool_usage(int code, const char *usage, const char *help);
/* The last thing a tool does: flush and close stdout (a full disk is an error,
 * not silence).  Returns code, or KSCI_EXIT_FATAL after tool_write_error. */
int tool_exit(int code);

#endif
