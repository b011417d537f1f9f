/*
 * judge/child: what runs in a role's child process (kharness --child): map
 * the control page, start the device, install the seccomp filter, and only
 * then load the role's library (its constructors run under the filter);
 * then serve requests until told to exit.  Nothing here is believed by the
 * judge except that a request is done: the child never sees the job, the
 * seeds, the reference or the verdict.  A spare (lib JCTL_LATER) is started
 * by a long-lived judge after a job, so that the next candidate does not
 * wait for a device context (0.17 s on an H100): it loads its library on
 * its first request, JOP_LOAD, once; it has run nothing else before.
 */
#include <dlfcn.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "child.h"

#include "../jail_filter.h"
#include "../proc.h"
#include "ctl.h"

static void empty_call(void **args) { (void)args; }

static void say(struct jctl *c, const char *fmt, const char *a, const char *b)
{
	snprintf(c->msg, sizeof c->msg, fmt, a, b);
}

int harness_child(const struct dev_ops *d, const char *role, const char *lib)
{
	char e[ERRBUF] = "";
	struct jctl *c = ctl_map(JCTL_FD, e);
	if (!c) {
		fprintf(stderr, "kharness --child: %s\n", e);
		return 3;
	}
	if (d->init_child && d->init_child(e) < 0) {
		say(c, "%s: %s", role, e);
		atomic_store(&c->ready, 2);
		ctl_wake(&c->ready);
		return 3;
	}
	if (jail_filter_install(e) < 0) {
		say(c, "%s: cannot install the seccomp filter: %s", role, e);
		atomic_store(&c->ready, 2);
		ctl_wake(&c->ready);
		return 3;
	}
	ksci_call_fn fn = empty_call;
	int later = lib && strcmp(lib, JCTL_LATER) == 0;
	if (lib && !later) {
		void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		*(void **)&fn = h ? dlsym(h, "ksci_call") : NULL;
		if (!fn) {
			say(c, "cannot load the %s: %s", role, h ? "no ksci_call" : dlerror());
			atomic_store(&c->ready, 2);
			ctl_wake(&c->ready);
			return 3;
		}
	}
	unsigned char *arena = NULL;
	size_t arena_bytes = 0;
	uint32_t seen = 0;
	atomic_store(&c->ready, 1);
	ctl_wake(&c->ready);
	for (;;) {
		/* Stopped between requests, so this spins only just after a SIGCONT. */
		ctl_wait(&c->req, seen, 0.05, 0, NULL, NULL, NULL);
		seen = atomic_load_explicit(&c->req, memory_order_acquire);
		c->seen_at = proc_now();
		c->seen_cpu = sched_getcpu();
		uint32_t op = c->op;
		int32_t st = 0;
		c->event_s = -1;
		if (op == JOP_EXIT)
			_exit(0);
		if (op == JOP_LOAD) {
			char path[sizeof c->lib];
			memcpy(path, c->lib, sizeof path);
			path[sizeof path - 1] = '\0';
			void *h = later ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
			*(void **)&fn = h ? dlsym(h, "ksci_call") : NULL;
			if (!fn) {
				snprintf(e, sizeof e, "cannot load the %s: %s", role,
					 !later ? "loaded already" : h ? "no ksci_call" : dlerror());
				st = -1, fn = empty_call;
			}
			later = 0;
		} else if (op == JOP_MAP) {
			if (arena && d->close_shared)
				d->close_shared(arena, arena_bytes);
			arena_bytes = c->arena_bytes;
			if (!(arena = d->open_shared(c->handle, JCTL_ARENA_FD, arena_bytes, e)))
				st = -1, arena_bytes = 0;
		} else if (op == JOP_RUN || op == JOP_EMPTY) {
			ksci_call_fn f = op == JOP_RUN ? fn : empty_call;
			uint32_t nargs = c->nargs < JCTL_MAXARGS ? c->nargs : JCTL_MAXARGS, n = c->ncalls;
			struct jctl_arg a[JCTL_MAXARGS];
			memcpy(a, c->arg, sizeof a);
			uint64_t stride = c->stride;
			unsigned char raw[JCTL_MAXARGS][8];
			void *args[JCTL_MAXARGS];
			if (d->batch_begin && d->batch_begin(e) < 0)
				st = -1;
			for (uint32_t i = 0; i < n && st == 0; i++) {
				for (uint32_t k = 0; k < nargs; k++) {
					if (a[k].buf)
						args[k] = arena + a[k].off + (uint64_t)i * stride;
					else
						memcpy(raw[k], a[k].raw, 8), args[k] = raw[k];
				}
				f(args);
			}
			double ev = -1;
			if (st == 0 && d->batch_end && d->batch_end(&ev, e) < 0)
				st = -1;
			c->event_s = ev;
		}
		if (st != 0)
			snprintf(c->msg, sizeof c->msg, "%s", e);
		c->status = st;
		c->finished_at = proc_now();
		atomic_store_explicit(&c->done, seen, memory_order_release);
		ctl_wake(&c->done);
	}
}
