/*
 * ndjson: line reader over zlib's gz interface (which reads plain files
 * transparently), its line a strbuf so lines may be arbitrarily long.
 */
#include "ndjson.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "strbuf.h"

struct nd_reader {
	gzFile gz;
	char *name;
	struct strbuf line; /* the current line, without its newline */
	long lineno;
};

/* The reader over an open descriptor (which it then owns). */
static struct nd_reader *open_fd(int fd, const char *name, char *errbuf)
{
	int open_errno = errno;
	struct nd_reader *r = calloc(1, sizeof *r);
	if (!r) {
		if (fd >= 0)
			close(fd);
		errf(errbuf, "out of memory");
		return NULL;
	}
	r->gz = fd >= 0 ? gzdopen(fd, "rb") : NULL;
	r->name = strdup(name);
	if (!r->gz || !r->name || sb_grow(&r->line, 1 << 16) != 0) {
		errf(errbuf, "%s: %s", name, fd < 0 ? strerror(open_errno) : "out of memory");
		if (fd >= 0 && !r->gz)
			close(fd);
		nd_close(r);
		return NULL;
	}
	gzbuffer(r->gz, 1 << 17);
	return r;
}

struct nd_reader *nd_open(const char *path, char *errbuf)
{
	int stdin_ = !path || strcmp(path, "-") == 0;
	return open_fd(stdin_ ? 0 : open(path, O_RDONLY | O_CLOEXEC), stdin_ ? "<stdin>" : path, errbuf);
}

struct nd_reader *nd_open_at(const char *path, long long offset, char *errbuf)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && lseek(fd, (off_t)offset, SEEK_SET) < 0) {
		errf(errbuf, "%s: seek: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	return open_fd(fd, path, errbuf);
}

/* Read one line (without '\n') into r->line. 1 ok, 0 EOF, -1 error. */
static int read_line(struct nd_reader *r, char *errbuf)
{
	struct strbuf *b = &r->line;
	b->len = 0;
	for (;;) {
		if (sb_grow(b, 1 << 16) != 0)
			return errf(errbuf, "%s: line %ld: out of memory", r->name, r->lineno + 1);
		size_t room = b->alloc - b->len;
		if (!gzgets(r->gz, b->buf + b->len, (int)(room > 1u << 30 ? 1u << 30 : room))) {
			int zerr;
			const char *m = gzerror(r->gz, &zerr);
			if (zerr != Z_OK && zerr != Z_BUF_ERROR)
				return errf(errbuf, "%s: read error: %s", r->name, m);
			if (b->len == 0)
				return 0;
			break;
		}
		b->len += strlen(b->buf + b->len);
		if (b->len > 0 && b->buf[b->len - 1] == '\n') {
			b->buf[--b->len] = '\0';
			break;
		}
	}
	r->lineno++;
	if (b->len > 0 && b->buf[b->len - 1] == '\r')
		b->buf[--b->len] = '\0';
	return 1;
}

int nd_next(struct nd_reader *r, json_t **rec, char *errbuf)
{
	*rec = NULL;
	for (;;) {
		int rc = read_line(r, errbuf);
		if (rc <= 0)
			return rc < 0 ? -2 : 0;
		size_t i = strspn(r->line.buf, " \t");
		if (r->line.buf[i] == '\0')
			continue;
		json_error_t je;
		json_t *v = json_loadb(r->line.buf, r->line.len, JSON_ALLOW_NUL, &je);
		if (!v)
			return errf(errbuf, "%s: line %ld: not JSON: %s (column %d)", r->name, r->lineno, je.text, je.column);
		if (!json_is_object(v)) {
			json_decref(v);
			return errf(errbuf, "%s: line %ld: not a JSON object", r->name, r->lineno);
		}
		*rec = v;
		return 1;
	}
}

const char *nd_text(const struct nd_reader *r, size_t *len)
{
	if (len)
		*len = r->line.len;
	return r->line.buf;
}

long nd_line(const struct nd_reader *r) { return r->lineno; }
const char *nd_name(const struct nd_reader *r) { return r->name; }

void nd_close(struct nd_reader *r)
{
	if (!r)
		return;
	if (r->gz)
		gzclose(r->gz);
	free(r->name);
	sb_release(&r->line);
	free(r);
}

int nd_write(FILE *out, const json_t *rec)
{
	if (json_dumpf(rec, out, JSON_COMPACT) != 0)
		return -1;
	if (fputc('\n', out) == EOF || fflush(out) != 0)
		return -1;
	return 0;
}
