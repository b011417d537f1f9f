/*
 * sandbox: the jail untrusted code runs in, built with bubblewrap (Debian's
 * `bubblewrap`; ksci writes no namespace code of its own).
 *
 * A jailed program sees a read-only /usr (the toolchain and the libraries,
 * with the merged-/usr links), /etc/ld.so.cache and /etc/alternatives, a
 * fresh /dev, a fresh /proc of its own pid namespace, an empty tmpfs /tmp (1 GiB at most),
 * and exactly the paths
 * the caller binds (read-only, or read-write where asked), nothing else of
 * the host: no home, no caller's files, no compile cache, no sockets.  It
 * runs as nobody (65534) in new user, pid, ipc, uts, network and cgroup
 * namespaces, with an empty environment (plus PATH, HOME=/tmp and what the
 * caller names), in a new session, and dies with its parent; when its pid 1
 * ends, every process it started ends too, setsid or not.
 *
 * Where bubblewrap cannot make those namespaces (not installed, user
 * namespaces off), sbx_init fails and says why; running untrusted code
 * anyway is the caller's explicit choice (SBX_NONE, "--unsafe-no-sandbox"),
 * and every record says which sandbox judged it (sbx_name).
 *
 * A NULL struct sbx means SBX_NONE everywhere below.
 *
 * Ownership: struct sbx is the caller's; sbx_argv returns a malloc'd argv
 * whose strings are malloc'd too, freed with sbx_argv_free.  Nothing here
 * prints.
 */
#ifndef KSCI_SANDBOX_H
#define KSCI_SANDBOX_H

#include <limits.h>

#include "err.h"

enum sbx_kind { SBX_BWRAP, SBX_NONE };

/* The PATH a jailed program gets. */
#define SBX_PATH "/usr/local/bin:/usr/bin:/bin"

struct sbx {
	enum sbx_kind kind;
	char bwrap[PATH_MAX]; /* the bwrap program: $KSCI_BWRAP, else "bwrap" on PATH */
};

/* A path to bind into the jail at the same place. */
struct sbx_bind {
	const char *path;
	int rw; /* read-write; else read-only */
};

/* SBX_BWRAP: find bwrap and check, by running `true` in a jail once, that it
 * works here; -1 + errbuf saying why not.  SBX_NONE: always 0. */
int sbx_init(struct sbx *s, enum sbx_kind kind, char *errbuf);
/* "bubblewrap" or "none", for the record. */
const char *sbx_name(const struct sbx *s);
/* The argv that runs prog (argv[0] a path) in the jail, with binds[0..nbinds)
 * bound (a missing path is skipped), the GPU device nodes (/dev/nvidia*,
 * /dev/dri) and /sys when gpu, and env ("NAME=VALUE", NULL-terminated, may
 * be NULL) set inside, starting in cwd (NULL: /tmp; it must be bound).
 * SBX_NONE: a copy of prog.  NULL when out of memory. */
char **sbx_argv(const struct sbx *s, char *const *prog, const struct sbx_bind *binds, int nbinds, int gpu,
		const char *const *env, const char *cwd);
void sbx_argv_free(char **argv);
struct proc_result;
/* After proc_run of a jailed program: bwrap's pid 1 reports its child's
 * death by signal N as exit 128+N (the shell's convention); put it back as
 * the signal it was, so messages say "killed by signal 11". */
void sbx_result(const struct sbx *s, struct proc_result *r);

#endif
