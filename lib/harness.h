/*
 * harness: the judge (kharness): generate inputs from seeds, run the
 * reference, hand the inputs and poisoned outputs to a role's child process
 * (lib/judge/kid.h) that runs the role's kernel, read the outputs back
 * itself and compare, and time candidate / baseline / seed in batches
 * interleaved, by its own clock.  It talks to the device through struct
 * dev_ops (dev.h), so the same logic serves host C and CUDA.
 *
 * The job and the result are JSON (docs/harness.md).  harness_run returns a
 * new result object the caller owns.  The judge loads the task's reference
 * (trusted) and never a candidate's, baseline's or seed's library: those
 * are loaded by their own child processes (judge/child.h).
 */
#ifndef KSCI_HARNESS_H
#define KSCI_HARNESS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "dev.h"
#include "err.h"

/* Run a job; returns the result object, or NULL with errbuf set when the job
 * itself is malformed or the reference cannot be loaded.  self: the path
 * the children are started from (this program). */
json_t *harness_run(const struct dev_ops *d, const json_t *job, const char *self, char *errbuf);

/* The plausibility guard on a timing's sizes (each as in time.sizes):
 * NULL where every size is plausible, else the record's time.implausible
 * {"sizes", "rechecked": false, "message"} (the caller's): a size whose
 * bytes or flops per second beat peak (the job's "peak": "copy_gbps",
 * "dram_gbps"; pct_peak_bw, pct_peak_flops) or whose batches were mostly
 * the judge's exchange with its child (exchange_share above 0.9). */
json_t *harness_implausible(const json_t *sizes, const json_t *peak);

/* A judge that serves many jobs (kharness --serve) keeps its arena and the
 * baseline's, seed's and calibration children between them (harness.c,
 * struct keep); off: each job makes and ends its own. */
void harness_keep(int on);
/* After a job's answer is written and flushed: start the spare candidate
 * child the next job will load its candidate into, where the job asked for
 * one (harness.c), so that its start is not part of this job's time. */
void harness_after_job(void);
/* A job that said "spare_asked": true leaves its spare to this, which the
 * judge runs when its caller asks ({"op": "spare"}, kharness --serve): on a
 * GPU the caller asks while it holds the GPU lock (shared), so that no
 * device context is made while another process times (docs/harness.md).
 * Starts the spare the last job wanted and waits until it is ready (until
 * deadline, proc_now() seconds): "ready", "none" (the last job wanted
 * none), or "failed" (e says why; the next job starts its own child). */
const char *harness_spare_now(double deadline, char *errbuf);

#endif
