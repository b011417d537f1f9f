/*
 * cache: where ksci keeps what it can recompute (compiled objects, model
 * answers, device facts): $KSCI_CACHE, else $XDG_CACHE_HOME/ksci, else
 * $HOME/.cache/ksci, else (no $HOME: a daemon, a bare container)
 * /tmp/.cache/ksci.  Every tool asks here, so they all agree on one place.
 * Entries are written with file_write_atomic (lib/file.h), so concurrent
 * slots sharing a cache never see half an entry.
 *
 * And how an entry shows it is still what was stored: its metadata (a JSON
 * object) carries a seal, the SHA-256 of the entry's key and of every other
 * field, and the hash of each file it vouches for (cache_file_sha256), so
 * an edited field, an entry copied under another key or a swapped file no
 * longer matches and the user of the cache rebuilds it.  The seal has no
 * secret: it catches corruption and a file put in by hand, not a writer who
 * recomputes it — the cache must stay the user's own.
 *
 * Paths and keys are borrowed; cache_seal adds to the caller's object.
 */
#ifndef KSCI_CACHE_H
#define KSCI_CACHE_H

#include <jansson.h>
#include <stddef.h>

#include "err.h"

/* <cache>/<sub>, created (with parents) if missing, into buf. */
int cache_dir(const char *sub, char *buf, size_t n, char *errbuf);

/* The field of an entry's metadata that holds its seal. */
#define CACHE_SEAL "entry_sha256"
/* Seal meta for key: SHA-256 of "ksci-cache-entry-v1", key and meta
 * without CACHE_SEAL (compact, keys sorted, so a load and dump of the file
 * gives the same text), set as meta[CACHE_SEAL].  0, or -1: out of memory. */
int cache_seal(json_t *meta, const char *key);
/* 1: meta's seal matches key and its fields; 0: it does not (or is not a
 * string); -1: meta has no seal (written before entries were sealed). */
int cache_seal_check(const json_t *meta, const char *key);
/* SHA-256 of a file's bytes, as 64 lower-case hex digits and a NUL.
 * 0, or -1 with errbuf. */
int cache_file_sha256(const char *path, char hex[65], char *errbuf);

#endif
