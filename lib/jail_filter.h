/*
 * jail_filter: the seccomp filter (Debian's libseccomp) the judge's candidate
 * child installs on itself right before it dlopen()s untrusted kernel code.
 * The bubblewrap jail (sandbox.h) keeps that code away from the host; this
 * keeps it away from the judge that shares the jail with it: once loaded it
 * cannot start processes, exec, read or signal other processes, nor make new
 * namespaces, mounts or other kernel surfaces (bpf, io_uring, keyrings,
 * userfaultfd, perf events, modules).  Everything else is allowed, threads
 * too, so CUDA and OpenMP work; a denied call fails with EPERM (clone3 with
 * ENOSYS, so glibc falls back to clone), so kernel code sees an error rather
 * than a kill.  The full list and the reasons are at the top of jail_filter.c.
 *
 * The filter is irreversible and inherited; it holds the caller's pid as of
 * the install (signals may go only to that pid).  It covers the native
 * architecture only (x86-64 or aarch64): a system call made through another
 * ABI on the same kernel (i386's int 0x80, x32) kills the process.
 *
 * Ownership: nothing is allocated that outlives the call.  Nothing here
 * prints.
 */
#ifndef KSCI_JAIL_FILTER_H
#define KSCI_JAIL_FILTER_H

#include "err.h"

/* Install the filter on the calling process (all its threads:
 * SCMP_FLTATR_CTL_TSYNC), with no_new_privs set.  0, or -1 with errbuf
 * saying why (then nothing was installed). */
int jail_filter_install(char *errbuf);

#endif
