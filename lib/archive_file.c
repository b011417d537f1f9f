/*
 * archive_file: check, repair and append for archives of gzip members; see
 * the second half of archive.h.
 *
 * The one rule: the archive only ever grows by whole members, and only ever
 * shrinks back to the end of a whole member, with the bytes cut saved first.
 * An append builds its member in memory (deflate with the gzip wrapper),
 * writes it after the last byte under the lock, and fsyncs; if the write
 * fails it cuts the file back to the size it had, so a full disk leaves the
 * archive byte for byte as it was.  Both writers hold an exclusive flock on
 * "FILE.lock" (a file of its own, so the lock survives the archive being
 * cut, and readers never need it).
 */
#include "archive.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "gzm.h"
#include "ndjson.h"
#include "strbuf.h"

#define OUT_SIZE (1u << 17)

/* --- check ---------------------------------------------------------------- */

/* The line of n bytes, line number lineno: ok (or blank), or the reason. */
static int line_ok(const char *s, size_t n, long lineno, struct ar_check *c, uint64_t *recs)
{
	if (n && s[n - 1] == '\r')
		n--;
	if (strspn(s, " \t") >= n && !memchr(s, '\0', n))
		return 1;
	char why[ERRBUF];
	json_t *v = nd_parse(s, n, why);
	if (!v) {
		snprintf(c->reason, sizeof c->reason, "line %ld: %s", lineno, why);
		return 0;
	}
	json_decref(v);
	(*recs)++;
	return 1;
}

int ar_check_fd(int fd, const char *name, int lines, struct ar_check *c, char *errbuf)
{
	memset(c, 0, sizeof *c);
	struct stat st;
	if (fstat(fd, &st) != 0 || lseek(fd, 0, SEEK_SET) < 0)
		return errf(errbuf, "%s: %s", name, strerror(errno));
	c->size = (uint64_t)st.st_size;
	if (c->size == 0)
		return 0; /* no members yet: whole */
	struct gzm g;
	char *out = malloc(OUT_SIZE);
	struct strbuf line = STRBUF_INIT; /* the line being read, across reads */
	if (!out || gzm_init(&g, fd, 0) != 0) {
		free(out);
		return errf(errbuf, "out of memory");
	}
	long lineno = 0;
	uint64_t recs = 0; /* records of the member being read */
	int rc = 0;
	for (;;) {
		ssize_t got = gzm_read(&g, out, OUT_SIZE);
		if (got == -1) {
			rc = errf(errbuf, "%s: read error: %s", name, strerror(errno));
			break;
		}
		if (!g.gz) {
			c->plain = 1;
			break;
		}
		if (got == -2) {
			c->damaged = 1;
			c->damage_at = g.damage_at;
			snprintf(c->reason, sizeof c->reason, "%s", g.reason);
			break;
		}
		if (got == 0)
			break;
		if (lines) {
			const char *p = out, *end = out + got;
			int bad = 0;
			while (p < end) {
				const char *nl = memchr(p, '\n', (size_t)(end - p));
				size_t k = nl ? (size_t)(nl - p) : (size_t)(end - p);
				sb_addn(&line, p, k);
				p += k;
				if (!nl)
					break;
				p++;
				if (line.oom) {
					rc = errf(errbuf, "out of memory");
					goto out;
				}
				if (!line_ok(line.buf ? line.buf : "", line.len, ++lineno, c, &recs)) {
					bad = 1;
					break;
				}
				line.len = 0;
			}
			if (!bad && g.member_done && line.len) {
				snprintf(c->reason, sizeof c->reason, "line %ld: the member ends inside the line", lineno + 1);
				bad = 1;
			}
			if (bad) {
				c->damaged = 1;
				c->damage_at = g.member_start;
				break;
			}
		}
		if (g.member_done) {
			c->members = g.members;
			c->good_end = g.last_end;
			c->records += recs;
			recs = 0;
		}
	}
	if (!c->damaged && !c->plain && !rc) {
		/* members of no bytes end no gzm_read: count them here */
		c->members = g.members;
		c->good_end = g.last_end;
	}
out:
	gzm_end(&g);
	free(out);
	sb_release(&line);
	return rc;
}

static int verdict(const char *name, const struct ar_check *c, char *errbuf)
{
	if (c->plain) {
		errf(errbuf, "%s: not a gzip archive (plain NDJSON?); karchive keeps gzip archives only", name);
		return KSCI_EXIT_DAMAGED;
	}
	if (c->damaged) {
		nd_damage_msg(errbuf, name, (unsigned long long)c->damage_at, c->reason);
		return KSCI_EXIT_DAMAGED;
	}
	errf(errbuf, "%s: whole: %" PRIu64 " members, %" PRIu64 " records, %" PRIu64 " bytes", name, c->members,
	     c->records, c->size);
	return KSCI_EXIT_OK;
}

