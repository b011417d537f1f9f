/*
 * ndjson: reading and writing newline-delimited JSON records.
 *
 * A reader reads plain or gzip input (the first two bytes decide;
 * concatenated gzip members, as made by appending generations, read as one
 * stream, lib/gzm.h) and hands out one parsed line at a time with its line
 * number, so tools can say "line 12: not JSON".  A torn or truncated gzip
 * archive stops the reader with the message of docs/exit-codes.md ("FILE:
 * damaged at byte N (...); repair with: karchive repair FILE") and
 * nd_damaged() says so.  Records returned by nd_next and nd_parse are new
 * references the caller owns (json_decref).  nd_write never steals the
 * record.
 */
#ifndef KSCI_NDJSON_H
#define KSCI_NDJSON_H

#include <jansson.h>
#include <stdio.h>

#include "err.h"

struct nd_reader;

/* path "-" or NULL means stdin.  NULL on failure, message in errbuf. */
struct nd_reader *nd_open(const char *path, char *errbuf);
/* The same from byte offset of path: the start of one gzip member of a file
 * of appended members (a transcript entry, lib/llm.h), or of a plain line. */
struct nd_reader *nd_open_at(const char *path, long long offset, char *errbuf);
/* 1: *rec is a JSON object; 0: end of input; -1: this line is not a JSON
 * object (errbuf says why; the caller reports it, the next call goes on);
 * -2: read error or a damaged archive (errbuf; nd_damaged tells which),
 * stop. Blank lines are skipped silently. */
int nd_next(struct nd_reader *r, json_t **rec, char *errbuf);
/* 1 when the last -2 of nd_next was a damaged archive (exit code 4). */
int nd_damaged(const struct nd_reader *r);
/* One line (n bytes, no newline) as one JSON object, the rule every reader
 * and karchive append share: no NUL byte, valid UTF-8, one JSON object and
 * nothing after it.  An integer beyond 64 bits is read as a real (JSON has
 * no such limit; jansson's integers do).  NULL + why ("not JSON: ... (column
 * N)", "not a JSON object", "contains a NUL byte"; invalid UTF-8 is "not
 * JSON: unable to decode byte ...") when the line is bad. */
json_t *nd_parse(const char *s, size_t n, char *why);
/* The damage message of docs/exit-codes.md, without the program's name. */
int nd_damage_msg(char *errbuf, const char *name, unsigned long long at, const char *reason);
/* Raw text of the last line returned by nd_next (valid until the next call). */
const char *nd_text(const struct nd_reader *r, size_t *len);
long nd_line(const struct nd_reader *r);
/* The descriptor the next nd_next would block on: -1 when a whole line is
 * already read (or the input ended, or it is gzip, see gzm_buffered), so
 * nd_next returns without waiting.  Lets a caller with other work (lib/tool.c's
 * workers) poll the input and that work together. */
int nd_wait_fd(const struct nd_reader *r);
/* The name used in messages: the path, or "<stdin>". */
const char *nd_name(const struct nd_reader *r);
void nd_close(struct nd_reader *r);

/* One compact line + '\n', flushed so pipelines stream. -1 on write error. */
int nd_write(FILE *out, const json_t *rec);

#endif
