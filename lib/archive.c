/*
 * archive: the threaded archive scanner and its random access; see archive.h.
 *
 * A producer thread reads raw bytes, inflates them (or copies them, for a
 * plain file) into a ring of NCHUNK large chunks and hands each chunk over
 * cut after its last '\n'; the partial line at the end moves to the next
 * chunk.  The calling thread splits chunks into lines.  Restart points are
 * taken by the producer with inflate(Z_BLOCK), which stops at every deflate
 * block boundary: there the compressed position, the bit offset inside the
 * current byte and the last 32 KB of output are all that inflate needs to
 * resume (the technique of zlib's examples/zran.c, written here anew).
 */
#include "archive.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "ndjson.h"

#define IN_SIZE (1u << 20)
#define CHUNK (4u << 20)
#define ROOM (1u << 16) /* free bytes the producer wants before inflating */
#define NCHUNK 3
#define WIN 32768u

struct point {
	uint64_t out;       /* uncompressed offset */
	uint64_t in;        /* compressed offset of the next whole byte */
	int bits;           /* bits of the byte before `in` still unused */
	int start;          /* a gzip member starts at `in` (no window needed) */
	unsigned wlen;
	unsigned char *win; /* last wlen bytes of output before `out` */
};

struct chunk {
	char *buf;
	size_t cap, len;
	uint64_t base; /* uncompressed offset of buf[0] */
};

struct ar_file {
	char *name;
	int fd, own_fd;
	int rfd;     /* what ar_fetch reads: fd, or the spool */
	off_t rbase; /* offset of the archive's first byte in rfd */
	int spool;   /* copy of non-seekable input, or -1 */
	int gz, scanned;
	struct point *pts;
	size_t npts, cappts;

	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct chunk ch[NCHUNK];
	unsigned long taken, published, consumed;
	int done, stop, failed, damaged;
	char err[ERRBUF];
};

struct ar_file *ar_open(const char *path, char *errbuf)
{
	struct ar_file *a = calloc(1, sizeof *a);
	int stdin_ = !path || strcmp(path, "-") == 0;
	if (!a || !(a->name = strdup(stdin_ ? "<stdin>" : path))) {
		free(a);
		errf(errbuf, "out of memory");
		return NULL;
	}
	a->spool = -1;
	a->fd = stdin_ ? 0 : open(path, O_RDONLY | O_CLOEXEC);
	a->own_fd = !stdin_;
	struct stat st;
	if (a->fd < 0 || fstat(a->fd, &st) != 0) {
		errf(errbuf, "%s: %s", a->name, strerror(errno));
		ar_close(a);
		return NULL;
	}
	off_t here = lseek(a->fd, 0, SEEK_CUR);
	if (S_ISREG(st.st_mode) && here >= 0) {
		a->rfd = a->fd;
		a->rbase = here;
	} else {
		const char *dir = getenv("TMPDIR");
		char tmp[4096];
		snprintf(tmp, sizeof tmp, "%s/kselect-spool.XXXXXX", dir && *dir ? dir : "/tmp");
		a->spool = mkstemp(tmp);
		if (a->spool < 0) {
			errf(errbuf, "%s: cannot make a spool file for non-seekable input: %s", tmp, strerror(errno));
			ar_close(a);
			return NULL;
		}
		unlink(tmp);
		a->rfd = a->spool;
	}
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	return a;
}

const char *ar_name(const struct ar_file *a) { return a->name; }

void ar_close(struct ar_file *a)
{
	if (!a)
		return;
	if (a->own_fd && a->fd >= 0)
		close(a->fd);
	if (a->spool >= 0)
		close(a->spool);
	for (size_t i = 0; i < a->npts; i++)
		free(a->pts[i].win);
	free(a->pts);
	for (int i = 0; i < NCHUNK; i++)
		free(a->ch[i].buf);
	free(a->name);
	free(a);
}

/* --- producer ------------------------------------------------------------ */

static void fail(struct ar_file *a, const char *fmt, const char *detail)
{
	if (!a->failed) {
		snprintf(a->err, sizeof a->err, fmt, a->name, detail);
		a->failed = 1;
	}
}

static struct chunk *take(struct ar_file *a)
{
	pthread_mutex_lock(&a->mu);
	while (a->taken - a->consumed >= NCHUNK && !a->stop)
		pthread_cond_wait(&a->cv, &a->mu);
	struct chunk *c = a->stop ? NULL : &a->ch[a->taken++ % NCHUNK];
	pthread_mutex_unlock(&a->mu);
	return c;
}

static void publish(struct ar_file *a, int last)
{
	pthread_mutex_lock(&a->mu);
	if (!last || a->taken > a->published)
		a->published++;
	if (last)
		a->done = 1;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
}

