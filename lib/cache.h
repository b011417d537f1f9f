/*
 * cache: where ksci keeps what it can recompute (compiled objects, model
 * answers): $KSCI_CACHE, else $XDG_CACHE_HOME/ksci, else $HOME/.cache/ksci.
 * Entries are written to a temporary name and renamed into place, so
 * concurrent slots sharing a cache never see half an entry.
 */
#ifndef KSCI_CACHE_H
#define KSCI_CACHE_H

#include <stddef.h>

#include "err.h"

/* <cache>/<sub>, created (with parents) if missing, into buf. */
int cache_dir(const char *sub, char *buf, size_t n, char *errbuf);
/* mkdir -p. */
int cache_mkdirs(const char *path, char *errbuf);
/* Write len bytes to path atomically (temp file in the same dir + rename). */
int cache_write_file(const char *path, const void *data, size_t len, char *errbuf);
/* Read a whole file; *out is malloc'd and NUL-terminated (caller frees). */
int cache_read_file(const char *path, char **out, size_t *len, char *errbuf);

#endif
