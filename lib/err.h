/*
 * err: the one way ksci programs report problems, and the exit-code contract.
 *
 * Every tool calls err_init(argv[0]) first; messages then read
 * "kcompile: line 12: missing field \"source\"".  lib code never prints to
 * stdout and never exits: it fills a caller-supplied char buffer (see
 * ERRBUF) or returns -1, and the tool decides what to say.  Strings passed in
 * are borrowed; nothing here allocates.
 */
#ifndef KSCI_ERR_H
#define KSCI_ERR_H

#include <stdarg.h>
#include <stddef.h>

/* Exit codes shared by all tools (docs/exit-codes.md). */
enum ksci_exit {
	KSCI_EXIT_OK = 0,      /* every line read was a record and was processed */
	KSCI_EXIT_INPUT = 1,   /* some input was bad: reported, passed on marked, or (non-JSON) skipped */
	KSCI_EXIT_USAGE = 2,   /* bad command line; nothing was read */
	KSCI_EXIT_FATAL = 3,   /* could not go on: output not writable, out of memory, input unreadable */
	KSCI_EXIT_DAMAGED = 4, /* an archive is torn or truncated: reported with its byte offset, nothing read past it */
};

/* Size of the message buffers lib functions fill on error. */
#define ERRBUF 512

void err_init(const char *argv0);
const char *err_prog(void);
/* "prog: WHERE: msg[: strerror(errno)]\n" on stderr (no "WHERE: " when
 * where is NULL), as one write(2) so that the lines of processes sharing
 * stderr never run into each other; a line over 4 KiB is cut, marked. */
void err_vsay(const char *where, const char *fmt, va_list ap, int with_errno);
/* "prog: msg\n" on stderr. */
void warnx_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "prog: msg: strerror(errno)\n" on stderr. */
void warn_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print like warnx_ and exit with code. Only tools call this. */
_Noreturn void die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* snprintf into an ERRBUF-sized buffer, returns -1 for "return errf(...)". */
int errf(char *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