static int reserve(struct chunk *c, size_t need)
{
	if (c->cap - c->len >= need)
		return 0;
	size_t ncap = c->cap ? c->cap : CHUNK;
	while (ncap - c->len < need)
		ncap *= 2;
	char *nb = realloc(c->buf, ncap);
	if (!nb)
		return -1;
	c->buf = nb;
	c->cap = ncap;
	return 0;
}

/* Make ROOM free bytes: hand the chunk over up to its last newline and carry
 * the rest into the next one; a chunk holding no newline grows instead. */
static struct chunk *room(struct ar_file *a, struct chunk *cur)
{
	if (cur->cap - cur->len >= ROOM)
		return cur;
	char *nl = cur->len ? memrchr(cur->buf, '\n', cur->len) : NULL;
	if (!nl) {
		if (reserve(cur, ROOM) != 0) {
			fail(a, "%s: %s", "out of memory");
			return NULL;
		}
		return cur;
	}
	size_t keep = (size_t)(nl + 1 - cur->buf), rest = cur->len - keep;
	struct chunk *nx = take(a);
	if (!nx)
		return NULL;
	nx->len = 0;
	if (reserve(nx, rest + ROOM) != 0) {
		fail(a, "%s: %s", "out of memory");
		return NULL;
	}
	memcpy(nx->buf, cur->buf + keep, rest);
	nx->len = rest;
	nx->base = cur->base + keep;
	cur->len = keep;
	publish(a, 0);
	return nx;
}

static int add_point(struct ar_file *a, const struct point *p, const char *win)
{
	if (a->npts == a->cappts) {
		size_t n = a->cappts ? a->cappts * 2 : 64;
		struct point *np = realloc(a->pts, n * sizeof *np);
		if (!np)
			return -1;
		a->pts = np;
		a->cappts = n;
	}
	struct point *q = &a->pts[a->npts];
	*q = *p;
	q->win = NULL;
	if (p->wlen) {
		if (!(q->win = malloc(p->wlen)))
			return -1;
		memcpy(q->win, win, p->wlen);
	}
	a->npts++;
	return 0;
}

