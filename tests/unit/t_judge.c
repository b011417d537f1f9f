/* t_judge: the judge's handle on a role's child (lib/judge/kid.c, ctl.c)
 * and the child's loop (lib/judge/child.c), with this program as the child
 * (`t_judge --child ROLE [LIB]`, as kharness does): the child starts,
 * maps the arena, runs calls when asked and is stopped between requests; a
 * library that cannot be loaded, and a child that dies, are reported with
 * what happened, never waited for. */
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "judge/child.h"
#include "judge/hot.h"
#include "judge/kid.h"
#include "proc.h"
#include "t.h"

/* The process state letter of /proc/PID/stat ('T': stopped), '?' if none. */
static char state(pid_t pid)
{
	char f[8];
	return proc_stat_field(pid, 3, f, sizeof f) == 0 ? f[0] : '?';
}

/* A clock for ctl_wait that moves 1 ms a look; at look jump_at it jumps
 * 10 s (the process was stopped in between), at look set_at the word it
 * waits on changes.  Whether the wait slept on the futex before that. */
static double fake_t;
static int fake_calls, fake_jump_at, fake_set_at;
static _Atomic uint32_t fake_word;

static double fake_now(void)
{
	fake_t += 0.001;
	if (++fake_calls == fake_jump_at)
		fake_t += 10;
	if (fake_calls == fake_set_at)
		atomic_store(&fake_word, 1);
	return fake_t;
}

static int wait_slept(int jump_at, int set_at)
{
	fake_t = 0, fake_calls = 0, fake_jump_at = jump_at, fake_set_at = set_at;
	atomic_store(&fake_word, 0);
	ctl_set_clock(fake_now);
	int slept = -1, rc = ctl_wait(&fake_word, 0, 0.05, 0, NULL, NULL, &slept);
	ctl_set_clock(NULL);
	return rc == 0 ? slept : -1;
}

/* A process pinned to CPU cpu, named to trip a parser that splits at the
 * first ")"; it waits until killed.  Its pid once it has run there. */
