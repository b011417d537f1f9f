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

/* Read the whole input once.  0 at the end, the callback's nonzero value if
 * it stopped, -1 on a read or decompression error (errbuf; lines before
 * the error were delivered). */
int ar_scan(struct ar_file *a, ar_line_fn fn, void *ctx, char *errbuf);
/* The len bytes at uncompressed offset off, after ar_scan.  NULL + errbuf
 * on failure. */
char *ar_fetch(struct ar_file *a, uint64_t off, size_t len, char *errbuf);
void ar_close(struct ar_file *a);

#endif
