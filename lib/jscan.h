/*
 * jscan: pull the few fields a reader needs out of one record line
 * without building a JSON tree.
 *
 * Archives are large and mostly "source" strings and logs; a full parse of
 * every line is what makes a 100,000-record scan slow.  These functions walk
 * the JSON text, check its structure (brackets, commas, colons, literals,
 * number characters; a string is skipped with memchr and its escapes are
 * not checked) and return spans: pointers into the caller's line, valid
 * while the line is.  Records chosen as parents are parsed fully later, so a
 * bad escape inside a string is still caught before anything is emitted.
 * Nothing here allocates.
 */
#ifndef KSCI_JSCAN_H
#define KSCI_JSCAN_H

#include <stddef.h>

#include "err.h"

/* The text of one JSON value (n == 0: absent). */
struct js_span {
	const char *p;
	size_t n;
};

/* Walk the object in line[0..n) and set spans[i] to the value of keys[i]
 * (top level only; the last occurrence wins).  0, or -1 when the line is not
 * one JSON object: errbuf then says why, "... (column N)". */
int js_fields(const char *line, size_t n, const char *const *keys, int nkeys, struct js_span *spans, char *errbuf);
/* The value at a dotted path ("time.speedup_vs_baseline") inside an object
 * span; 0, or -1 when absent. */
int js_path(struct js_span obj, const char *path, struct js_span *out);
/* Element i of an array span; 0 or -1. */
int js_index(struct js_span arr, size_t i, struct js_span *out);
/* A number value; 0 or -1 (not a number). */
int js_number(struct js_span v, double *out);
/* A string value decoded into buf (\uXXXX as UTF-8); -1 when not a string
 * or longer than cap - 1 bytes. */
int js_string(struct js_span v, char *buf, size_t cap);
/* Decoded length in bytes of a string value; -1 when not a string. */
long js_strlen(struct js_span v);
/* Whether jansson is sure to accept a line that js_fields found to be one
 * well-formed object: js_fields checks the structure but neither escapes,
 * UTF-8 nor the number grammar, which jansson does.  1 when every string
 * and number is one jansson reads without error (an integer that fits
 * int64, a real that cannot overflow; the bounds are conservative), 0 when
 * the line should be left to the parse to judge. */
int js_strict(const char *line, size_t n);

#endif
