/* Unit tests for the c back end's device layer (lib/dev_host.c): the cache
 * flush before a timed batch evicts the batch's arrays and nothing more.
 * the-cache-flush-wrote-twice-the-llc: it used to write a buffer of twice
 * the last-level cache before every batch, and a VM reports the whole
 * socket's (508 MiB here): 1 GiB written per batch, most of a c ktime's
 * time (20-30 s for a tiny task under load, 4.6-10 s after). */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "dev.h"
#include "err.h"
#include "t.h"

static long maxrss_kb(void)
{
	struct rusage u;
	getrusage(RUSAGE_SELF, &u);
	return u.ru_maxrss;
}

int main(void)
{
	char e[ERRBUF] = "";
	size_t n = 4u << 20;
	unsigned char *buf = malloc(n), *copy = malloc(n);
	T_OK(buf && copy, "buffers");
	if (!buf || !copy)
		return T_DONE();
	for (size_t i = 0; i < n; i++)
		buf[i] = (unsigned char)(i * 131 + 7);
	memcpy(copy, buf, n);
	long before = maxrss_kb();
	int rc = 0;
	for (int k = 0; k < 3; k++)
		rc |= dev_host.flush(buf, n, e);
	rc |= dev_host.flush(buf + 3, n - 100, e); /* neither start nor length on a line */
	rc |= dev_host.flush(buf, 0, e);
	long grew = maxrss_kb() - before;
	T_OK(rc == 0, "flush: no error (%s)", e);
	T_OK(memcmp(buf, copy, n) == 0, "flush: the arrays' contents are untouched");
#if defined(__x86_64__)
	T_OK(grew < 16 * 1024,
	     "the-cache-flush-wrote-twice-the-llc: flushing 4 MiB grew the process by %ld KiB, not by twice the "
	     "last-level cache", grew);
#else
	T_OK(grew <= 260 * 1024, "flush: its buffer is at most 256 MiB (grew %ld KiB)", grew);
#endif
	free(buf);
	free(copy);
	return T_DONE();
}
