/*
 * rec: the candidate record (docs/record.md) — field access, ids, stage
 * objects and statuses.
 *
 * Records are jansson objects owned by the caller.  Getters return borrowed
 * pointers into the record (valid while it lives and the field is not
 * replaced).  Setters copy what they are given.  Fields this module does not
 * know are never touched, so tools pass them through unchanged.
 */
#ifndef KSCI_REC_H
#define KSCI_REC_H

#include <jansson.h>
#include <stddef.h>

#include "err.h"

/* Bound on any stored log: the first REC_LOG_HEAD and last REC_LOG_TAIL bytes are kept. */
#define REC_LOG_HEAD 12288
#define REC_LOG_TAIL 4096
#define REC_ID_LEN 16

/* Statuses (top-level "status"); docs/record.md says which stage sets each. */
#define ST_SELECTED "selected"
#define ST_GENERATED "generated"
#define ST_GEN_ERROR "gen_error"
#define ST_INVALID "invalid"
#define ST_COMPILED "compiled"
#define ST_COMPILE_ERROR "compile_error"
#define ST_VERIFIED "verified"
#define ST_WRONG "wrong"
#define ST_CRASHED "crashed"
#define ST_TIMEOUT "timeout"
#define ST_UNSUPPORTED "unsupported"
#define ST_TIMED "timed"
#define ST_SLOW "slow" /* verified, timing stopped early: far slower than the best (ktime --stop-slower) */

/* A final status in which the candidate itself failed: compile_error,
 * wrong, crashed, timeout (the fix stage's input, the bandit's bad pull). */
int rec_status_failed(const char *st);
/* A status no later stage changes: the failed ones, timed, unsupported,
 * gen_error, invalid. */
int rec_status_final(const char *st);
/* A judge's result status (docs/harness.md) after which a long-lived judge
 * goes on to the next job: "ok", wrong, slow, unsupported.  After any other
 * (a child crashed or hung, a device error) it is replaced. */
int rec_judge_goes_on(const char *st);

/* The back ends, in one list: "c", "cuda", "hip", then NULL. */
extern const char *const rec_backends[];
/* Whether b names one of them (NULL: no). */
int rec_backend_known(const char *b);

const char *rec_str(const json_t *rec, const char *key);
/* Number field as double; NAN when missing or not a number. */
double rec_num(const json_t *rec, const char *key);
/* Follow a dotted path ("time.speedup_vs_seed"); borrowed, NULL if absent. */
json_t *rec_path(const json_t *rec, const char *path);

/* The first of keys (NULL-terminated) that is missing or not a string;
 * NULL when all are present. */
const char *rec_missing_str(const json_t *rec, const char *const *keys);

/* id = first REC_ID_LEN hex of sha256("ksci-v1\0" task "\0" backend "\0" source). */
void rec_make_id(const char *task, const char *backend, const char *source, char out[REC_ID_LEN + 1]);
/* Set "id" from the record's task/backend/source; -1 if one is missing. */
int rec_set_id(json_t *rec);

void rec_set_status(json_t *rec, const char *status);
/* The stage object rec[stage], created empty if absent (borrowed). */
json_t *rec_stage(json_t *rec, const char *stage);
/* Store log text under key "log" of obj, cut to the documented bound;
 * sets "log_truncated" when it cut. */
void rec_set_log(json_t *obj, const char *key, const char *text, size_t len);
/* Replace rec[stage] by {"ok":false,"status":status,"message":msg} and set the
 * top-level status to top_status.  msg is copied. */
void rec_fail(json_t *rec, const char *stage, const char *stage_status, const char *top_status, const char *msg);
/* A record this tool cannot process at all (missing field, unknown task):
 * status "invalid" and "error": {"tool","line","message"}. */
void rec_invalid(json_t *rec, const char *tool, long line, const char *msg);

#endif
