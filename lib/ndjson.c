/*
 * ndjson: line reader over zlib's gz interface (which reads plain files
 * transparently), growing its buffer for arbitrarily long lines.
 */
#include "ndjson.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

struct nd_reader {
	gzFile gz;
	char *name;
	char *buf;
	size_t cap, len;
	long line;
};

struct nd_reader *nd_open(const char *path, char *errbuf)
{
	struct nd_reader *r = calloc(1, sizeof *r);
	if (!r) {
		errf(errbuf, "out of memory");
		return NULL;
	}
	int stdin_ = !path || strcmp(path, "-") == 0;
	r->gz = stdin_ ? gzdopen(0, "rb") : gzopen(path, "rb");
	r->name = strdup(stdin_ ? "<stdin>" : path);
	r->cap = 1 << 16;
	r->buf = malloc(r->cap);
	if (!r->gz || !r->name || !r->buf) {
		errf(errbuf, "%s: %s", stdin_ ? "<stdin>" : path, r->gz ? "out of memory" : strerror(errno));
		nd_close(r);
		return NULL;
	}
	gzbuffer(r->gz, 1 << 17);
	return r;
}

/* Read one line (without '\n') into r->buf. 1 ok, 0 EOF, -1 error. */
static int read_line(struct nd_reader *r, char *errbuf)
{
	r->len = 0;
	for (;;) {
		if (r->cap - r->len < 2) {
			size_t ncap = r->cap * 2;
			char *nb = realloc(r->buf, ncap);
			if (!nb)
				return errf(errbuf, "%s: line %ld: out of memory", r->name, r->line + 1);
			r->buf = nb;
			r->cap = ncap;
		}
		if (!gzgets(r->gz, r->buf + r->len, (int)(r->cap - r->len > 1u << 30 ? 1u << 30 : r->cap - r->len))) {
			int zerr;
			const char *m = gzerror(r->gz, &zerr);
			if (zerr != Z_OK && zerr != Z_BUF_ERROR)
				return errf(errbuf, "%s: read error: %s", r->name, m);
			if (r->len == 0)
				return 0;
			break;
		}
		r->len += strlen(r->buf + r->len);
		if (r->len > 0 && r->buf[r->len - 1] == '\n') {
			r->buf[--r->len] = '\0';
			break;
		}
	}
	r->line++;
	if (r->len > 0 && r->buf[r->len - 1] == '\r')
		r->buf[--r->len] = '\0';
	return 1;
}

int nd_next(struct nd_reader *r, json_t **rec, char *errbuf)
{
	*rec = NULL;
	for (;;) {
		int rc = read_line(r, errbuf);
		if (rc <= 0)
			return rc < 0 ? -2 : 0;
		size_t i = strspn(r->buf, " \t");
		if (r->buf[i] == '\0')
			continue;
		json_error_t je;
		json_t *v = json_loadb(r->buf, r->len, JSON_ALLOW_NUL, &je);
		if (!v)
			return errf(errbuf, "%s: line %ld: not JSON: %s (column %d)", r->name, r->line, je.text, je.column);
		if (!json_is_object(v)) {
			json_decref(v);
			return errf(errbuf, "%s: line %ld: not a JSON object", r->name, r->line);
		}
		*rec = v;
		return 1;
	}
}

const char *nd_text(const struct nd_reader *r, size_t *len)
{
	if (len)
		*len = r->len;
	return r->buf;
}

long nd_line(const struct nd_reader *r) { return r->line; }
const char *nd_name(const struct nd_reader *r) { return r->name; }

void nd_close(struct nd_reader *r)
{
	if (!r)
		return;
	if (r->gz)
		gzclose(r->gz);
	free(r->name);
	free(r->buf);
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
