/* strbuf: see strbuf.h. */
#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sb_grow(struct strbuf *b, size_t n)
{
	if (b->oom)
		return -1;
	if (b->len + n + 1 <= b->alloc)
		return 0;
	if (n > ((size_t)-1) / 2 - b->len) {
		b->oom = 1;
		return -1;
	}
	size_t na = b->alloc ? b->alloc : 256;
	while (na < b->len + n + 1)
		na *= 2;
	char *nb = realloc(b->buf, na);
	if (!nb) {
		b->oom = 1;
		return -1;
	}
	b->buf = nb;
	b->alloc = na;
	return 0;
}

void sb_addn(struct strbuf *b, const void *s, size_t n)
{
	if (sb_grow(b, n) != 0)
		return;
	if (n)
		memcpy(b->buf + b->len, s, n);
	b->len += n;
	b->buf[b->len] = '\0';
}

void sb_add(struct strbuf *b, const char *s) { sb_addn(b, s, strlen(s)); }

void sb_addc(struct strbuf *b, char c) { sb_addn(b, &c, 1); }

void sb_printf(struct strbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || sb_grow(b, (size_t)n) != 0) {
		b->oom = 1;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(b->buf + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

char *sb_detach(struct strbuf *b, size_t *len)
{
	char *s = b->buf;
	size_t n = b->len;
	if (b->oom) {
		free(s);
		s = NULL;
		n = 0;
	} else if (!s) {
		s = calloc(1, 1);
	}
	*b = (struct strbuf)STRBUF_INIT;
	if (len)
		*len = n;
	return s;
}

void sb_release(struct strbuf *b)
{
	free(b->buf);
	*b = (struct strbuf)STRBUF_INIT;
}