static int write_all(int fd, const unsigned char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The archive is torn at compressed byte at: the message of
 * docs/exit-codes.md.  The partial line the damage cut is dropped. */
static void fail_damaged(struct ar_file *a, struct chunk *cur, uint64_t at, const char *reason)
{
	if (a->failed)
		return;
	nd_damage_msg(a->err, a->name, (unsigned long long)at, reason);
	a->failed = a->damaged = 1;
	if (cur) {
		char *nl = cur->len ? memrchr(cur->buf, '\n', cur->len) : NULL;
		cur->len = nl ? (size_t)(nl + 1 - cur->buf) : 0;
	}
}

/* Fill in[] (cap bytes) from the input, spooling what was read; bytes read or -1. */
static ssize_t refill(struct ar_file *a, unsigned char *in, size_t cap, size_t want)
{
	size_t got = 0;
	while (got < want) {
		ssize_t r = read(a->fd, in + got, cap - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			fail(a, "%s: read error: %s", strerror(errno));
			return -1;
		}
		if (r == 0)
			break;
		if (a->spool >= 0 && write_all(a->spool, in + got, (size_t)r) != 0) {
			fail(a, "%s: writing the spool file: %s", strerror(errno));
			return -1;
		}
		got += (size_t)r;
	}
	return (ssize_t)got;
}

static void *producer(void *arg)
{
	struct ar_file *a = arg;
	unsigned char *in = malloc(IN_SIZE);
	z_stream z;
	memset(&z, 0, sizeof z);
	int zok = 0, in_member = 0, eof = 0;
	uint64_t out = 0, inpos = 0, member_start = 0, last_pt = 0, member_in = 0, members = 0;
	const unsigned char *next = in;
	size_t avail = 0;
	struct chunk *cur = take(a);
	if (!in || !cur) {
		fail(a, "%s: %s", "out of memory");
		goto end;
	}
	cur->len = 0;
	cur->base = 0;
	/* Two bytes decide plain or gzip, even from a pipe that trickles. */
	ssize_t r = refill(a, in, IN_SIZE, 2);
	if (r < 0)
		goto end;
	avail = (size_t)r;
	inpos = (uint64_t)r;
	eof = r < 2;
	a->gz = r >= 2 && in[0] == 0x1f && in[1] == 0x8b;
	if (a->gz) {
		if (inflateInit2(&z, 15 + 16) != Z_OK) {
			fail(a, "%s: %s", "zlib init failed");
			goto end;
		}
		zok = 1;
	}
	for (;;) {
		if (a->stop)
			break;
		if (avail == 0 && !eof) {
			if ((r = refill(a, in, IN_SIZE, 1)) < 0)
				break;
			next = in;
			avail = (size_t)r;
			inpos += (uint64_t)r;
			eof = r == 0;
		}
		if (avail == 0 && eof) {
			if (in_member)
				fail_damaged(a, cur, member_in, "truncated gzip member");
			break;
		}
		if (!(cur = room(a, cur)))
			break;
		size_t space = cur->cap - cur->len;
		if (!a->gz) {
			size_t m = avail < space ? avail : space;
			memcpy(cur->buf + cur->len, next, m);
			cur->len += m;
			next += m;
			avail -= m;
			continue;
		}
		if (!in_member) {
			if (avail == 1 && !eof) { /* the magic needs two bytes */
				in[0] = *next;
				if ((r = refill(a, in + 1, IN_SIZE - 1, 1)) < 0)
					break;
				next = in;
				avail = 1 + (size_t)r;
				inpos += (uint64_t)r;
				eof = r == 0;
			}
			member_in = inpos - avail;
			if (avail < 2 && next[0] == 0x1f) {
				fail_damaged(a, cur, member_in, "truncated gzip member");
				break;
			}
			if (avail < 2 || next[0] != 0x1f || next[1] != 0x8b) {
				fail_damaged(a, cur, member_in, members ? "garbage after the last gzip member" : "not gzip data");
				break;
			}
			struct point p = {.out = out, .in = inpos - avail, .start = 1};
			if (out && inflateReset(&z) != Z_OK) {
				fail(a, "%s: %s", "zlib reset failed");
				break;
			}
			if (add_point(a, &p, NULL) != 0) {
				fail(a, "%s: %s", "out of memory");
				break;
			}
			member_start = last_pt = out;
			in_member = 1;
		}
		z.next_in = (unsigned char *)next;
		z.avail_in = (unsigned)avail;
		z.next_out = (unsigned char *)cur->buf + cur->len;
		z.avail_out = (unsigned)(space > (1u << 30) ? 1u << 30 : space);
		unsigned before = z.avail_out;
		int rc = inflate(&z, Z_BLOCK);
		size_t got = before - z.avail_out;
		cur->len += got;
		out += got;
		next = z.next_in;
		avail = z.avail_in;
		if (rc == Z_STREAM_END) {
			in_member = 0;
			members++;
			continue;
		}
		if (rc == Z_BUF_ERROR && avail == 0)
			continue;
		if (rc != Z_OK) {
			char m[200];
			snprintf(m, sizeof m, "corrupt gzip member: %s", z.msg ? z.msg : "data error");
			fail_damaged(a, cur, member_in, m);
			break;
		}
		if ((z.data_type & 128) && !(z.data_type & 64) && out - last_pt >= AR_SPAN) {
			uint64_t wl = out - member_start < WIN ? out - member_start : WIN;
			if (cur->len >= wl) {
				struct point p = {.out = out, .in = inpos - avail, .bits = z.data_type & 7, .wlen = (unsigned)wl};
				if (add_point(a, &p, cur->buf + cur->len - wl) != 0) {
					fail(a, "%s: %s", "out of memory");
					break;
				}
				last_pt = out;
			}
		}
	}
end:
	if (zok)
		inflateEnd(&z);
	free(in);
	publish(a, 1);
	return NULL;
}

/* --- consumer ------------------------------------------------------------ */

int ar_scan(struct ar_file *a, ar_line_fn fn, void *ctx, char *errbuf)
{
	if (a->scanned)
		return errf(errbuf, "%s: scanned twice", a->name);
	a->scanned = 1;
	pthread_t th;
	if (pthread_create(&th, NULL, producer, a) != 0)
		return errf(errbuf, "%s: cannot start the reader thread", a->name);
	long lineno = 0;
	int ret = 0;
	for (;;) {
		pthread_mutex_lock(&a->mu);
		while (a->consumed == a->published && !a->done)
			pthread_cond_wait(&a->cv, &a->mu);
		int have = a->consumed < a->published;
		pthread_mutex_unlock(&a->mu);
		if (!have)
			break;
		struct chunk *c = &a->ch[a->consumed % NCHUNK];
		const char *p = c->buf, *end = c->buf + c->len;
		while (p < end && !ret) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			const char *e = nl ? nl : end;
			size_t n = (size_t)(e - p);
			if (n && p[n - 1] == '\r')
				n--;
			ret = fn(ctx, p, n, ++lineno, c->base + (uint64_t)(p - c->buf));
			p = nl ? nl + 1 : end;
		}
		pthread_mutex_lock(&a->mu);
		a->consumed++;
		if (ret)
			a->stop = 1;
		pthread_cond_broadcast(&a->cv);
		pthread_mutex_unlock(&a->mu);
		if (ret)
			break;
	}
	pthread_join(th, NULL);
	if (ret)
		return ret;
	if (a->failed) {
		errf(errbuf, "%s", a->err);
		return a->damaged ? AR_DAMAGED : -1;
	}
	return 0;
}