int ar_check_path(const char *path, struct ar_check *c, char *errbuf)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		memset(c, 0, sizeof *c);
		errf(errbuf, "%s: %s", path, strerror(errno));
		return KSCI_EXIT_FATAL;
	}
	int rc = ar_check_fd(fd, path, 1, c, errbuf);
	close(fd);
	return rc ? KSCI_EXIT_FATAL : verdict(path, c, errbuf);
}

/* --- the lock and durability ---------------------------------------------- */

/* The exclusive lock on path.lock: its descriptor, or -1 (errbuf). */
static int lock_archive(const char *path, char *errbuf)
{
	char lp[4096];
	if ((size_t)snprintf(lp, sizeof lp, "%s.lock", path) >= sizeof lp)
		return errf(errbuf, "%s: path too long", path);
	int fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return errf(errbuf, "%s: %s", lp, strerror(errno));
	while (flock(fd, LOCK_EX) != 0) {
		if (errno != EINTR) {
			errf(errbuf, "%s: flock: %s", lp, strerror(errno));
			close(fd);
			return -1;
		}
	}
	return fd;
}

static int fsync_dir(const char *path)
{
	const char *s = strrchr(path, '/');
	char dir[4096];
	if (!s)
		snprintf(dir, sizeof dir, ".");
	else if (s == path)
		snprintf(dir, sizeof dir, "/");
	else
		snprintf(dir, sizeof dir, "%.*s", (int)(s - path), path);
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int rc = fsync(fd);
	int e = errno;
	close(fd);
	errno = e;
	return rc;
}

static int pwrite_all(int fd, const void *buf, size_t n, off_t at)
{
	const char *p = buf;
	while (n) {
		ssize_t w = pwrite(fd, p, n, at);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		if (w == 0) {
			errno = EIO;
			return -1;
		}
		p += w;
		n -= (size_t)w;
		at += w;
	}
	return 0;
}

/* --- repair --------------------------------------------------------------- */

/* Copy [from, to) of fd into a new file cut (which must not exist), fsync'ed. */
static int save_cut(int fd, uint64_t from, uint64_t to, const char *cut, char *errbuf)
{
	int out = open(cut, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0)
		return errf(errbuf, "%s: %s", cut, strerror(errno));
	char *buf = malloc(OUT_SIZE);
	int rc = 0;
	uint64_t at = from;
	while (buf && at < to) {
		size_t want = to - at < OUT_SIZE ? (size_t)(to - at) : OUT_SIZE;
		ssize_t r = pread(fd, buf, want, (off_t)at);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			rc = errf(errbuf, "reading the bytes to cut: %s", r < 0 ? strerror(errno) : "the file shrank");
			break;
		}
		if (pwrite_all(out, buf, (size_t)r, (off_t)(at - from)) != 0) {
			rc = errf(errbuf, "%s: %s", cut, strerror(errno));
			break;
		}
		at += (uint64_t)r;
	}
	if (!buf)
		rc = errf(errbuf, "out of memory");
	free(buf);
	if (!rc && fsync(out) != 0)
		rc = errf(errbuf, "%s: fsync: %s", cut, strerror(errno));
	if (close(out) != 0 && !rc)
		rc = errf(errbuf, "%s: %s", cut, strerror(errno));
	if (rc)
		unlink(cut);
	return rc;
}

