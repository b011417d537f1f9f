/*
 * gzm: a plain or gzip input read one gzip member at a time, knowing where
 * in the compressed bytes each member starts and ends, so that a torn or
 * truncated archive is reported at the byte where its damage starts
 * (docs/exit-codes.md, code 4) instead of being read as one bad line, or
 * silently.  Written on zlib's inflate rather than gzread because gzread
 * joins concatenated members into one stream and cannot say at which
 * compressed byte a member ended, nor tell a cut member from a whole one.
 *
 * gzm_read never returns bytes of two members in one call: after a call that
 * ends a member, member_done is set and last_end is the compressed offset
 * just past it.  Input whose first two bytes are not the gzip magic is plain
 * and is passed through (gz == 0).  Offsets count from the descriptor's
 * position when gzm_init was called, plus the base given there.
 *
 * Ownership: the caller owns the descriptor (gzm never closes it) and the
 * struct; gzm_end frees what gzm_init allocated.  Nothing here prints.
 */
#ifndef KSCI_GZM_H
#define KSCI_GZM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <zlib.h>

struct gzm {
	int fd;
	int gz;          /* 1: gzip members; 0: plain bytes */
	int member_done; /* the last gzm_read ended a member */
	uint64_t members;      /* whole members read so far */
	uint64_t member_start; /* compressed offset of the member being read (or last read) */
	uint64_t last_end;     /* compressed offset just past the last whole member */
	uint64_t damage_at;    /* after -2: where the damage starts (the member's first byte) */
	char reason[160];      /* after -2: what is wrong, e.g. "truncated gzip member" */

	/* private */
	z_stream z;
	int zok, in_member, eof, started;
	unsigned char *in;
	const unsigned char *next;
	size_t avail;
	uint64_t inpos; /* base + compressed bytes read from fd */
};

/* 0, or -1 when out of memory.  Reads nothing yet. */
int gzm_init(struct gzm *g, int fd, uint64_t base);
/* Up to cap bytes of uncompressed output: the count, 0 at a clean end,
 * -1 on a read error (errno), -2 when the input is damaged (damage_at,
 * reason).  Output delivered before -2 came from the damaged member too. */
ssize_t gzm_read(struct gzm *g, void *buf, size_t cap);
/* 1 when a gzm_read may return bytes without reading the descriptor (bytes
 * read and not yet handed out, or a gzip stream, whose inflate state is not
 * looked into); 0 when the next gzm_read has to read the descriptor first. */
int gzm_buffered(const struct gzm *g);
void gzm_end(struct gzm *g);

#endif
