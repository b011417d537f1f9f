/*
 * timecache: the time stage's results, kept so that a candidate timed
 * before is confirmed instead of timed again in full (ktime --retime,
 * docs/tools/ktime.md "Timed before").  An entry is the time stage's whole
 * result for one key — SHA-256 of everything the figures depend on that the
 * caller knows before it asks the judge: the objects of every role (by
 * their hashes), the task's definition, the harness, the timing options and
 * the device — in <cache>/time/<key>.json, sealed (lib/cache.h) and written
 * atomically, so a slot sharing the cache never sees half of one.
 *
 * The claim a served entry makes is weaker than a full timing's and the
 * record says so: the figures are the earlier run's; now one size was timed
 * again with a few batches beside the seed, and the two speed-ups agreed
 * within a tolerance.  Only full, plausible, ok timings are kept.
 *
 * Ownership: keys, paths and objects passed in are borrowed; what a
 * function returns as json_t * is a new reference the caller owns.
 */
#ifndef KSCI_TIMECACHE_H
#define KSCI_TIMECACHE_H

#include <jansson.h>
#include <stddef.h>

#include "err.h"

/* Whether res (the judge's answer to a full time job) may be kept: ok,
 * every benchmark size timed, not slow, not implausible. */
int tcache_keepable(const json_t *res);
/* The device a time result was measured on, from its env: "cuda GPU-<uuid>
 * driver D" for a GPU, "cpu MODEL xN kernel K on HOST" for the host back
 * end, into buf; "" when env says too little. */
void tcache_device(const json_t *env, char *buf, size_t n);
/* The entry of key, without its seal: NULL when there is none; NULL with
 * errbuf set when one is there but does not match its seal or is not a
 * time result (the caller times in full and says so once). */
json_t *tcache_load(const char *key, char *errbuf);
/* Keep res under key (the fields of one run — log, seconds, judge, waits —
 * are left out; "stored_at" is added).  0, or -1 with errbuf. */
int tcache_store(const char *key, const json_t *res, char *errbuf);
/* The benchmark size to confirm entry at: the index in bench (the task's
 * benchmark sizes for the back end) of the size where the entry's
 * candidate was quickest, so the confirmation costs least; -1 when the
 * entry's sizes are not bench's. */
int tcache_confirm_size(const json_t *entry, const json_t *bench);
/* Whether entry may serve a job whose --stop-slower bound is stop_below
 * (0: none) or, per size label, stop_sizes (NULL: none): every size's
 * speed-up over the seed at or above its bound (else the full timing says
 * `slow`, as it would have). */
int tcache_within_bounds(const json_t *entry, double stop_below, const json_t *stop_sizes);
/* Compare the confirmation conf (the judge's answer for one size) with
 * entry: 1 when both name the same device and the speed-up (over the seed,
 * else over the baseline) at that size differs by less than tol_pct per
 * cent; 0 when not.  *note (new) says what was compared, for the record's
 * time.retime. */
int tcache_agree(const json_t *entry, const json_t *conf, double tol_pct, json_t **note);

/* When the entry was stored (its "stored_at"), or "?" for one without. */
const char *tcache_stored_at(const json_t *entry);

#endif
