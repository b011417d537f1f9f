/*
 * extract: answer text -> source; see extract.h.
 *
 * Models wrap code in prose, split it over several blocks, forget the
 * closing fence when they run out of tokens, or answer with edits.  The
 * rules here are the few that keep working across providers: edits win when
 * markers are present (and each SEARCH must match exactly once, exactly or
 * line-by-line ignoring surrounding whitespace, or the whole answer fails
 * as bad_edit: a half-applied edit is a different kernel than the one the
 * model meant); otherwise the longest fenced block that mentions "solve".
 */
#include "extract.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

struct span {
	const char *p;
	size_t n;
};

static int starts_fence(const char *l, const char *e)
{
	int sp = 0;
	while (l < e && *l == ' ' && sp < 4)
		l++, sp++;
	return e - l >= 3 && strncmp(l, "```", 3) == 0;
}

static const char *line_end(const char *p)
{
	const char *e = strchr(p, '\n');
	return e ? e : p + strlen(p);
}

static int mem_has(const char *p, size_t n, const char *needle)
{
	size_t k = strlen(needle);
	for (size_t i = 0; i + k <= n; i++)
		if (memcmp(p + i, needle, k) == 0)
			return 1;
	return 0;
}

static char *span_dup(struct span s)
{
	char *d = malloc(s.n + 2);
	if (!d)
		return NULL;
	memcpy(d, s.p, s.n);
	/* A source file ends with a newline. */
	if (s.n == 0 || s.p[s.n - 1] != '\n')
		d[s.n++] = '\n';
	d[s.n] = '\0';
	return d;
}

/* ---- SEARCH/REPLACE ---- */

static int is_marker(const char *l, const char *e, const char *m)
{
	size_t k = strlen(m);
	if ((size_t)(e - l) < k || strncmp(l, m, k) != 0)
		return 0;
	for (l += k; l < e; l++)
		if (!isspace((unsigned char)*l))
			return 0;
	return 1;
}

static const char *trim_l(const char *s, const char *e)
{
	while (s < e && isspace((unsigned char)*s))
		s++;
	return s;
}

static const char *trim_r(const char *s, const char *e)
{
	while (e > s && isspace((unsigned char)e[-1]))
		e--;
	return e;
}

/* Find needle lines in hay comparing each line trimmed.  Sets the matched
 * byte span; returns the number of matches (stops counting at 2). */
static int find_lines(const char *hay, struct span needle, struct span *at)
{
	int count = 0;
	/* needle's lines, trimmed, blank ones at the ends dropped */
	const char *ns = needle.p, *ne = needle.p + needle.n;
	for (const char *h = hay; *h; h = *line_end(h) ? line_end(h) + 1 : line_end(h)) {
		const char *hp = h, *np = ns;
		int ok = 1;
		while (np < ne) {
			const char *nle = memchr(np, '\n', (size_t)(ne - np));
			if (!nle)
				nle = ne;
			if (!*hp) {
				ok = 0;
				break;
			}
			const char *hle = line_end(hp);
			const char *a = trim_l(np, nle), *ae = trim_r(np, nle), *b = trim_l(hp, hle), *be = trim_r(hp, hle);
			if (ae - a != be - b || memcmp(a, b, (size_t)(ae - a)) != 0) {
				ok = 0;
				break;
			}
			np = nle < ne ? nle + 1 : ne;
			hp = *hle ? hle + 1 : hle;
		}
		if (ok) {
			if (++count == 1) {
				at->p = h;
				at->n = (size_t)(hp - h);
			}
			if (count > 1)
				return count;
		}
		if (!*line_end(h))
			break;
	}
	return count;
}

static int replace_once(char **src, struct span search, struct span repl, int k, char *errbuf)
{
	struct span at = {0};
	int count = 0;
	/* exact first */
	size_t hl = strlen(*src);
	const char *q = memmem(*src, hl, search.p, search.n);
	if (q) {
		at = (struct span){q, search.n};
		count = memmem(q + 1, hl - (size_t)(q + 1 - *src), search.p, search.n) ? 2 : 1;
	}
	if (count == 0)
		count = find_lines(*src, search, &at);
	if (count == 0)
		return errf(errbuf, "edit %d: SEARCH text not found in the base source", k);
	if (count > 1)
		return errf(errbuf, "edit %d: SEARCH text matches more than once", k);
	size_t pre = (size_t)(at.p - *src), post = strlen(at.p + at.n);
	char *n = malloc(pre + repl.n + post + 1);
	if (!n)
		return errf(errbuf, "out of memory");
	memcpy(n, *src, pre);
	memcpy(n + pre, repl.p, repl.n);
	memcpy(n + pre + repl.n, at.p + at.n, post + 1);
	free(*src);
	*src = n;
	return 0;
}

