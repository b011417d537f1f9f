/*
 * jail_filter: the seccomp filter of jail_filter.h.
 *
 * Default ALLOW, then a deny list: kernel code needs threads, memory, files,
 * ioctls on the GPU nodes, prctl, dlopen (mmap PROT_EXEC) and its own
 * signals, and an allow list would break on the next CUDA or glibc release.
 * What is denied (EPERM unless said), and why:
 *
 *   new processes   fork, vfork; clone without CLONE_THREAD, or with a
 *                   CLONE_NEW* namespace flag; clone3 with ENOSYS (seccomp
 *                   cannot read its flags, which lie in memory; glibc's
 *                   pthread_create and posix_spawn then fall back to clone).
 *                   A CLONE_THREAD clone shares the address space
 *                   (CLONE_THREAD needs CLONE_SIGHAND, which needs CLONE_VM)
 *                   and this filter, so threads stay what they look like.
 *   exec            execve, execveat: the loaded code stays the only new code.
 *   other processes ptrace, process_vm_readv/writev, process_madvise, kcmp,
 *                   pidfd_getfd, pidfd_send_signal, tkill (glibc signals
 *                   threads with tgkill); kill, tgkill, rt_sigqueueinfo,
 *                   rt_tgsigqueueinfo and pidfd_open unless their pid
 *                   (argument 0) is the caller's own, so raise(),
 *                   pthread_kill() and sigqueue() to itself still work but the
 *                   judge cannot be signalled; prlimit64 unless its pid is 0
 *                   (glibc's getrlimit/setrlimit pass 0), because a same-uid
 *                   process may set another's limits (RLIMIT_CPU would end
 *                   the judge).
 *   namespaces,     unshare, setns, mount, umount, umount2, pivot_root,
 *   mounts          chroot and the new mount API (open_tree, move_mount,
 *                   fsopen, fsconfig, fsmount, fspick, mount_setattr).
 *   kernel surface  keyctl, add_key, request_key, bpf, perf_event_open,
 *                   userfaultfd, io_uring_setup/enter/register, personality,
 *                   acct, swapon, swapoff, reboot, kexec_load,
 *                   kexec_file_load, init_module, finit_module, delete_module,
 *                   open_by_handle_at: little legitimate use in a kernel's
 *                   host code and a long record of kernel bugs.
 *
 * prctl stays allowed: the CUDA runtime uses it (thread names, dumpable),
 * and nothing it offers reaches another process (PR_SET_PTRACER only lets
 * someone trace the caller, PR_SET_SECCOMP only adds filters, PR_SET_MM needs
 * CAP_SYS_RESOURCE).  Left allowed on purpose, because runtimes call them
 * with thread ids that a filter cannot tell from other pids: setpriority,
 * sched_setaffinity/setscheduler/setattr, ioprio_set, migrate_pages.  Same-uid
 * code can use them to slow the judge down, not to read or change it.
 *
 * A name libseccomp does not know on this architecture is skipped, so the
 * file builds and runs with older headers; one it knows but this architecture
 * lacks (fork on aarch64) it ignores itself.  Only the native architecture is
 * in the filter, and a call through any other ABI kills the whole process
 * (libseccomp's default kills only the calling thread).
 */
#include "jail_filter.h"

#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <string.h>
#include <unistd.h>

/* clone's flags: argument 0 on x86-64 and aarch64 (and most others); s390
 * swaps the first two. */
#if defined(__s390__)
#define JF_CLONE_FLAGS 1
#else
#define JF_CLONE_FLAGS 0
#endif

enum jf_how {
	JF_DENY,   /* EPERM */
	JF_NOSYS,  /* ENOSYS */
	JF_SELF,   /* EPERM unless argument 0 is the caller's pid */
	JF_ZERO,   /* EPERM unless argument 0 is 0 */
	JF_CLONE,  /* EPERM unless a thread without new namespaces */
};

