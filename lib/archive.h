/*
 * archive: a fast sequential scan of a ksci archive (plain or gzip NDJSON;
 * gzip members may be appended one after another) with random access back
 * to any line afterwards.
 *
 * ar_scan decompresses on a second thread and hands each line (without its
 * '\n') to a callback on the calling thread, with its line number and its
 * offset in the uncompressed stream, so decompression and parsing use both
 * cores.  While scanning it remembers where decompression can restart:
 * every gzip member start, and every AR_SPAN bytes of output a block
 * boundary with its bit position and 32 KB window (what zlib's inflatePrime
 * and inflateSetDictionary need).  ar_fetch then returns any line by
 * offset and length after inflating at most about AR_SPAN bytes.  Input
 * that cannot be seeked (a pipe) is copied, as it is read, to an unlinked
 * temporary file that serves ar_fetch later.
 *
 * Ownership: the caller owns an ar_file (ar_close).  The line handed to the
 * callback is valid only during the call.  ar_fetch returns a malloc'd,
 * NUL-terminated copy that the caller frees.  Nothing here prints.
 */
#ifndef KSCI_ARCHIVE_H
#define KSCI_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* Uncompressed bytes between restart points. */
#define AR_SPAN (2u << 20)

struct ar_file;

/* path "-" or NULL: stdin.  NULL on failure, message in errbuf. */
struct ar_file *ar_open(const char *path, char *errbuf);
/* "<stdin>" or the path, for messages. */
const char *ar_name(const struct ar_file *a);

/* Called for every line, blank ones included.  Return 0 to go on,
 * nonzero to stop the scan (ar_scan then returns that value). */
typedef int (*ar_line_fn)(void *ctx, const char *line, size_t len, long lineno, uint64_t off);

/* Returned by ar_scan for a damaged archive. */
#define AR_DAMAGED (-4)

/* Read the whole input once.  0 at the end, the callback's nonzero value if
 * it stopped, -1 on a read error, AR_DAMAGED when the gzip archive is torn,
 * truncated or has garbage after its last member (errbuf holds the message
 * of docs/exit-codes.md: "FILE: damaged at byte N (why); repair with:
 * karchive repair FILE"; lines before the damaged member's last newline were
 * delivered). */
int ar_scan(struct ar_file *a, ar_line_fn fn, void *ctx, char *errbuf);
/* The len bytes at uncompressed offset off, after ar_scan.  NULL + errbuf
 * on failure. */
char *ar_fetch(struct ar_file *a, uint64_t off, size_t len, char *errbuf);
void ar_close(struct ar_file *a);

/*
 * Keeping an archive whole (karchive, docs/tools/karchive.md;
 * lib/archive_file.c).  An archive is a file of gzip members, each a
 * generation's records, each ending in a newline.  Writers append one whole
 * member at a time under an exclusive flock on "FILE.lock"; a torn last
 * member (a writer killed, a full disk) is found by ar_check and cut off by
 * ar_repair, whose cut bytes are kept beside the archive.  These return
 * exit codes of lib/err.h (the message, if any, in errbuf, without the
 * program's name) and print nothing.
 */
struct ar_check {
	int plain;          /* not a gzip archive (its first bytes are not the gzip magic) */
	int damaged;        /* damage_at, reason are set */
	uint64_t size;      /* bytes in the file */
	uint64_t members;   /* whole, valid members before the damage */
	uint64_t records;   /* non-blank lines in them */
	uint64_t good_end;  /* compressed offset just past the last of them: where a repair cuts */
	uint64_t damage_at; /* the first byte of the first damaged member */
	char reason[ERRBUF];
};

/* Walk every member of the open file fd (from its start).  lines: also
 * check every line (nd_parse's rule, lib/ndjson.h) and that each member
 * ends in a newline; otherwise only the gzip structure.  0 (the verdict in
 * *c), or -1 on a read error (errbuf). */
int ar_check_fd(int fd, const char *name, int lines, struct ar_check *c, char *errbuf);
/* karchive check: KSCI_EXIT_OK (whole) or KSCI_EXIT_DAMAGED (not whole, or
 * not gzip), the message in errbuf and the verdict in *c either way;
 * KSCI_EXIT_FATAL when it cannot be read. */
int ar_check_path(const char *path, struct ar_check *c, char *errbuf);
/* karchive repair: under the lock, cut path back to c->good_end after
 * saving the bytes cut as "path.cut-OFFSET"; all fsync'ed, the directory
 * too.  errbuf says what was done (or why not).  KSCI_EXIT_OK (repaired, or
 * nothing to do: c->damaged 0), KSCI_EXIT_DAMAGED (not a gzip archive),
 * KSCI_EXIT_FATAL. */
int ar_repair(const char *path, struct ar_check *c, char *errbuf);

/* karchive append's report of one bad input line ("line N: why"). */
typedef void (*ar_warn_fn)(void *ctx, const char *msg);
/* karchive append: the n bytes of NDJSON at text (all of stdin) as one new
 * gzip member at the end of path (created if missing).  Every line is
 * checked first (nd_parse, and it must read back the same object from its
 * own serialisation); any bad line: each told through warn, nothing
 * appended, KSCI_EXIT_INPUT.  Then, under the lock: a plain or damaged
 * archive is refused (KSCI_EXIT_DAMAGED, nothing appended); a failed write
 * (ENOSPC...) is undone by cutting the file back to its old size
 * (KSCI_EXIT_FATAL, strerror in errbuf).  No records: nothing done.
 * *nrec: the records appended. */
int ar_append(const char *path, const char *text, size_t n, ar_warn_fn warn, void *ctx, uint64_t *nrec,
              char *errbuf);

#endif
