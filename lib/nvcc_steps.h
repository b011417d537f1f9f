/*
 * nvcc_steps: nvcc's own steps for one build, run with the host half and
 * the device half at once.
 *
 * nvcc runs its steps one after another: the host side (gcc -E, cudafe++,
 * gcc -c) and the device side (gcc -E, cicc, ptxas, fatbinary) each take
 * about half of a candidate's compile, and only two things tie them: cicc
 * reads the module id that cudafe++ writes, and the host object includes
 * the device side's fatbinary.  Given nvcc's `--dryrun` listing of the
 * build, nvcc_steps_plan writes a POSIX sh script that runs the very
 * same commands, the two halves side by side: the module id is written
 * first (for both to read), and the host object refers to the fatbinary
 * by a symbol that an object assembled from it afterwards provides.  The
 * device link (nvlink and the link stub), which in a whole-program build
 * has nothing to link, runs beside the halves from the start instead of
 * after them (nvcc_steps.c says when it cannot).  The
 * device code is nvcc's, byte for byte (the same cubin, the same
 * fatbinary; only the module id, which names internal-linkage symbols,
 * is ours).  This is the approach of sccache's nvcc support: nvcc's own
 * plan, run by another scheduler.  docs/gpu.md has what it wins.
 *
 * The script prints each half's output in nvcc's order (the host front
 * end's, then the device's, ...), so a compile log reads as nvcc's does,
 * with an error once; a step killed by a signal kills the script with it.
 *
 * Where the listing is not the shape this knows (another nvcc, other
 * flags), nvcc_steps_plan fails and says why: the caller runs nvcc itself.
 *
 * The prefix.  The device half's preprocessing (gcc -E of the wrapper for
 * the device) spends nearly all its time in the wrapper's header lines
 * (cuda_runtime.h and what it pulls in: 1.3 MB of text for 2 KB of
 * candidate), the same for every candidate of a task.  Given the wrapper's
 * header part (struct nvcc_steps_pre), the plan has a second script,
 * mkpre, that preprocesses those lines once by nvcc's own command: their
 * text (ksci-new.ii), the macros they leave (ksci-new.h and, those
 * defined in system headers, ksci-new.sys: two files for gcc's -imacros),
 * the files they were made from (ksci-new.files, to check they are
 * unchanged) and what gcc said (ksci-new.log); the caller keeps them in
 * its cache (lib/nvcc_prefix.h) and puts them back as ksci-pre.* in
 * NVCC_STEPS_DIR.  Where they are, the build's script preprocesses only
 * the rest of the wrapper (the candidate) with -imacros and joins the two
 * texts; where the rest does what the prefix cannot stand for, it runs
 * nvcc's own command instead and says why in ksci-pre.why.  Exact where
 * taken: the rest starts from the macros the header lines left (those
 * undefined in them undefined again, identifiers they poisoned poisoned),
 * under the same file names, so that cicc's PTX is the same byte for byte
 * (tests/sh/t45-nvcc-prefix.sh compares every seed's cubin both ways).
 * Refused, with nvcc's way kept: the headers use __COUNTER__ or push a
 * macro, or name a header by a relative path (mkpre makes no prefix); the
 * candidate's part has text from a header of the prefix (a header without
 * include guards, #pragma once only, or one meant to be included again),
 * enters a file by a relative name other than the candidate's own, or
 * does not preprocess alone (nvcc's own run then gives the message).
 *
 * All strings are malloc'd; nvcc_steps_free frees them.
 */
#ifndef KSCI_NVCC_STEPS_H
#define KSCI_NVCC_STEPS_H

#include "err.h"

/* The keep directory the listing was made with (`--keep --keep-dir`),
 * relative to the build directory. */
#define NVCC_STEPS_DIR "ksci-steps"

/* The prefix's files in NVCC_STEPS_DIR: ksci-pre.EXT to use, ksci-new.EXT
 * made by mkpre, for EXT in NVCC_PREFIX_EXT (NULL-ended). */
extern const char *const nvcc_prefix_ext[];
#define NVCC_PREFIX_USE "ksci-pre"
#define NVCC_PREFIX_NEW "ksci-new"
/* Why the build did not use the prefix it was given (a line of text). */
#define NVCC_PREFIX_WHY "ksci-pre.why"
/* Why the build ran the device link after the halves, on the joined
 * object, where it was to run beside them (a line of text). */
#define NVCC_DLINK_WHY "ksci-dlink.why"

/* The wrapper's header part. */
struct nvcc_steps_pre {
	const char *src;  /* the wrapper's file name, as the listing names it */
	const char *cand; /* the file it includes after its header part */
	int lines;	  /* its first `lines` lines are the header part */
};

struct nvcc_steps {
	char *script; /* the build, run by sh in the build directory */
	char *mkpre;  /* makes the prefix (sh, in the build directory), or NULL: no prefix */
	char *dev_pp; /* nvcc's device preprocessing command, as listed */
	char pre_why[ERRBUF]; /* with mkpre NULL: why */
};

/* listing: the `#$ ` lines nvcc --dryrun --keep --keep-dir NVCC_STEPS_DIR
 * printed for a build of one .cu into out.so in the current directory;
 * module_id: the id both front ends use (letters, digits, '_'; unique to
 * the source); pre: the header part, or NULL (no prefix); joined: the
 * device link after the halves, on the joined object, always (nvcc's
 * order; else beside the halves where it can be, nvcc_steps.c says why
 * that is the same).  0, or -1 with e (and nothing in out). */
int nvcc_steps_plan(const char *listing, const char *module_id, const struct nvcc_steps_pre *pre, int joined,
		    struct nvcc_steps *out, char *e);
void nvcc_steps_free(struct nvcc_steps *s);

#endif