static const struct {
	const char *name;
	enum jf_how how;
} jf_rules[] = {
	{"fork", JF_DENY},
	{"vfork", JF_DENY},
	{"clone", JF_CLONE},
	{"clone3", JF_NOSYS},
	{"execve", JF_DENY},
	{"execveat", JF_DENY},

	{"ptrace", JF_DENY},
	{"process_vm_readv", JF_DENY},
	{"process_vm_writev", JF_DENY},
	{"process_madvise", JF_DENY},
	{"kcmp", JF_DENY},
	{"pidfd_getfd", JF_DENY},
	{"pidfd_send_signal", JF_DENY},
	{"tkill", JF_DENY},
	{"kill", JF_SELF},
	{"tgkill", JF_SELF},
	{"rt_sigqueueinfo", JF_SELF},
	{"rt_tgsigqueueinfo", JF_SELF},
	{"pidfd_open", JF_SELF},
	{"prlimit64", JF_ZERO},

	{"unshare", JF_DENY},
	{"setns", JF_DENY},
	{"mount", JF_DENY},
	{"umount", JF_DENY},
	{"umount2", JF_DENY},
	{"pivot_root", JF_DENY},
	{"chroot", JF_DENY},
	{"open_tree", JF_DENY},
	{"move_mount", JF_DENY},
	{"fsopen", JF_DENY},
	{"fsconfig", JF_DENY},
	{"fsmount", JF_DENY},
	{"fspick", JF_DENY},
	{"mount_setattr", JF_DENY},

	{"keyctl", JF_DENY},
	{"add_key", JF_DENY},
	{"request_key", JF_DENY},
	{"bpf", JF_DENY},
	{"perf_event_open", JF_DENY},
	{"userfaultfd", JF_DENY},
	{"io_uring_setup", JF_DENY},
	{"io_uring_enter", JF_DENY},
	{"io_uring_register", JF_DENY},
	{"personality", JF_DENY},
	{"acct", JF_DENY},
	{"swapon", JF_DENY},
	{"swapoff", JF_DENY},
	{"reboot", JF_DENY},
	{"kexec_load", JF_DENY},
	{"kexec_file_load", JF_DENY},
	{"init_module", JF_DENY},
	{"finit_module", JF_DENY},
	{"delete_module", JF_DENY},
	{"open_by_handle_at", JF_DENY},
};

/* The namespace flags clone takes (CLONE_NEWTIME is clone3/unshare only). */
static const unsigned long jf_clone_ns[] = {
	CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
};

static int jf_add(scmp_filter_ctx ctx, int nr, enum jf_how how, pid_t self)
{
	const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
	struct scmp_arg_cmp c;
	switch (how) {
	case JF_DENY:
		return seccomp_rule_add_array(ctx, eperm, nr, 0, NULL);
	case JF_NOSYS:
		return seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0, NULL);
	case JF_SELF:
		c = (struct scmp_arg_cmp){0, SCMP_CMP_NE, (scmp_datum_t)self, 0};
		return seccomp_rule_add_array(ctx, eperm, nr, 1, &c);
	case JF_ZERO:
		c = (struct scmp_arg_cmp){0, SCMP_CMP_NE, 0, 0};
		return seccomp_rule_add_array(ctx, eperm, nr, 1, &c);
	case JF_CLONE:
		/* Rules of one call and action are or'ed: a process, or any new namespace. */
		c = (struct scmp_arg_cmp){JF_CLONE_FLAGS, SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0};
		int rc = seccomp_rule_add_array(ctx, eperm, nr, 1, &c);
		for (size_t i = 0; rc == 0 && i < sizeof jf_clone_ns / sizeof jf_clone_ns[0]; i++) {
			c = (struct scmp_arg_cmp){JF_CLONE_FLAGS, SCMP_CMP_MASKED_EQ, jf_clone_ns[i], jf_clone_ns[i]};
			rc = seccomp_rule_add_array(ctx, eperm, nr, 1, &c);
		}
		return rc;
	}
	return -EINVAL;
}

int jail_filter_install(char *errbuf)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return errf(errbuf, "seccomp_init failed (out of memory?)");
	const char *what = "attributes";
	int rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 1);
	if (rc < 0)
		goto fail;
	/* Both only better: the kernel's own errno in messages (libseccomp >=
	 * 2.5), and a whole-process kill for a foreign ABI (kernel >= 4.14;
	 * else libseccomp's default, the thread). */
	(void)seccomp_attr_set(ctx, SCMP_FLTATR_API_SYSRAWRC, 1);
	(void)seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);

	pid_t self = getpid();
	for (size_t i = 0; i < sizeof jf_rules / sizeof jf_rules[0]; i++) {
		int nr = seccomp_syscall_resolve_name(jf_rules[i].name);
		if (nr == __NR_SCMP_ERROR)
			continue;
		what = jf_rules[i].name;
		if ((rc = jf_add(ctx, nr, jf_rules[i].how, self)) < 0)
			goto fail;
	}
	what = "seccomp_load";
	rc = seccomp_load(ctx);
	if (rc == -ESRCH) {
		seccomp_release(ctx);
		return errf(errbuf, "seccomp_load: a thread of this process has a seccomp filter of its own");
	}
	if (rc < 0)
		goto fail;
	seccomp_release(ctx);
	return 0;
fail:
	seccomp_release(ctx);
	return errf(errbuf, "seccomp filter: %s: %s", what, strerror(-rc));
}
