/*
 * ndjson: line reader over lib/gzm (plain or gzip, member by member), its
 * line a strbuf so lines may be arbitrarily long.  Lines are cut with
 * memchr on what was read, never measured with strlen: a raw NUL byte in a
 * line makes that line bad, and the next line is read whole.
 */
#include "ndjson.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gzm.h"
#include "strbuf.h"

#define OUT_SIZE (1u << 17)

struct nd_reader {
	int fd;
	struct gzm g;
	char *name;
	char *out;              /* decompressed bytes not yet cut into lines */
	size_t opos, olen;
	int eof, damaged;
	struct strbuf line; /* the current line, without its newline */
	long lineno;
};

/* The reader over an open descriptor (which it then owns), at file offset base. */
static struct nd_reader *open_fd(int fd, const char *name, uint64_t base, char *errbuf)
{
	int open_errno = errno;
	struct nd_reader *r = calloc(1, sizeof *r);
	if (!r) {
		if (fd >= 0)
			close(fd);
		errf(errbuf, "out of memory");
		return NULL;
	}
	r->fd = fd;
	r->g.fd = -1;
	r->name = strdup(name);
	if (fd < 0 || !r->name || !(r->out = malloc(OUT_SIZE)) || gzm_init(&r->g, fd, base) != 0 ||
	    sb_grow(&r->line, 1 << 16) != 0) {
		errf(errbuf, "%s: %s", name, fd < 0 ? strerror(open_errno) : "out of memory");
		nd_close(r);
		return NULL;
	}
	return r;
}

struct nd_reader *nd_open(const char *path, char *errbuf)
{
	int stdin_ = !path || strcmp(path, "-") == 0;
	return open_fd(stdin_ ? 0 : open(path, O_RDONLY | O_CLOEXEC), stdin_ ? "<stdin>" : path, 0, errbuf);
}

struct nd_reader *nd_open_at(const char *path, long long offset, char *errbuf)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && lseek(fd, (off_t)offset, SEEK_SET) < 0) {
		errf(errbuf, "%s: seek: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	return open_fd(fd, path, fd >= 0 ? (uint64_t)offset : 0, errbuf);
}

int nd_damage_msg(char *errbuf, const char *name, unsigned long long at, const char *reason)
{
	return errf(errbuf, "%s: damaged at byte %llu (%s); repair with: karchive repair %s", name, at, reason, name);
}

/* Read one line (without '\n') into r->line. 1 ok, 0 EOF, -1 error. */
static int read_line(struct nd_reader *r, char *errbuf)
{
	struct strbuf *b = &r->line;
	b->len = 0;
	for (;;) {
		if (r->opos == r->olen) {
			if (r->eof)
				break;
			ssize_t got = gzm_read(&r->g, r->out, OUT_SIZE);
			if (got == -1)
				return errf(errbuf, "%s: read error: %s", r->name, strerror(errno));
			if (got == -2) {
				r->damaged = 1;
				return nd_damage_msg(errbuf, r->name, (unsigned long long)r->g.damage_at, r->g.reason);
			}
			r->opos = 0;
			r->olen = (size_t)got;
			if (got == 0) {
				r->eof = 1;
				break;
			}
		}
		const char *p = r->out + r->opos;
		size_t avail = r->olen - r->opos;
		const char *nl = memchr(p, '\n', avail);
		size_t n = nl ? (size_t)(nl - p) : avail;
		if (sb_grow(b, n + 1) != 0)
			return errf(errbuf, "%s: line %ld: out of memory", r->name, r->lineno + 1);
		memcpy(b->buf + b->len, p, n);
		b->len += n;
		b->buf[b->len] = '\0';
		r->opos += n + (nl != NULL);
		if (nl)
			goto line;
	}
	if (b->len == 0)
		return 0;
line:
	r->lineno++;
	if (b->len > 0 && b->buf[b->len - 1] == '\r')
		b->buf[--b->len] = '\0';
	return 1;
}

/* A copy of s where every integer too big for 64 bits gets an exponent
 * ("18446744073709551616" -> "18446744073709551616e0"), which makes it a
 * real and leaves the rest of the record as it was.  NULL: none, or no memory. */
static char *big_ints_as_reals(const char *s, size_t n, size_t *outn)
{
	struct strbuf b = {0};
	int in_str = 0, changed = 0;
	size_t i = 0, from = 0;
	while (i < n) {
		char c = s[i];
		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = 0;
			i++;
			continue;
		}
		if (c == '"') {
			in_str = 1;
			i++;
			continue;
		}
		if (c != '-' && (c < '0' || c > '9')) {
			i++;
			continue;
		}
		size_t st = i;
		if (c == '-')
			i++;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
		if (i < n && (s[i] == '.' || s[i] == 'e' || s[i] == 'E'))
			continue; /* already a real */
		char num[32];
		size_t len = i - st;
		int big = len >= sizeof num;
		if (!big) {
			memcpy(num, s + st, len);
			num[len] = '\0';
			errno = 0;
			(void)strtoll(num, NULL, 10);
			big = errno == ERANGE;
		}
		if (big) {
			sb_addn(&b, s + from, i - from);
			sb_addn(&b, "e0", 2);
			from = i;
			changed = 1;
		}
	}
	if (!changed) {
		sb_release(&b);
		return NULL;
	}
	sb_addn(&b, s + from, n - from);
	return sb_detach(&b, outn);
}

json_t *nd_parse(const char *s, size_t n, char *why)
{
	if (memchr(s, '\0', n)) {
		errf(why, "contains a NUL byte (column %zu)", (size_t)((const char *)memchr(s, '\0', n) - s) + 1);
		return NULL;
	}
	/* Invalid UTF-8 jansson refuses itself, in strings ("unable to decode
	 * byte") and out of them ("invalid token"). */
	json_error_t je;
	json_t *v = json_loadb(s, n, JSON_ALLOW_NUL, &je);
	if (!v && json_error_code(&je) == json_error_numeric_overflow) {
		size_t m;
		char *t = big_ints_as_reals(s, n, &m);
		if (t) {
			json_error_t je2;
			v = json_loadb(t, m, JSON_ALLOW_NUL, &je2);
			free(t);
		}
	}
	if (!v) {
		errf(why, "not JSON: %s (column %d)", je.text, je.column);
		return NULL;
	}
	if (!json_is_object(v)) {
		json_decref(v);
		errf(why, "not a JSON object");
		return NULL;
	}
	return v;
}

int nd_damaged(const struct nd_reader *r) { return r->damaged; }

int nd_next(struct nd_reader *r, json_t **rec, char *errbuf)
{
	*rec = NULL;
	for (;;) {
		int rc = read_line(r, errbuf);
		if (rc <= 0)
			return rc < 0 ? -2 : 0;
		size_t i = strspn(r->line.buf, " \t");
		if (i == r->line.len)
			continue;
		char why[ERRBUF];
		json_t *v = nd_parse(r->line.buf, r->line.len, why);
		if (!v)
			return errf(errbuf, "%s: line %ld: %s", r->name, r->lineno, why);
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

int nd_wait_fd(const struct nd_reader *r)
{
	if (r->eof || r->fd < 0 || gzm_buffered(&r->g) || memchr(r->out + r->opos, '\n', r->olen - r->opos))
		return -1;
	return r->fd;
}
const char *nd_name(const struct nd_reader *r) { return r->name; }

void nd_close(struct nd_reader *r)
{
	if (!r)
		return;
	gzm_end(&r->g);
	if (r->fd >= 0)
		close(r->fd);
	free(r->out);
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
