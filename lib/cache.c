/* cache: directory resolution and atomic file writes; see cache.h. */
#include "cache.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cache_mkdirs(const char *path, char *e)
{
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp)
		return errf(e, "path too long: %s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
			return errf(e, "mkdir %s: %s", tmp, strerror(errno));
		*p = '/';
	}
	if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
		return errf(e, "mkdir %s: %s", tmp, strerror(errno));
	return 0;
}

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
	return cache_mkdirs(buf, e);
}

int cache_write_file(const char *path, const void *data, size_t len, char *e)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
	FILE *f = fopen(tmp, "wb");
	if (!f)
		return errf(e, "%s: %s", tmp, strerror(errno));
	size_t w = fwrite(data, 1, len, f);
	if (fclose(f) != 0 || w != len) {
		unlink(tmp);
		return errf(e, "%s: write error", tmp);
	}
	if (rename(tmp, path) != 0) {
		int er = errno;
		unlink(tmp);
		return errf(e, "rename to %s: %s", path, strerror(er));
	}
	return 0;
}

int cache_read_file(const char *path, char **out, size_t *len, char *e)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return errf(e, "%s: %s", path, strerror(errno));
	size_t cap = 4096, n = 0;
	char *b = malloc(cap);
	for (;;) {
		if (!b) {
			fclose(f);
			return errf(e, "out of memory");
		}
		n += fread(b + n, 1, cap - n - 1, f);
		if (n < cap - 1)
			break;
		cap *= 2;
		char *nb = realloc(b, cap);
		if (!nb)
			free(b);
		b = nb;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		free(b);
		return errf(e, "%s: read error", path);
	}
	b[n] = '\0';
	*out = b;
	if (len)
		*len = n;
	return 0;
}