int ext_apply_edits(const char *text, const char *base, char **out, char *errbuf)
{
	*out = NULL;
	if (!strstr(text, "<<<<<<< SEARCH"))
		return 0;
	if (!base)
		return errf(errbuf, "SEARCH/REPLACE edits but no base source to apply them to");
	char *src = strdup(base);
	int k = 0;
	const char *p = text;
	while (src && *p) {
		const char *e = line_end(p);
		if (!is_marker(p, e, "<<<<<<< SEARCH")) {
			p = *e ? e + 1 : e;
			continue;
		}
		k++;
		const char *s0 = *e ? e + 1 : e, *s1 = NULL, *r0 = NULL, *r1 = NULL;
		for (const char *q = s0; *q;) {
			const char *qe = line_end(q);
			if (!s1 && is_marker(q, qe, "=======")) {
				s1 = q;
				r0 = *qe ? qe + 1 : qe;
			} else if (s1 && is_marker(q, qe, ">>>>>>> REPLACE")) {
				r1 = q;
				p = *qe ? qe + 1 : qe;
				break;
			}
			q = *qe ? qe + 1 : qe;
		}
		if (!s1 || !r1) {
			free(src);
			return errf(errbuf, "edit %d: unterminated SEARCH/REPLACE block", k);
		}
		struct span search = {s0, (size_t)(s1 - s0)}, repl = {r0, (size_t)(r1 - r0)};
		if (trim_l(search.p, search.p + search.n) == search.p + search.n) {
			free(src);
			return errf(errbuf, "edit %d: empty SEARCH text", k);
		}
		if (replace_once(&src, search, repl, k, errbuf) != 0) {
			free(src);
			return -1;
		}
	}
	if (!src)
		return errf(errbuf, "out of memory");
	if (k == 0) { /* the words, but on no marker line: no edits (the copy was leaked) */
		free(src);
		return 0;
	}
	*out = src;
	return k;
}

/* ---- whole files ---- */

static int code_line(const char *l, const char *e)
{
	l = trim_l(l, e);
	static const char *const starts[] = {"#include", "#define", "#pragma", "#if", "__global__", "template", "static",
					     "void ", "extern", "typedef", "struct", "//", "/*", "inline", "__device__",
					     "namespace", "using ", NULL};
	for (int i = 0; starts[i]; i++)
		if ((size_t)(e - l) >= strlen(starts[i]) && strncmp(l, starts[i], strlen(starts[i])) == 0)
			return 1;
	return 0;
}

int ext_code(const char *reply, const char *base, char **out, const char **how, const char **reason, char *errbuf)
{
	*out = NULL;
	*how = NULL;
	*reason = NULL;
	if (!reply || !*reply) {
		*reason = "no_code";
		return errf(errbuf, "empty answer");
	}
	int k = ext_apply_edits(reply, base, out, errbuf);
	if (k < 0) {
		*reason = "bad_edit";
		return -1;
	}
	if (k > 0) {
		*how = "edits";
		return 0;
	}
	/* fenced blocks */
	struct span best = {0};
	int best_unclosed = 0, nblocks = 0;
	for (const char *p = reply; *p;) {
		const char *e = line_end(p);
		if (!starts_fence(p, e)) {
			p = *e ? e + 1 : e;
			continue;
		}
		const char *b0 = *e ? e + 1 : e, *q = b0, *b1 = NULL;
		while (*q) {
			const char *qe = line_end(q);
			if (starts_fence(q, qe)) {
				b1 = q;
				p = *qe ? qe + 1 : qe;
				break;
			}
			q = *qe ? qe + 1 : qe;
		}
		int unclosed = !b1;
		if (unclosed) {
			b1 = q;
			p = q;
		}
		nblocks++;
		struct span s = {b0, (size_t)(b1 - b0)};
		if (mem_has(s.p, s.n, "solve") && s.n > best.n) {
			best = s;
			best_unclosed = unclosed;
		}
	}
	if (best.p) {
		*out = span_dup(best);
		*how = best_unclosed ? "unclosed_fence" : "fenced";
		return *out ? 0 : errf(errbuf, "out of memory");
	}
	if (nblocks) {
		*reason = "no_code";
		return errf(errbuf, "%d fenced block%s, none defines solve", nblocks, nblocks == 1 ? "" : "s");
	}
	/* no fence: from the first line that looks like C to the last closing brace */
	if (strstr(reply, "solve")) {
		const char *start = NULL;
		for (const char *p = reply; *p;) {
			const char *e = line_end(p);
			if (code_line(p, e)) {
				start = p;
				break;
			}
			p = *e ? e + 1 : e;
		}
		const char *last = start ? strrchr(start, '}') : NULL;
		if (start && last && mem_has(start, (size_t)(last - start), "solve")) {
			*out = span_dup((struct span){start, (size_t)(last + 1 - start)});
			*how = "unfenced";
			return *out ? 0 : errf(errbuf, "out of memory");
		}
	}
	*reason = "no_code";
	return errf(errbuf, "the answer holds no code that defines solve");
}
