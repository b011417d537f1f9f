/*
 * nvcc_prefix: the prefix of nvcc's device half (lib/nvcc_steps.h: the
 * wrapper's header part preprocessed once) kept in the cache, one entry a
 * key: <cache>/nvcc-prefix/<key>/ holds its five files (pre.EXT, EXT in
 * nvcc_prefix_ext) and entry.json: each file the prefix was made from (the
 * headers it entered, the host compiler and its cc1plus) with its inode,
 * size and mtime, and the SHA-256 of the five, sealed (lib/cache.h).
 * The key is the caller's: it names the host (inodes and mtimes are one
 * host's), nvcc, the device preprocessing command and the header part.
 *
 * A fetch checks everything before the prefix is used: the seal, that no
 * file it was made from was replaced, rewritten or touched since (a
 * package upgrade, a CUDA reinstalled), and the five files' hash — then
 * copies them into the build's NVCC_STEPS_DIR (the jail sees only the
 * build directory).  Anything else is a miss, and the caller makes the
 * prefix again.  Checking is 200 stat calls and one hash of 1.3 MB for
 * cuda_runtime.h's prefix (about 12 ms here, of the 0.1-0.3 s the prefix
 * saves a compile; docs/gpu.md).
 *
 * Paths and keys are borrowed; nothing outlives a call.
 */
#ifndef KSCI_NVCC_PREFIX_H
#define KSCI_NVCC_PREFIX_H

#include <time.h>

#include "err.h"

/* 1: key's entry in root is whole and its files are unchanged; they are
 * now DIR/NVCC_STEPS_DIR/ksci-pre.*.  0: none, or one that may not be used
 * (why says which; a broken one is removed).  dir: the build directory. */
int nvcc_prefix_fetch(const char *root, const char *key, const char *dir, char *why);

/* The prefix mkpre made in DIR/NVCC_STEPS_DIR (ksci-new.*) stored as key's
 * entry, and moved to ksci-pre.* for the build.  t0: when the making
 * started, by CLOCK_REALTIME_COARSE (the clock of files' times): a file
 * it was made from changed since is refused, as the prefix may have read
 * it half-written.  0, or -1 with why (nothing moved). */
int nvcc_prefix_store(const char *root, const char *key, const char *dir, const struct timespec *t0, char *why);

#endif
