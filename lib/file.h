/*
 * file: the three things ksci does to whole files, each written once (after
 * sbase's libutil: one job a function) — make a directory with its parents,
 * read a whole file into memory, and replace a file atomically.
 *
 * file_write_atomic writes to a temporary name in the same directory and
 * renames it into place, so a reader (another slot sharing a cache, a
 * concurrent kgen) sees the old file or the new one, never half of one.
 *
 * Ownership: paths are borrowed.  file_read's text is malloc'd and belongs to
 * the caller.  All three return 0, or -1 with a message in errbuf (ERRBUF
 * bytes); nothing here prints or exits.
 */
#ifndef KSCI_FILE_H
#define KSCI_FILE_H

#include <stddef.h>

#include "err.h"

/* mkdir -p: path and every missing parent (mode 0777 less the umask). */
int file_mkdirp(const char *path, char *errbuf);
/* The whole file, NUL-terminated, in *out (caller frees); *len when len is
 * not NULL.  The NUL is not counted and the text may hold other NULs. */
int file_read(const char *path, char **out, size_t *len, char *errbuf);
/* Replace path by len bytes of data, atomically (temporary file + rename). */
int file_write_atomic(const char *path, const void *data, size_t len, char *errbuf);

#endif
