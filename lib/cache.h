/*
 * cache: where ksci keeps what it can recompute (compiled objects, model
 * answers, device facts): $KSCI_CACHE, else $XDG_CACHE_HOME/ksci, else
 * $HOME/.cache/ksci, else (no $HOME: a daemon, a bare container)
 * /tmp/.cache/ksci.  Every tool asks here, so they all agree on one place.
 * Entries are written with file_write_atomic (lib/file.h), so concurrent
 * slots sharing a cache never see half an entry.  Nothing here allocates.
 */
#ifndef KSCI_CACHE_H
#define KSCI_CACHE_H

#include <stddef.h>

#include "err.h"

/* <cache>/<sub>, created (with parents) if missing, into buf. */
int cache_dir(const char *sub, char *buf, size_t n, char *errbuf);

#endif