/* --- random access ------------------------------------------------------- */

static int pread_all(int fd, void *buf, size_t n, off_t at, size_t *got)
{
	*got = 0;
	while (*got < n) {
		ssize_t r = pread(fd, (char *)buf + *got, n - *got, at + (off_t)*got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		*got += (size_t)r;
	}
	return 0;
}

static char *fetch_gz(struct ar_file *a, uint64_t off, size_t len, char *res, char *errbuf)
{
	size_t lo = 0, hi = a->npts;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (a->pts[mid].out <= off)
			lo = mid;
		else
			hi = mid;
	}
	const struct point *pt = &a->pts[lo];
	static const size_t BUF = 1u << 16;
	unsigned char *in = malloc(BUF), *outb = malloc(BUF);
	z_stream z;
	memset(&z, 0, sizeof z);
	int raw = !pt->start, zok = 0;
	uint64_t pos = pt->in, cur = pt->out;
	size_t got = 0;
	const char *why = NULL;
	if (!in || !outb) {
		why = "out of memory";
		goto out;
	}
	if (inflateInit2(&z, raw ? -15 : 15 + 16) != Z_OK) {
		why = "zlib init failed";
		goto out;
	}
	zok = 1;
	if (raw && pt->bits) {
		unsigned char b;
		size_t n;
		if (pread_all(a->rfd, &b, 1, a->rbase + (off_t)pos - 1, &n) != 0 || n != 1) {
			why = "cannot re-read the archive";
			goto out;
		}
		inflatePrime(&z, pt->bits, b >> (8 - pt->bits));
	}
	if (raw && pt->wlen)
		inflateSetDictionary(&z, pt->win, pt->wlen);
	while (got < len) {
		if (z.avail_in == 0) {
			size_t n;
			if (pread_all(a->rfd, in, BUF, a->rbase + (off_t)pos, &n) != 0 || n == 0) {
				why = "archive changed or shrank since it was read";
				goto out;
			}
			pos += n;
			z.next_in = in;
			z.avail_in = (unsigned)n;
		}
		z.next_out = outb;
		z.avail_out = (unsigned)BUF;
		int rc = inflate(&z, Z_NO_FLUSH);
		size_t n = BUF - z.avail_out;
		if (cur + n > off + got) {
			size_t s = (size_t)(off + got - cur), m = n - s;
			if (m > len - got)
				m = len - got;
			memcpy(res + got, outb + s, m);
			got += m;
		}
		cur += n;
		if (rc == Z_STREAM_END) {
			if (raw) { /* past the member's 8-byte trailer, in gzip mode again */
				pos = pos - z.avail_in + 8;
				z.avail_in = 0;
				inflateEnd(&z);
				zok = 0;
				if (inflateInit2(&z, 15 + 16) != Z_OK) {
					why = "zlib init failed";
					goto out;
				}
				zok = 1;
				raw = 0;
			} else {
				inflateReset(&z);
			}
		} else if (rc != Z_OK && !(rc == Z_BUF_ERROR && z.avail_in == 0)) {
			why = z.msg ? z.msg : "gzip data error";
			goto out;
		}
	}
out:
	if (zok)
		inflateEnd(&z);
	free(in);
	free(outb);
	if (why) {
		errf(errbuf, "%s: re-reading offset %llu: %s", a->name, (unsigned long long)off, why);
		free(res);
		return NULL;
	}
	return res;
}

char *ar_fetch(struct ar_file *a, uint64_t off, size_t len, char *errbuf)
{
	char *res = malloc(len + 1);
	if (!res) {
		errf(errbuf, "out of memory");
		return NULL;
	}
	res[len] = '\0';
	if (a->gz && a->npts)
		return fetch_gz(a, off, len, res, errbuf);
	size_t got;
	if (pread_all(a->rfd, res, len, a->rbase + (off_t)off, &got) != 0 || got != len) {
		errf(errbuf, "%s: re-reading offset %llu: %s", a->name, (unsigned long long)off,
		     got != len ? "archive changed or shrank since it was read" : strerror(errno));
		free(res);
		return NULL;
	}
	return res;
}
