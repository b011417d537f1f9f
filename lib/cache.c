/* cache: where the cache lives, and entry seals; see cache.h. */
#include "cache.h"
#include "file.h"
#include "sha256.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The seal of meta (its own CACHE_SEAL left out) into hex; -1 out of memory. */
static int seal_of(const json_t *meta, const char *key, char hex[65])
{
	json_t *c = json_copy((json_t *)meta); /* shallow: only the top level changes */
	if (!c)
		return -1;
	json_object_del(c, CACHE_SEAL);
	char *text = json_dumps(c, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(c);
	if (!text)
		return -1;
	struct sha256 h;
	sha256_init(&h);
	sha256_update(&h, "ksci-cache-entry-v1", 20); /* with its NUL */
	sha256_update(&h, key, strlen(key) + 1);
	sha256_update(&h, text, strlen(text));
	sha256_hex(&h, hex, 64);
	free(text);
	return 0;
}

int cache_seal(json_t *meta, const char *key)
{
	char hex[65];
	if (seal_of(meta, key, hex) < 0)
		return -1;
	return json_object_set_new(meta, CACHE_SEAL, json_string(hex)) == 0 ? 0 : -1;
}

int cache_seal_check(const json_t *meta, const char *key)
{
	const json_t *s = json_object_get(meta, CACHE_SEAL);
	if (!s)
		return -1;
	char hex[65];
	if (!json_is_string(s) || seal_of(meta, key, hex) < 0)
		return 0;
	return strcmp(json_string_value(s), hex) == 0;
}

int cache_file_sha256(const char *path, char hex[65], char *e)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return errf(e, "%s: %s", path, strerror(errno));
	struct sha256 h;
	sha256_init(&h);
	unsigned char buf[1 << 15];
	size_t k;
	while ((k = fread(buf, 1, sizeof buf, f)) > 0)
		sha256_update(&h, buf, k);
	int bad = ferror(f);
	fclose(f);
	if (bad)
		return errf(e, "%s: read error", path);
	sha256_hex(&h, hex, 64);
	return 0;
}
