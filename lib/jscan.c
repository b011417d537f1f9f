/*
 * jscan: a structural JSON walker over spans; see jscan.h.
 *
 * Strings are skipped by memchr for the closing quote and a count of the
 * backslashes before it, which is what keeps a scan of 800 MB of records
 * near memory speed: almost all of a record is its source and logs.
 */
#include "jscan.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

/* Why and where a walk stopped. */
struct sk {
	const char *why, *at;
};
#define SK(e, pos, msg) ((e)->why = (msg), (e)->at = (pos))

static const char *ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/* p just after the opening quote; returns just after the closing one. */
static const char *skip_str(const char *p, const char *end)
{
	for (;;) {
		const char *q = memchr(p, '"', (size_t)(end - p));
		if (!q)
			return NULL;
		const char *b = q;
		while (b > p && b[-1] == '\\')
			b--;
		if (((q - b) & 1) == 0)
			return q + 1;
		p = q + 1;
	}
}

static const char *skip_value(const char *p, const char *end, int depth, struct sk *why);

static const char *skip_container(const char *p, const char *end, int depth, struct sk *why)
{
	char close = *p == '{' ? '}' : ']';
	int obj = *p == '{';
	if (depth > MAX_DEPTH) {
		SK(why, p, "nested too deeply");
		return NULL;
	}
	p = ws(p + 1, end);
	if (p < end && *p == close)
		return p + 1;
	for (;;) {
		if (obj) {
			if (p >= end || *p != '"') {
				SK(why, p, "expected a key");
				return NULL;
			}
			const char *k = p;
			if (!(p = skip_str(p + 1, end))) {
				SK(why, k, "unterminated string");
				return NULL;
			}
			p = ws(p, end);
			if (p >= end || *p != ':') {
				SK(why, p, "expected ':'");
				return NULL;
			}
			p++;
		}
		if (!(p = skip_value(p, end, depth + 1, why)))
			return NULL;
		p = ws(p, end);
		if (p < end && *p == ',') {
			p = ws(p + 1, end);
			continue;
		}
		if (p < end && *p == close)
			return p + 1;
		SK(why, p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
		return NULL;
	}
}

static const char *skip_value(const char *p, const char *end, int depth, struct sk *why)
{
	p = ws(p, end);
	if (p >= end) {
		SK(why, p, "unexpected end of line");
		return NULL;
	}
	switch (*p) {
	case '"': {
		const char *q = skip_str(p + 1, end);
		if (!q)
			SK(why, p, "unterminated string");
		return q;
	}
	case '{':
	case '[':
		return skip_container(p, end, depth, why);
	case 't':
		if (end - p >= 4 && memcmp(p, "true", 4) == 0)
			return p + 4;
		break;
	case 'f':
		if (end - p >= 5 && memcmp(p, "false", 5) == 0)
			return p + 5;
		break;
	case 'n':
		if (end - p >= 4 && memcmp(p, "null", 4) == 0)
			return p + 4;
		break;
	default: {
		const char *s = p;
		int digits = 0;
		while (p < end && (strchr("+-.eE", *p) || (*p >= '0' && *p <= '9'))) {
			digits += *p >= '0' && *p <= '9';
			p++;
		}
		if (digits && (*s == '-' || (*s >= '0' && *s <= '9')))
			return p;
		p = s;
	}
	}
	SK(why, p, "invalid value");
	return NULL;
}

int js_fields(const char *line, size_t n, const char *const *keys, int nkeys, struct js_span *spans, char *errbuf)
{
	const char *p = line, *end = line + n;
	struct sk e = {"expected '{'", line};
	for (int i = 0; i < nkeys; i++)
		spans[i].p = NULL, spans[i].n = 0;
	p = ws(p, end);
	if (p >= end || *p != '{') {
		SK(&e, p, "expected '{'");
		goto bad;
	}
	p = ws(p + 1, end);
	if (p < end && *p == '}') {
		p++;
		goto tail;
	}
	for (;;) {
		if (p >= end || *p != '"') {
			SK(&e, p, "expected a key");
			goto bad;
		}
		const char *k = p + 1;
		if (!(p = skip_str(k, end))) {
			SK(&e, k - 1, "unterminated string");
			goto bad;
		}
		size_t kn = (size_t)(p - 1 - k);
		p = ws(p, end);
		if (p >= end || *p != ':') {
			SK(&e, p, "expected ':'");
			goto bad;
		}
		const char *v = ws(p + 1, end);
		if (!(p = skip_value(v, end, 1, &e)))
			goto bad;
		for (int i = 0; i < nkeys; i++)
			if (strlen(keys[i]) == kn && memcmp(keys[i], k, kn) == 0) {
				spans[i].p = v;
				spans[i].n = (size_t)(p - v);
			}
		p = ws(p, end);
		if (p < end && *p == ',') {
			p = ws(p + 1, end);
			continue;
		}
		if (p < end && *p == '}') {
			p++;
			break;
		}
		SK(&e, p, "expected ',' or '}'");
		goto bad;
	}
tail:
	p = ws(p, end);
	if (p == end)
		return 0;
	SK(&e, p, "text after the object");
bad:
	return errf(errbuf, "not JSON: %s (column %ld)", e.why, (long)(e.at - line + 1));
}

int js_path(struct js_span obj, const char *path, struct js_span *out)
{
	struct js_span cur = obj;
	while (*path) {
		size_t kn = strcspn(path, ".");
		const char *p = cur.p, *end = cur.p + cur.n;
		struct sk why;
		if (!p || (p = ws(p, end)) >= end || *p != '{')
			return -1;
		p = ws(p + 1, end);
		int found = 0;
		while (p < end && *p == '"') {
			const char *k = p + 1;
			if (!(p = skip_str(k, end)))
				return -1;
			int match = (size_t)(p - 1 - k) == kn && memcmp(k, path, kn) == 0;
			p = ws(p, end);
			if (p >= end || *p != ':')
				return -1;
			const char *v = ws(p + 1, end);
			if (!(p = skip_value(v, end, 1, &why)))
				return -1;
			if (match) {
				cur.p = v;
				cur.n = (size_t)(p - v);
				found = 1;
			}
			p = ws(p, end);
			if (p < end && *p == ',')
				p = ws(p + 1, end);
			else
				break;
		}
		if (!found)
			return -1;
		path += kn + (path[kn] == '.');
	}
	*out = cur;
	return 0;
}

int js_index(struct js_span arr, size_t i, struct js_span *out)
{
	const char *p = arr.p, *end = arr.p + arr.n;
	struct sk why;
	if (!p || (p = ws(p, end)) >= end || *p != '[')
		return -1;
	p = ws(p + 1, end);
	for (size_t j = 0; p < end && *p != ']'; j++) {
		const char *v = p;
		if (!(p = skip_value(v, end, 1, &why)))
			return -1;
		if (j == i) {
			out->p = v;
			out->n = (size_t)(p - v);
			return 0;
		}
		p = ws(p, end);
		if (p < end && *p == ',')
			p = ws(p + 1, end);
		else
			break;
	}
	return -1;
}

int js_number(struct js_span v, double *out)
{
	char buf[64];
	if (!v.p || v.n == 0 || v.n >= sizeof buf || !(v.p[0] == '-' || (v.p[0] >= '0' && v.p[0] <= '9')))
		return -1;
	memcpy(buf, v.p, v.n);
	buf[v.n] = '\0';
	char *e;
	*out = strtod(buf, &e);
	return *e ? -1 : 0;
}

static int hex4(const char *p, unsigned *u)
{
	*u = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
		             : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
		             : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16u;
		if (d > 15)
			return -1;
		*u = *u * 16 + d;
	}
	return 0;
}

