/*
 * judge/child: what runs in a role's child process (kharness --child ROLE
 * [LIB]), started by the judge (judge/kid.h).  Nothing is returned to the
 * caller but an exit status; the child's whole exchange with the judge is
 * the control page (judge/ctl.h).
 */
#ifndef KSCI_JUDGE_CHILD_H
#define KSCI_JUDGE_CHILD_H

#include "../dev.h"

/* Serve the judge's requests on the control page at JCTL_FD with LIB's
 * ksci_call (NULL: only empty calls): start the device, install the seccomp
 * filter, then load LIB.  Returns the process's exit status. */
int harness_child(const struct dev_ops *d, const char *role, const char *lib);

#endif
