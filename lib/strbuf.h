/*
 * strbuf: the one growable string of ksci (after git's strbuf.h).
 *
 * A struct strbuf starts as STRBUF_INIT (all zero) and is always either
 * empty (buf NULL, len 0) or holds len bytes followed by a NUL.  Appending
 * never fails loudly: when memory runs out the buffer is marked (oom) and
 * every later append is ignored, so a caller builds a whole text with no
 * checks and asks once, at sb_detach, whether it worked.
 *
 * Ownership: the strbuf owns buf until sb_detach hands it to the caller
 * (who frees it) and leaves the strbuf empty; sb_release frees it.  buf may
 * move on every append: never keep a pointer into it across one.
 */
#ifndef KSCI_STRBUF_H
#define KSCI_STRBUF_H

#include <stddef.h>

struct strbuf {
	char *buf;
	size_t len, alloc;
	int oom; /* an append ran out of memory; the contents are incomplete */
};

#define STRBUF_INIT {0}

void sb_addn(struct strbuf *b, const void *s, size_t n);
void sb_add(struct strbuf *b, const char *s);
void sb_addc(struct strbuf *b, char c);
void sb_printf(struct strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Make room for n more bytes (for read(2) straight into buf + len); 0 or -1 (oom). */
int sb_grow(struct strbuf *b, size_t n);
/* The text (malloc'd, "" when nothing was added; the caller frees), *len set
 * when len is not NULL; NULL when an append ran out of memory.  The strbuf
 * is empty afterwards either way. */
char *sb_detach(struct strbuf *b, size_t *len);
/* Free the text; the strbuf is empty again. */
void sb_release(struct strbuf *b);

#endif
