/* file: mkdir -p, whole-file read, atomic write; see file.h. */
#include "file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "strbuf.h"

int file_mkdirp(const char *path, char *e)
{
	struct strbuf b = STRBUF_INIT;
	sb_add(&b, path);
	if (b.oom)
		return errf(e, "out of memory");
	/* Each parent in turn; EEXIST is fine (it may be a race with another slot). */
	for (char *p = b.buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(b.buf, 0777) != 0 && errno != EEXIST) {
			int er = errno;
			errf(e, "mkdir %s: %s", b.buf, strerror(er));
			sb_release(&b);
			return -1;
		}
		*p = '/';
	}
	int rc = 0;
	if (mkdir(b.buf, 0777) != 0 && errno != EEXIST)
		rc = errf(e, "mkdir %s: %s", b.buf, strerror(errno));
	sb_release(&b);
	return rc;
}

int file_read(const char *path, char **out, size_t *len, char *e)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return errf(e, "%s: %s", path, strerror(errno));
	struct strbuf b = STRBUF_INIT;
	for (;;) {
		if (sb_grow(&b, 8192) != 0)
			break;
		size_t n = fread(b.buf + b.len, 1, b.alloc - b.len - 1, f);
		b.len += n;
		b.buf[b.len] = '\0';
		if (n == 0)
			break;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		sb_release(&b);
		return errf(e, "%s: read error", path);
	}
	char *s = sb_detach(&b, len);
	if (!s)
		return errf(e, "%s: out of memory", path);
	*out = s;
	return 0;
}

int file_write_atomic(const char *path, const void *data, size_t len, char *e)
{
	struct strbuf tmp = STRBUF_INIT;
	sb_printf(&tmp, "%s.tmp.%ld", path, (long)getpid());
	if (tmp.oom)
		return errf(e, "out of memory");
	int rc = 0;
	FILE *f = fopen(tmp.buf, "wb");
	if (!f) {
		rc = errf(e, "%s: %s", tmp.buf, strerror(errno));
		goto out;
	}
	size_t w = fwrite(data, 1, len, f);
	if (fclose(f) != 0 || w != len) {
		unlink(tmp.buf);
		rc = errf(e, "%s: write error", tmp.buf);
		goto out;
	}
	if (rename(tmp.buf, path) != 0) {
		int er = errno;
		unlink(tmp.buf);
		rc = errf(e, "rename to %s: %s", path, strerror(er));
	}
out:
	sb_release(&tmp);
	return rc;
}
