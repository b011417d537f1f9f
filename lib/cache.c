/* cache: where the cache lives; see cache.h. */
#include "cache.h"
#include "file.h"

#include <stdio.h>
#include <stdlib.h>

int cache_dir(const char *sub, char *buf, size_t n, char *e)
{
	const char *k = getenv("KSCI_CACHE"), *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
	int w;
	if (k && *k)
		w = snprintf(buf, n, "%s/%s", k, sub);
	else if (x && *x)
		w = snprintf(buf, n, "%s/ksci/%s", x, sub);
	else
		w = snprintf(buf, n, "%s/.cache/ksci/%s", h && *h ? h : "/tmp", sub);
	if (w < 0 || (size_t)w >= n)
		return errf(e, "cache path too long");
	return file_mkdirp(buf, e);
}
