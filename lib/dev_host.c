/*
 * dev_host: the device layer for the `c` back end — plain host memory; the
 * arena the judge shares with a role's child is a memfd both map.
 *
 * Every timed call reads inputs the judge has just generated, on whichever
 * cores its generator threads ran; left there, they make a call's time
 * depend on where they happen to lie (in an A/A run on a 16-core VM, one
 * 2-thread kernel measured 5.4 to 9.6 ms per call).  So flush() evicts the
 * batch's arrays from every cache before each batch: every call then starts
 * from memory, the same for every role, as on the GPU.  On x86-64 it flushes
 * exactly those lines (clflush); it used to write a buffer of twice the
 * last-level cache, which a VM reports for the whole socket (508 MiB on the
 * development machine: 1 GiB written before every batch, most of a c ktime's
 * time, 20-30 s for a tiny task under load).  Elsewhere it still writes such
 * a buffer, at most 256 MiB.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "dtype.h"
#include "dev.h"
#include "par.h"
#include "proc.h"

static void *h_alloc(size_t n, char *e)
{
	void *p = aligned_alloc(64, (n + 63) / 64 * 64);
	if (!p)
		errf(e, "out of host memory (%zu bytes)", n);
	return p;
}

static void h_release(void *p) { free(p); }

static int h_copy(void *dst, const void *src, size_t n, char *e)
{
	(void)e;
	memcpy(dst, src, n);
	return 0;
}

static int h_call(ksci_call_fn fn, void **args, char *e)
{
	(void)e;
	fn(args);
	return 0;
}

void dev_host_cpu_model(char *buf, size_t n)
{
	char line[512];
	snprintf(buf, n, "unknown");
	FILE *f = fopen("/proc/cpuinfo", "r");
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
			snprintf(buf, n, "%s", strchr(line, ':') + 2);
			buf[strcspn(buf, "\n")] = '\0';
			break;
		}
	if (f)
		fclose(f);
}

static json_t *h_env(void)
{
	char model[256];
	dev_host_cpu_model(model, sizeof model);
	struct utsname u;
	uname(&u);
	return json_pack("{s:s, s:s, s:I, s:s}", "device", "cpu", "cpu", model, "cpus",
			 (json_int_t)sysconf(_SC_NPROCESSORS_ONLN), "kernel", u.release);
}

static void *h_share(size_t n, int fd, unsigned char *handle, char *e)
{
	(void)handle;
	if (ftruncate(fd, (off_t)n) < 0) {
		errf(e, "cannot grow the shared arena to %zu bytes: %s", n, strerror(errno));
		return NULL;
	}
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		errf(e, "cannot map the shared arena (%zu bytes): %s", n, strerror(errno));
		return NULL;
	}
	return p;
}

static void h_unshare(void *p, size_t n) { munmap(p, n); }

static void *h_open_shared(const unsigned char *handle, int fd, size_t n, char *e)
{
	(void)handle;
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		errf(e, "cannot map the shared arena (%zu bytes): %s", n, strerror(errno));
		return NULL;
	}
	return p;
}

static int h_flush(const void *p, size_t n, char *e)
{
#if defined(__x86_64__)
	(void)e;
	const char *c = (const char *)((uintptr_t)p & ~(uintptr_t)63), *end = (const char *)p + n;
	for (; c < end; c += 64)
		__builtin_ia32_clflush(c);
	__builtin_ia32_mfence();
	return 0;
#else
	(void)p, (void)n;
	static unsigned char *buf;
	static size_t bn;
	static unsigned char v;
	if (!buf) {
		long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
		bn = 2 * (size_t)(l3 > 0 ? l3 : l2 > 0 ? l2 : 32L << 20);
		bn = bn < (8u << 20) ? 8u << 20 : bn > (256u << 20) ? 256u << 20 : bn;
		if (!(buf = malloc(bn)))
			return errf(e, "out of memory for the cache flush");
	}
	memset(buf, v++, bn);
	return 0;
#endif
}

static int h_set_bytes(void *p, int byte, size_t n, char *e)
{
	(void)e;
	memset(p, byte, n);
	return 0;
}

static int h_poison(void *p, int byte, size_t n, uint64_t seed, char *e)
{
	(void)e;
	for (size_t b = 0; b * GEN_POISON_BLOCK < n; b++) {
		uint64_t count, at = gen_poison_span(seed, b, n, &count);
		memset((unsigned char *)p + at, byte, (size_t)count);
	}
	return 0;
}

#define GEN_CHUNK (1 << 16)
struct gen_job {
	void *p;
	int dt;
	int64_t n;
	const struct gen_spec *s;
};

static void gen_chunk(void *ctx, int64_t k)
{
	struct gen_job *j = ctx;
	int64_t end = (k + 1) * GEN_CHUNK < j->n ? (k + 1) * GEN_CHUNK : j->n;
	const struct gen_spec s = *j->s; /* a local copy: the compiler hoists the switch on s.dist */
	if (j->dt == DT_F32) /* the common case, without dtype_set's switch per element */
		for (int64_t i = k * GEN_CHUNK; i < end; i++)
			((float *)j->p)[i] = (float)gen_value(&s, (uint64_t)i);
	else
		for (int64_t i = k * GEN_CHUNK; i < end; i++)
			dtype_set((enum dtype)j->dt, j->p, (size_t)i, gen_value(&s, (uint64_t)i));
}

static int h_gen(void *p, int dt, int64_t n, const struct gen_spec *s, char *e)
{
	(void)e;
	struct gen_job j = {p, dt, n, s};
	par_chunks((n + GEN_CHUNK - 1) / GEN_CHUNK, gen_chunk, &j);
	return 0;
}

const struct dev_ops dev_host = {
	.name = "host",
	.alloc = h_alloc,
	.release = h_release,
	.to_dev = h_copy,
	.to_host = h_copy,
	.call = h_call,
	.env = h_env,
	.flush = h_flush,
	.share = h_share,
	.unshare = h_unshare,
	.copy = h_copy,
	.set_bytes = h_set_bytes,
	.poison = h_poison,
	.gen = h_gen,
	.open_shared = h_open_shared,
	.close_shared = h_unshare,
};
