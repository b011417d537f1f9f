/*
 * gzm: gzip members one at a time; see gzm.h.  inflate is reset at every
 * member start, where the next two bytes must be the gzip magic: anything
 * else there is garbage after the last member, and input that ends inside a
 * member is a truncated one.  Either way the damage is dated to the first
 * byte of that member, the point a repair cuts back to.
 */
#include "gzm.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define IN_SIZE (1u << 17)

int gzm_init(struct gzm *g, int fd, uint64_t base)
{
	memset(g, 0, sizeof *g);
	g->fd = fd;
	g->inpos = base;
	g->member_start = g->last_end = base;
	if (!(g->in = malloc(IN_SIZE)))
		return -1;
	g->next = g->in;
	return 0;
}

int gzm_buffered(const struct gzm *g)
{
	return g->avail > 0 || (g->started && g->gz);
}

void gzm_end(struct gzm *g)
{
	if (g->zok)
		inflateEnd(&g->z);
	free(g->in);
	g->in = NULL;
	g->zok = 0;
}

/* At least n unread bytes in the buffer, or all that is left.  -1: errno. */
static int need(struct gzm *g, size_t n)
{
	if (g->avail && g->next != g->in)
		memmove(g->in, g->next, g->avail);
	g->next = g->in;
	while (g->avail < n && !g->eof) {
		ssize_t r = read(g->fd, g->in + g->avail, IN_SIZE - g->avail);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			g->eof = 1;
		g->avail += (size_t)r;
		g->inpos += (uint64_t)r;
	}
	return 0;
}

static ssize_t damaged(struct gzm *g, uint64_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static ssize_t damaged(struct gzm *g, uint64_t at, const char *fmt, ...)
{
	if (!*g->reason) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(g->reason, sizeof g->reason, fmt, ap);
		va_end(ap);
		g->damage_at = at;
	}
	return -2;
}

ssize_t gzm_read(struct gzm *g, void *buf, size_t cap)
{
	if (*g->reason)
		return -2;
	g->member_done = 0;
	if (!g->started) {
		if (need(g, 2) != 0)
			return -1;
		g->started = 1;
		g->gz = g->avail >= 2 && g->in[0] == 0x1f && g->in[1] == 0x8b;
		if (g->gz) {
			if (inflateInit2(&g->z, 15 + 16) != Z_OK) {
				errno = ENOMEM;
				return -1;
			}
			g->zok = 1;
		}
	}
	if (cap > 1u << 30)
		cap = 1u << 30;
	if (!g->gz) {
		if (g->avail == 0 && need(g, 1) != 0)
			return -1;
		size_t m = g->avail < cap ? g->avail : cap;
		memcpy(buf, g->next, m);
		g->next += m;
		g->avail -= m;
		return (ssize_t)m;
	}
	for (;;) {
		if (!g->in_member) {
			if (need(g, 2) != 0)
				return -1;
			uint64_t at = g->inpos - g->avail;
			if (g->avail == 0)
				return 0;
			if (g->avail < 2 && g->next[0] == 0x1f)
				return damaged(g, at, "truncated gzip member");
			if (g->avail < 2 || g->next[0] != 0x1f || g->next[1] != 0x8b)
				return damaged(g, at, "%s", g->members ? "garbage after the last gzip member" : "not gzip data");
			if (inflateReset(&g->z) != Z_OK)
				return damaged(g, at, "zlib reset failed");
			g->member_start = at;
			g->in_member = 1;
		}
		if (g->avail == 0) {
			if (need(g, 1) != 0)
				return -1;
			if (g->avail == 0)
				return damaged(g, g->member_start, "truncated gzip member");
		}
		g->z.next_in = (unsigned char *)g->next;
		g->z.avail_in = (unsigned)g->avail;
		g->z.next_out = buf;
		g->z.avail_out = (unsigned)cap;
		int rc = inflate(&g->z, Z_NO_FLUSH);
		size_t got = cap - g->z.avail_out;
		g->next = g->z.next_in;
		g->avail = g->z.avail_in;
		if (rc == Z_STREAM_END) {
			g->in_member = 0;
			g->members++;
			g->last_end = g->inpos - g->avail;
			if (got == 0)
				continue; /* an empty member */
			g->member_done = 1;
			return (ssize_t)got;
		}
		if (rc == Z_OK || (rc == Z_BUF_ERROR && g->avail == 0)) {
			if (got)
				return (ssize_t)got;
			continue;
		}
		return damaged(g, g->member_start, "corrupt gzip member: %s", g->z.msg ? g->z.msg : "data error");
	}
}