static pid_t pinned(int cpu)
{
	int p[2];
	if (pipe(p) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		prctl(PR_SET_NAME, "a) b ) 7 8 9");
		if (sched_setaffinity(0, sizeof one, &one) == 0 && write(p[1], "x", 1) == 1)
			for (;;)
				pause();
		_exit(1);
	}
	char x;
	close(p[1]);
	int ok = pid > 0 && read(p[0], &x, 1) == 1;
	close(p[0]);
	return ok ? pid : -1;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "--child") == 0)
		return harness_child(&dev_host, argv[2], argc > 3 ? argv[3] : NULL);
	char e[ERRBUF] = "", self[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
	if (len <= 0)
		return 1;
	self[len] = '\0';
	int afd = memfd_create("t-judge-arena", MFD_CLOEXEC);
	struct kid_opts o = {.self = self, .lib = NULL, .arena_fd = afd, .spin_s = 0, .cpu_s = 60};
	double deadline = proc_now() + 60, wall = 0;

	struct kid k;
	T_OK(kid_start(&k, "calibration", &o, deadline, e) == 0, "a child without a kernel starts (%s)", e);
	T_OK(state(k.pid) == 'T', "and waits stopped until the judge asks");
	size_t bytes = 1 << 20;
	unsigned char *arena = dev_host.share(bytes, afd, NULL, e);
	T_OK(arena != NULL, "the judge's arena (a memfd) is made");
	k.c->arena_bytes = bytes;
	T_OK(kid_request(&k, JOP_MAP, 0, deadline, &wall, e) == 0, "the child maps it");
	k.c->nargs = 2;
	k.c->ncalls = 1000;
	k.c->stride = 64;
	k.c->arg[0] = (struct jctl_arg){.off = 0, .buf = 1};
	k.c->arg[1] = (struct jctl_arg){.buf = 0, .raw = {7}};
	wall = 0;
	T_OK(kid_request(&k, JOP_EMPTY, 0, deadline, &wall, e) == 0 && wall > 0,
	     "1000 empty calls, timed by the judge's clock: %.1f us", wall * 1e6);
	T_OK(state(k.pid) == 'T', "the child is stopped again once it has answered");
	uint32_t done = atomic_load(&k.c->done);
	T_OK(kid_request(&k, JOP_EMPTY, 0, deadline, &wall, e) == 0 && atomic_load(&k.c->done) == done + 1,
	     "each request is answered with its own number");
	double wk = -1, tl = -1;
	T_OK(kid_split(&k, &wk, &tl) == 1 && wk >= 0 && tl >= 0 && wk + tl <= wall,
	     "by the child's clock: %.1f us to see the request, %.1f us from its end to done seen (of %.1f)", wk * 1e6,
	     tl * 1e6, wall * 1e6);
	k.c->seen_at = k.t0 - 1; /* the child's word: a stamp before the request is not believed */
	T_OK(kid_split(&k, &wk, &tl) == 0, "a child's stamps outside the exchange are not used");

	char tail[64];
	kid_log_tail(&k, tail, sizeof tail);
	T_OK(tail[0] == '\0', "a child that printed nothing has an empty log tail");

	kill(k.pid, SIGKILL);
	int rc = kid_request(&k, JOP_EMPTY, 0, deadline, &wall, e);
	T_OK(rc == -1 && strstr(e, "calibration killed by signal 9"), "a child that died is reported, not waited for: %s", e);
	kid_end(&k);

	struct kid k2;
	o.lib = "/nonexistent/ksci-t-judge.so";
	rc = kid_start(&k2, "candidate", &o, deadline, e);
	T_OK(rc < 0 && strstr(e, "cannot load the candidate") && strstr(e, "nonexistent"),
	     "a library that cannot be loaded is the child's failure, said: %s", e);
	kid_end(&k2);

	struct kid k3;
	o.lib = NULL;
	o.self = "/nonexistent/kharness";
	rc = kid_start(&k3, "seed", &o, deadline, e);
	T_OK(rc < 0 && strstr(e, "seed exited with status 127"), "a judge that cannot start its child says so: %s", e);
	kid_end(&k3);
	dev_host.unshare(arena, bytes);
	close(afd);
	/* The plausibility guard on a timing's sizes (exchange-dominated-speedup:
	 * a size whose batches were mostly the judge's exchange is held back
	 * like one above the device's peak; the first flagged size names the
	 * reason). */
	json_t *sz = json_pack("[{s:{s:i}, s:f, s:f}, {s:{s:i}, s:f, s:f}]", "size", "n", 1, "pct_peak_bw", 50.0,
			       "exchange_share", 0.5, "size", "n", 2, "pct_peak_bw", 60.0, "exchange_share", 0.999);
	json_t *imp = harness_implausible(sz, NULL);
	T_OK(imp && json_array_size(json_object_get(imp, "sizes")) == 1 &&
		     json_real_value(json_object_get(json_array_get(json_object_get(imp, "sizes"), 0), "exchange_share")) ==
			     0.999 &&
		     json_is_false(json_object_get(imp, "rechecked")),
	     "an exchange share of 0.999 is flagged, 0.5 is not");
	const char *m = json_string_value(json_object_get(imp, "message"));
	T_OK(m && strcmp(m, "timed in batches that were 100 % the judge's exchange with its child at n=2 (a loaded "
			    "machine?): the figures are not the kernel's; held back until verified and timed again") == 0,
	     "…and the message says so (%s)", m ? m : "none");
	json_decref(imp);
	json_object_set_new(json_array_get(sz, 0), "pct_peak_bw", json_real(101));
	imp = harness_implausible(sz, NULL);
	m = json_string_value(json_object_get(imp, "message"));
	T_OK(json_array_size(json_object_get(imp, "sizes")) == 2 && m &&
		     strncmp(m, "faster than the device allows: 101 % of its copy bandwidth peak at n=1 (and other sizes)", 87) == 0,
	     "above the peak at the first size: both flagged, the message the peak's (%s)", m ? m : "none");
	json_decref(imp);
	json_object_set_new(json_array_get(sz, 0), "pct_peak_bw", json_real(100));
	json_object_set_new(json_array_get(sz, 1), "exchange_share", json_real(0.9));
	T_OK(harness_implausible(sz, NULL) == NULL, "at the peak and at a share of 0.9: nothing flagged");
	json_decref(sz);
	/* child-slept-after-a-long-stop: a child's wait for its request
	 * started when it answered the last one, and a stop longer than its
	 * 0.05 s of spinning sent it to the futex the moment it was continued,
	 * so the wake-up fell inside the timed exchange for a role whose gap
	 * was long and not for the others. */
	/* last-cpu-read-exit-signal: the 38th field (exit_signal, 17) was read
	 * for the 39th, and every warm-up asked for CPU 17. */
	cpu_set_t mine;
	int c0 = -1, c1 = -1;
	if (sched_getaffinity(0, sizeof mine, &mine) == 0)
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &mine) && c != 17) { /* the two lowest but 17 */
				if (c0 < 0)
					c0 = c;
				else if (c1 < 0)
					c1 = c;
			}
	int cp = c1 >= 0 ? c1 : c0;
	pid_t pp = pinned(cp);
	int got = kid_last_cpu(pp);
	T_OK(pp > 0 && got == cp, "last-cpu-read-exit-signal: a process pinned to CPU %d last ran on %d by kid_last_cpu", cp, got);
	if (pp > 0) {
		kill(pp, SIGKILL);
		waitpid(pp, NULL, 0);
	}
	T_OK(kid_last_cpu(pp) == -1, "a process that is gone has no CPU");
	T_OK(hot_warm(c0, 1) == -1 && hot_on() == 0, "no helper, no warm-up");
	T_OK(hot_init() == 0 && hot_on(), "the helper starts");
	T_OK(hot_warm(sched_getcpu(), 1) == -1, "the caller's own CPU is never warmed");
	T_OK(hot_warm(CPU_SETSIZE - 1, 1) == -1 && hot_warm(-1, 1) == -1, "nor a CPU the process may not use");
	if (c1 >= 0) {
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(c0, &one);
		sched_setaffinity(0, sizeof one, &one); /* the caller on c0, the helper sent to c1 */
		int w = hot_warm(c1, 5);
		hot_rest();
		long asked, late;
		hot_counts(&asked, &late);
		T_OK(w == 1 && asked == 1 && late == 0, "the helper reaches another CPU and says so (%d; asked %ld, late %ld)", w, asked, late);
		sched_setaffinity(0, sizeof mine, &mine);
	} else
		printf("ok %d - # SKIP one CPU only: the helper has nowhere to go\n", ++t_n);
	/* Where a child saw its request, by its word; and --wake-cpu pin leaves
	 * the child's CPUs as they were. */
	struct kid kw;
	struct kid_opts ow = {.self = self, .lib = NULL, .arena_fd = afd, .spin_s = 0, .cpu_s = 60};
	if (kid_start(&kw, "calibration", &ow, proc_now() + 60, e) == 0) {
		int c = c1 >= 0 ? c1 : c0;
		cpu_set_t one, before, after;
		CPU_ZERO(&one);
		CPU_SET(c, &one);
		sched_setaffinity(kw.pid, sizeof one, &one);
		hot_enable(2);
		kw.c->arena_bytes = bytes;
		int rq = kid_request(&kw, JOP_MAP, 0, deadline, &wall, e);
		kw.c->nargs = 2;
		kw.c->ncalls = 10;
		kw.c->stride = 64;
		kw.c->arg[0] = (struct jctl_arg){.off = 0, .buf = 1};
		kw.c->arg[1] = (struct jctl_arg){.buf = 0, .raw = {7}};
		sched_getaffinity(kw.pid, sizeof before, &before);
		rq = rq == 0 ? kid_request(&kw, JOP_EMPTY, 0, deadline, &wall, e) : rq;
		sched_getaffinity(kw.pid, sizeof after, &after);
		T_OK(rq == 0 && kw.c->seen_cpu == c, "seen-cpu: a child kept on CPU %d says it saw its request on %d", c,
		     kw.c->seen_cpu);
		T_OK(CPU_EQUAL(&before, &after), "a continue under --wake-cpu pin leaves the child's CPUs as they were (%s)",
		     kw.warm_cpu == c ? "woken and pinned first" : "not woken in time this once: not pinned");
		kw.warm_cpu = c;
		T_OK(kid_woke_there(&kw) == 1, "woken there: where it saw the request");
		kw.warm_cpu = c + 1;
		T_OK(kid_woke_there(&kw) == 0, "woken elsewhere: another CPU than the one woken");
		kw.warm_cpu = -1;
		T_OK(kid_woke_there(&kw) == -1, "none woken: nothing said");
		hot_enable(1);
		kid_end(&kw);
	} else
		T_OK(0, "a second calibration child starts (%s)", e);
	T_OK(wait_slept(10, 30) == 0, "child-slept-after-a-long-stop: continued after 10 s stopped, it spins for its request");
	T_OK(wait_slept(0, 60) == 1, "...and without a stop it still sleeps once its 0.05 s of spinning is over");
	return T_DONE();
}