/* ---- js_strict: what jansson would say of strings and numbers ---- */

/* Length of the UTF-8 sequence at s that jansson accepts (no overlong form,
 * no surrogate, at most U+10FFFF), or 0. */
static int utf8_len(const unsigned char *s, const unsigned char *end)
{
	unsigned v, min;
	int n;
	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 0;
	if (s[0] < 0xe0)
		n = 2, v = s[0] & 0x1fu, min = 0x80;
	else if (s[0] < 0xf0)
		n = 3, v = s[0] & 0x0fu, min = 0x800;
	else
		n = 4, v = s[0] & 0x07u, min = 0x10000;
	if (end - s < n)
		return 0;
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (s[i] & 0x3fu);
	}
	return v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff) ? 0 : n;
}

/* \uXXXX at p (p[0] == '\\'): the code unit, or -1. */
static long u_escape(const char *p, const char *end)
{
	unsigned u;
	return end - p < 6 || p[0] != '\\' || p[1] != 'u' || hex4(p + 2, &u) != 0 ? -1 : (long)u;
}

/* p just after an opening quote: just after the closing one when every
 * escape, byte and \u pair in between is one jansson accepts, else NULL. */
static const char *plain_string(const char *p, const char *end)
{
	while (p < end) {
		unsigned char c = (unsigned char)*p;
		if (c == '"')
			return p + 1;
		if (c < 0x20)
			return NULL;
		if (c >= 0x80) {
			int k = utf8_len((const unsigned char *)p, (const unsigned char *)end);
			if (!k)
				return NULL;
			p += k;
		} else if (c != '\\') {
			p++;
		} else if (end - p >= 2 && p[1] && strchr("\"\\/bfnrt", p[1])) {
			p += 2;
		} else {
			long u = u_escape(p, end), lo;
			if (u < 0 || (u >= 0xdc00 && u <= 0xdfff))
				return NULL;
			p += 6;
			if (u >= 0xd800 && u <= 0xdbff) {
				if ((lo = u_escape(p, end)) < 0xdc00 || lo > 0xdfff)
					return NULL;
				p += 6;
			}
		}
	}
	return NULL;
}

