/* judge/hot: see hot.h. */
#include "hot.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../proc.h"

#define H_SLEEP (-1)

const char *const hot_modes[] = {"off", "on", "pin", NULL};

static pthread_t th;
static int started, enabled = 1;
static _Atomic uint32_t gen;   /* bumped by every hot_warm */
static _Atomic int32_t want = H_SLEEP; /* the CPU to spin on, or H_SLEEP */
static _Atomic uint32_t there; /* the gen the helper has reached its CPU for */
static long n_asked, n_late;
static cpu_set_t allowed; /* the process's CPUs at hot_init */

static void *helper(void *arg)
{
	(void)arg;
	struct sched_param p = {0};
	sched_setscheduler(0, SCHED_IDLE, &p); /* per thread on Linux */
	int on = -1;
	for (;;) {
		uint32_t g = atomic_load(&gen);
		int32_t w = atomic_load(&want);
		if (w == H_SLEEP) {
			syscall(SYS_futex, (int32_t *)&want, FUTEX_WAIT_PRIVATE, H_SLEEP, NULL, NULL, 0);
			continue;
		}
		if (w != on) {
			cpu_set_t one;
			CPU_ZERO(&one);
			CPU_SET(w, &one);
			if (sched_setaffinity(0, sizeof one, &one) < 0) { /* not allowed there: say so, sleep */
				atomic_compare_exchange_strong(&want, &w, H_SLEEP);
				continue;
			}
			on = w;
		}
		if (sched_getcpu() == w)
			atomic_store(&there, g);
		/* No pause instruction: under a hypervisor, pause loops exit to it. */
		while (atomic_load_explicit(&want, memory_order_relaxed) == w &&
		       atomic_load_explicit(&gen, memory_order_relaxed) == g)
			;
	}
	return NULL;
}

int hot_init(void)
{
	if (started)
		return 0;
	if (sched_getaffinity(0, sizeof allowed, &allowed) < 0)
		return -1;
	if (pthread_create(&th, NULL, helper, NULL) != 0)
		return -1;
	started = 1;
	return 0;
}

int hot_started(void) { return started; }

void hot_enable(int mode) { enabled = mode; }

int hot_on(void) { return started && enabled; }

int hot_pin(void) { return started && enabled == 2; }

int hot_warm(int cpu, double max_s)
{
	/* Not the caller's own CPU: there the helper would wait for the caller's
	 * slice to end, and then take a slice of its own from it. */
	if (!hot_on() || cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &allowed) || cpu == sched_getcpu())
		return -1;
	uint32_t g = atomic_fetch_add(&gen, 1) + 1;
	atomic_store(&want, cpu);
	syscall(SYS_futex, (int32_t *)&want, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	n_asked++;
	double end = proc_now() + max_s;
	while (atomic_load(&there) != g)
		if (proc_now() > end) {
			n_late++;
			return 0;
		}
	return 1;
}

void hot_rest(void)
{
	if (started)
		atomic_store(&want, H_SLEEP);
}

void hot_counts(long *asked, long *late) { *asked = n_asked, *late = n_late; }
