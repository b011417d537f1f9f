/*
 * nvcc_steps: nvcc's own steps for one build, run with the host half and
 * the device half at once.
 *
 * nvcc runs its steps one after another: the host side (gcc -E, cudafe++,
 * gcc -c) and the device side (gcc -E, cicc, ptxas, fatbinary) each take
 * about half of a candidate's compile, and only two things tie them: cicc
 * reads the module id that cudafe++ writes, and the host object includes
 * the device side's fatbinary.  Given nvcc's `--dryrun` listing of the
 * build, nvcc_steps_script writes a POSIX sh script that runs the very
 * same commands, the two halves side by side: the module id is written
 * first (for both to read), and the host object refers to the fatbinary
 * by a symbol that an object assembled from it afterwards provides.  The
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
 * flags), nvcc_steps_script returns NULL and says why: the caller runs
 * nvcc itself.  The script is malloc'd; the caller frees it.
 */
#ifndef KSCI_NVCC_STEPS_H
#define KSCI_NVCC_STEPS_H

#include "err.h"

/* The keep directory the listing was made with (`--keep --keep-dir`),
 * relative to the build directory. */
#define NVCC_STEPS_DIR "ksci-steps"

/* listing: the `#$ ` lines nvcc --dryrun --keep --keep-dir NVCC_STEPS_DIR
 * printed for a build of one .cu into out.so in the current directory;
 * module_id: the id both front ends use (letters, digits, '_'; unique to
 * the source).  The script, or NULL with e. */
char *nvcc_steps_script(const char *listing, const char *module_id, char *e);

#endif