static const char *digits(const char *p, const char *end)
{
	while (p < end && *p >= '0' && *p <= '9')
		p++;
	return p;
}

/* A number at p that jansson reads without error (JSON's grammar; an
 * integer that fits int64, a real that cannot overflow): just after it, else
 * NULL.  The bounds are conservative: a number past them is only parsed. */
static const char *plain_number(const char *p, const char *end)
{
	int real = 0;
	if (*p == '-')
		p++;
	const char *d = p;
	p = p < end && *p == '0' ? p + 1 : digits(p, end);
	size_t ndig = (size_t)(p - d);
	if (ndig == 0)
		return NULL;
	if (p < end && *p == '.') {
		const char *f = p + 1;
		if ((p = digits(f, end)) == f)
			return NULL;
		real = 1;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		const char *x = p + 1 < end && (p[1] == '+' || p[1] == '-') ? p + 2 : p + 1;
		if ((p = digits(x, end)) == x || p - x > 2)
			return NULL;
		real = 1;
	}
	if (p < end && *p && strchr("+-.eE0123456789", *p))
		return NULL;
	return ndig > (real ? 200u : 18u) ? NULL : p;
}

int js_strict(const char *p, size_t n)
{
	const char *end = p + n;
	while (p && p < end) {
		if (*p == '"')
			p = plain_string(p + 1, end);
		else if (*p == '-' || (*p >= '0' && *p <= '9'))
			p = plain_number(p, end);
		else
			p++;
	}
	return p != NULL;
}

/* Decode into buf (NULL: only count).  Decoded length or -1. */
static long decode(struct js_span v, char *buf, size_t cap)
{
	if (!v.p || v.n < 2 || v.p[0] != '"' || v.p[v.n - 1] != '"')
		return -1;
	const char *p = v.p + 1, *end = v.p + v.n - 1;
	size_t n = 0;
	while (p < end) {
		unsigned char tmp[4];
		size_t k = 1;
		if (*p != '\\') {
			tmp[0] = (unsigned char)*p++;
		} else {
			if (end - p < 2)
				return -1;
			char c = p[1];
			p += 2;
			const char *map = strchr("\"\"\\\\//b\bf\fn\nr\rt\t", c);
			if (c == 'u') {
				unsigned u;
				if (end - p < 4 || hex4(p, &u) != 0)
					return -1;
				p += 4;
				if (u >= 0xd800 && u < 0xdc00 && end - p >= 6 && p[0] == '\\' && p[1] == 'u') {
					unsigned lo;
					if (hex4(p + 2, &lo) == 0 && lo >= 0xdc00 && lo < 0xe000) {
						u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
						p += 6;
					}
				}
				if (u < 0x80)
					tmp[0] = (unsigned char)u;
				else if (u < 0x800)
					tmp[0] = (unsigned char)(0xc0 | u >> 6), tmp[1] = (unsigned char)(0x80 | (u & 63)), k = 2;
				else if (u < 0x10000)
					tmp[0] = (unsigned char)(0xe0 | u >> 12), tmp[1] = (unsigned char)(0x80 | ((u >> 6) & 63)),
					tmp[2] = (unsigned char)(0x80 | (u & 63)), k = 3;
				else
					tmp[0] = (unsigned char)(0xf0 | u >> 18), tmp[1] = (unsigned char)(0x80 | ((u >> 12) & 63)),
					tmp[2] = (unsigned char)(0x80 | ((u >> 6) & 63)), tmp[3] = (unsigned char)(0x80 | (u & 63)), k = 4;
			} else if (map && ((map - "\"\"\\\\//b\bf\fn\nr\rt\t") % 2) == 0) {
				tmp[0] = (unsigned char)map[1];
			} else {
				return -1;
			}
		}
		if (buf) {
			if (n + k >= cap)
				return -1;
			memcpy(buf + n, tmp, k);
		}
		n += k;
	}
	if (buf)
		buf[n] = '\0';
	return (long)n;
}

int js_string(struct js_span v, char *buf, size_t cap)
{
	return cap && decode(v, buf, cap) >= 0 ? 0 : -1;
}

long js_strlen(struct js_span v) { return decode(v, NULL, 0); }
