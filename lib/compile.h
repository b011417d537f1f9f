/*
 * compile: turn a source (a candidate, or a task's reference/baseline/seed)
 * into a shared object exporting ksci_call, through the back end's compiler
 * run as a limited child process, with a content-addressed cache: the key is
 * SHA-256 of compiler identity, flags, host CPU (for -march=native), the
 * generated wrapper and the source, so the same source is never compiled
 * twice — failures are cached too, since they are just as deterministic,
 * except those of the machine (a full disk, a killed compiler: the stage's
 * "transient"), which are handed on and never stored.
 * An entry is used only while it matches the hashes recorded when it was
 * stored (compile.c says how); one that does not is rebuilt.
 *
 * compile_source fills a caller-owned struct compile_out; its `stage` is a
 * new JSON reference the caller owns (the record's "compile" object).
 */
#ifndef KSCI_COMPILE_H
#define KSCI_COMPILE_H

#include <jansson.h>
#include <limits.h>

#include "err.h"
#include "sandbox.h"
#include "task.h"

struct compile_opts {
	const char *cuda_arch; /* default $KSCI_CUDA_ARCH or sm_90a */
	const char *hip_arch;  /* default $KSCI_HIP_ARCH or gfx90a */
	double timeout_s;      /* default 120 */
	int no_cache;          /* compile even on a hit (the result still replaces the entry) */
	const struct sbx *sbx; /* the jail the compiler runs in (lib/sandbox.h); NULL: none */
	/* Told (when set) what a person should hear that is no record's fault:
	 * a cache entry that failed its check and is being rebuilt.  The tool
	 * prints it (lib/tool.h tool_warn_cb). */
	void (*warn)(void *ctx, const char *msg);
	void *warn_ctx;
};

struct compile_out {
	int ok;
	json_t *stage;     /* {"ok","status","seconds","cached","key","compiler","flags","artifact",
			    * "artifact_sha256","log","resources"} */
	char so[PATH_MAX]; /* the shared object when ok */
};

/* role: "candidate" (source given) or "reference"/"baseline"/"seed" (source
 * NULL: read from the task).  0 when a result was produced (ok or not);
 * -1 when compiling could not even be attempted (errbuf says why). */
int compile_source(const struct task *t, const char *backend, const char *role, const char *source,
		   const struct compile_opts *o, struct compile_out *out, char *errbuf);

/* Parse `ptxas -v` output into {"kernels": [...], "max_registers", "max_smem_bytes", "spills"}
 * (new reference; NULL when the text has no ptxas lines). */
json_t *compile_parse_ptxas(const char *log);
/* Parse clang's -Rpass-analysis=kernel-resource-usage remarks (HIP) likewise. */
json_t *compile_parse_amdgpu(const char *log);

#endif
