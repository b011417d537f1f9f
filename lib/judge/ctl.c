/*
 * judge/ctl: see ctl.h.  A futex on a MAP_SHARED page (not FUTEX_PRIVATE)
 * works across the judge and its children; the page is a memfd so that it
 * survives the child's exec at a known fd.
 */
#include "ctl.h"

#include <errno.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../proc.h"

static size_t page_bytes(void)
{
	size_t p = (size_t)sysconf(_SC_PAGESIZE);
	return (sizeof(struct jctl) + p - 1) / p * p;
}

struct jctl *ctl_create(int *fd, char *e)
{
	*fd = memfd_create("ksci-ctl", MFD_CLOEXEC);
	if (*fd < 0) {
		errf(e, "memfd_create: %s", strerror(errno));
		return NULL;
	}
	if (ftruncate(*fd, (off_t)page_bytes()) < 0) {
		errf(e, "ftruncate: %s", strerror(errno));
		close(*fd);
		return NULL;
	}
	struct jctl *c = ctl_map(*fd, e);
	if (!c)
		close(*fd);
	return c;
}

struct jctl *ctl_map(int fd, char *e)
{
	void *p = mmap(NULL, page_bytes(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		errf(e, "mmap of the control page: %s", strerror(errno));
		return NULL;
	}
	return p;
}

void ctl_wake(_Atomic uint32_t *w)
{
	syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE, 1, NULL, NULL, 0);
}

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static double (*clock_now)(void) = proc_now;

void ctl_set_clock(double (*now)(void)) { clock_now = now ? now : proc_now; }

/* The window restarts after a stop: a child's wait for its request begins
 * when it has answered the one before, and it is stopped at once; it is
 * continued for the next one after the other roles' batches and the
 * judge's checks.  Where that gap passed the window (three roles at a
 * large size; the c back end, whose check of the candidate's batch on the
 * host comes between it and the seed's), the child woke by the futex,
 * inside the timed exchange, for some roles and not for others.  On an
 * H200 its effect on the A/A was within what runs of one judge spread
 * (docs/gpu.md, "Throughput", eighteenth session). */
int ctl_wait(_Atomic uint32_t *w, uint32_t old, double spin_s, double deadline, int (*alive)(void *), void *ctx,
	     int *slept)
{
	double t0 = spin_s > 0 ? clock_now() : 0, last = t0;
	int spinning = spin_s > 0;
	if (slept)
		*slept = 0;
	for (unsigned long k = 1;; k++) {
		if (atomic_load_explicit(w, memory_order_acquire) != old)
			return 0;
		if (spinning && (k & 4095) != 0) {
			relax();
			continue;
		}
		double now = clock_now();
		if (alive && !alive(ctx))
			return 1;
		if (deadline > 0 && now > deadline)
			return 2;
		if (spinning && now - last > CTL_STOPPED_S)
			t0 = now; /* stopped in between: a new window */
		last = now;
		if (spinning && now - t0 < spin_s)
			continue;
		spinning = 0;
		if (slept)
			*slept = 1;
		struct timespec ts = {0, 5000000};
		syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT, old, &ts, NULL, 0);
	}
}