int ar_repair(const char *path, struct ar_check *c, char *errbuf)
{
	int lk = lock_archive(path, errbuf);
	if (lk < 0)
		return KSCI_EXIT_FATAL;
	int code = KSCI_EXIT_FATAL;
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		errf(errbuf, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (ar_check_fd(fd, path, 1, c, errbuf) != 0)
		goto out;
	if (c->plain || !c->damaged) {
		code = verdict(path, c, errbuf);
		if (code == KSCI_EXIT_OK)
			errf(errbuf, "%s: whole (%" PRIu64 " members, %" PRIu64 " records); nothing to do", path, c->members,
			     c->records);
		goto out;
	}
	char cut[4096];
	if ((size_t)snprintf(cut, sizeof cut, "%s.cut-%" PRIu64, path, c->good_end) >= sizeof cut) {
		errf(errbuf, "%s: path too long", path);
		goto out;
	}
	if (save_cut(fd, c->good_end, c->size, cut, errbuf) != 0)
		goto out;
	if (fsync_dir(cut) != 0) {
		errf(errbuf, "%s: fsync of its directory: %s", cut, strerror(errno));
		goto out;
	}
	if (ftruncate(fd, (off_t)c->good_end) != 0 || fsync(fd) != 0) {
		errf(errbuf, "%s: cutting back to byte %" PRIu64 ": %s (the bytes are saved in %s)", path, c->good_end,
		     strerror(errno), cut);
		goto out;
	}
	errf(errbuf,
	     "%s: cut at byte %" PRIu64 " (%s); the %" PRIu64 " bytes cut are in %s; kept %" PRIu64
	     " whole members, %" PRIu64 " records",
	     path, c->good_end, c->reason, c->size - c->good_end, cut, c->members, c->records);
	code = KSCI_EXIT_OK;
out:
	if (fd >= 0)
		close(fd);
	close(lk); /* releases the lock */
	return code;
}

/* --- append --------------------------------------------------------------- */

/* The line as a record that reads back as itself; NULL + why. */
static json_t *append_line(const char *s, size_t n, char *why)
{
	json_t *v = nd_parse(s, n, why);
	if (!v)
		return NULL;
	char *t = json_dumps(v, JSON_COMPACT);
	json_t *back = t ? json_loads(t, 0, NULL) : NULL;
	int same = back && json_equal(v, back);
	free(t);
	json_decref(back);
	if (!same) {
		json_decref(v);
		errf(why, "does not read back as the same object");
		return NULL;
	}
	return v;
}

/* The records of text (non-blank lines, '\n'-terminated, '\r' dropped) in
 * *body; the count, or -1 when a line was bad (each told) or memory ran out. */
static long collect(const char *text, size_t n, ar_warn_fn warn, void *ctx, struct strbuf *body, char *errbuf)
{
	long lineno = 0, recs = 0;
	int bad = 0;
	const char *p = text, *end = text + n;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t k = nl ? (size_t)(nl - p) : (size_t)(end - p);
		lineno++;
		size_t m = k && p[k - 1] == '\r' ? k - 1 : k;
		if (strspn(p, " \t") < m || memchr(p, '\0', m)) {
			char why[ERRBUF], msg[ERRBUF + 64];
			json_t *v = append_line(p, m, why);
			if (!v) {
				snprintf(msg, sizeof msg, "<stdin>: line %ld: %s", lineno, why);
				warn(ctx, msg);
				bad = 1;
			} else {
				json_decref(v);
				sb_addn(body, p, m);
				sb_addc(body, '\n');
				recs++;
			}
		}
		p += k + (nl != NULL);
	}
	if (body->oom)
		return errf(errbuf, "out of memory");
	if (bad)
		return errf(errbuf, "bad input: nothing appended");
	return recs;
}

/* body as one gzip member (malloc'd, *outn bytes), or NULL. */
static unsigned char *gzip_member(const char *body, size_t n, size_t *outn)
{
	z_stream z;
	memset(&z, 0, sizeof z);
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return NULL;
	size_t cap = deflateBound(&z, (uLong)n) + 64;
	unsigned char *out = malloc(cap);
	if (out) {
		z.next_in = (unsigned char *)body;
		z.avail_in = (uInt)n;
		z.next_out = out;
		z.avail_out = (uInt)cap;
		if (deflate(&z, Z_FINISH) != Z_STREAM_END) {
			free(out);
			out = NULL;
		} else {
			*outn = cap - z.avail_out;
		}
	}
	deflateEnd(&z);
	return out;
}

int ar_append(const char *path, const char *text, size_t n, ar_warn_fn warn, void *ctx, uint64_t *nrec,
              char *errbuf)
{
	*nrec = 0;
	struct strbuf body = STRBUF_INIT;
	long recs = collect(text, n, warn, ctx, &body, errbuf);
	if (recs < 0) {
		int oom = body.oom;
		sb_release(&body);
		return oom ? KSCI_EXIT_FATAL : KSCI_EXIT_INPUT;
	}
	if (recs == 0) {
		sb_release(&body);
		return KSCI_EXIT_OK;
	}
	if (body.len > 0xffffffffu) { /* one deflate call takes at most 4 GB */
		sb_release(&body);
		errf(errbuf, "input too large for one member");
		return KSCI_EXIT_FATAL;
	}
	size_t gzn = 0;
	unsigned char *gz = gzip_member(body.buf, body.len, &gzn);
	sb_release(&body);
	if (!gz) {
		errf(errbuf, "out of memory");
		return KSCI_EXIT_FATAL;
	}
	int code = KSCI_EXIT_FATAL, fd = -1;
	int lk = lock_archive(path, errbuf);
	if (lk < 0)
		goto out;
	struct stat st;
	int created = access(path, F_OK) != 0;
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0 || fstat(fd, &st) != 0) {
		errf(errbuf, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (st.st_size > 0) {
		struct ar_check c;
		if (ar_check_fd(fd, path, 0, &c, errbuf) != 0)
			goto out;
		if (c.plain || c.damaged) {
			code = verdict(path, &c, errbuf);
			goto out;
		}
	}
	off_t old = st.st_size;
	if (pwrite_all(fd, gz, gzn, old) != 0 || fsync(fd) != 0 || (created && fsync_dir(path) != 0)) {
		int e = errno;
		/* Undo: the archive as it was, whatever part of the member landed. */
		int undone = ftruncate(fd, old) == 0 && fsync(fd) == 0;
		errf(errbuf, "%s: %s%s", path, strerror(e),
		     undone ? "; nothing appended" : "; and cutting the partial member back failed: run karchive repair");
		goto out;
	}
	*nrec = (uint64_t)recs;
	code = KSCI_EXIT_OK;
out:
	if (fd >= 0)
		close(fd);
	if (lk >= 0)
		close(lk);
	free(gz);
	return code;
}
