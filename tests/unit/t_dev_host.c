/* Unit tests for the c back end's device layer (lib/dev_host.c): the cache
 * flush before a timed batch evicts the batch's arrays and nothing more;
 * poison() marks one 32-byte sector of every KiB of an output, a different
 * one for another seed, and a short last block too.
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

	/* poison: outputs of 5 KiB + 100 bytes (a short last block) and of
	 * 16 bytes (shorter than a sector). */
	size_t on = 5 * 1024 + 100;
	unsigned char *o = buf + 1, *o2 = copy + 1;
	memset(buf, 0, on + 2);
	memset(copy, 0, on + 2);
	rc = dev_host.poison(o, 0xFF, on, 42, e) | dev_host.poison(o2, 0xFF, on, 43, e);
	T_OK(rc == 0, "poison: no error (%s)", e);
	T_OK(buf[0] == 0 && buf[on + 1] == 0, "poison: nothing outside the output");
	int one_each = 1, moved = 0;
	for (size_t b = 0; b * 1024 < on; b++) {
		size_t at = b * 1024, len = on - at < 1024 ? on - at : 1024, first = len, count = 0;
		for (size_t k = 0; k < len; k++)
			if (o[at + k] == 0xFF) {
				first = first < k ? first : k;
				count++;
			}
		size_t want = len - first < 32 ? len - first : 32;
		if (first % 32 || count != want || first == len)
			one_each = 0;
		moved += memcmp(o + at, o2 + at, len) != 0;
	}
	T_OK(one_each, "poison: every block (the short last one too) has one whole sector of poison, on a sector boundary");
	T_OK(moved >= 4, "poison: another seed poisons other sectors (%d of 6 blocks differ)", moved);
	memset(buf, 0, 18);
	T_OK(dev_host.poison(buf + 1, 0xA5, 16, 7, e) == 0 && buf[1] == 0xA5 && buf[16] == 0xA5 && buf[17] == 0 && !buf[0],
	     "poison: a 16-byte output is poisoned whole");

	free(buf);
	free(copy);
	return T_DONE();
}
