/* http: libcurl POST; see http.h. */
#include "http.h"

#include <ctype.h>
#include <curl/curl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "strbuf.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static void global_init(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

static size_t on_body(char *data, size_t sz, size_t n, void *ud)
{
	struct strbuf *b = ud;
	size_t k = sz * n;
	sb_addn(b, data, k);
	return b->oom ? 0 : k; /* 0 makes curl stop with CURLE_WRITE_ERROR */
}

static char *header_value(const char *line, size_t n, const char *name)
{
	size_t nl = strlen(name);
	if (n <= nl || strncasecmp(line, name, nl) != 0 || line[nl] != ':')
		return NULL;
	const char *v = line + nl + 1, *e = line + n;
	while (v < e && (*v == ' ' || *v == '\t'))
		v++;
	while (e > v && (e[-1] == '\r' || e[-1] == '\n' || e[-1] == ' '))
		e--;
	return strndup(v, (size_t)(e - v));
}

static size_t on_header(char *data, size_t sz, size_t n, void *ud)
{
	struct http_resp *r = ud;
	size_t k = sz * n;
	char *v;
	if ((v = header_value(data, k, "retry-after"))) {
		free(r->retry_after);
		r->retry_after = v;
	} else if ((v = header_value(data, k, "retry-after-ms"))) {
		free(r->retry_after_ms);
		r->retry_after_ms = v;
	}
	return k;
}

int http_post(const char *url, const char *const *headers, const char *body, double connect_timeout,
	      double timeout, struct http_resp *resp, char *errbuf)
{
	memset(resp, 0, sizeof *resp);
	pthread_once(&once, global_init);
	CURL *h = curl_easy_init();
	if (!h) {
		resp->fail = "transport";
		return errf(errbuf, "curl_easy_init failed");
	}
	struct curl_slist *hl = NULL;
	for (; headers && *headers; headers++)
		hl = curl_slist_append(hl, *headers);
	struct strbuf b = STRBUF_INIT;
	char cerr[CURL_ERROR_SIZE] = "";
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, resp);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)(connect_timeout * 1000));
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(timeout * 1000));
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(h, CURLOPT_USERAGENT, "ksci-kgen/1");
	CURLcode rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp->status);
	curl_slist_free_all(hl);
	curl_easy_cleanup(h);
	int oom = b.oom;
	resp->body = sb_detach(&b, &resp->len);
	if (!resp->body) { /* keep the promise of a NUL-terminated body */
		resp->body = calloc(1, 1);
		oom = 1;
	}
	if (rc == CURLE_OK && !oom)
		return 0;
	switch (rc) {
	case CURLE_OPERATION_TIMEDOUT: resp->fail = "timeout"; break;
	case CURLE_PARTIAL_FILE:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING: resp->fail = "truncated"; break;
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY: resp->fail = "connect"; break;
	default: resp->fail = "transport"; break;
	}
	/* Each part redacted whole, before the message is cut to ERRBUF: a
	 * URL cut first could lose the '@' that marks its userinfo. */
	char ru[1024], rm[CURL_ERROR_SIZE];
	http_redact(url, ru, sizeof ru);
	http_redact(oom ? "out of memory" : *cerr ? cerr : curl_easy_strerror(rc), rm, sizeof rm);
	return errf(errbuf, "%s: %s", ru, rm);
}

void http_resp_free(struct http_resp *r)
{
	free(r->body);
	free(r->retry_after);
	free(r->retry_after_ms);
	memset(r, 0, sizeof *r);
}

/* ---- redaction ----
 * One left-to-right pass.  A bounded writer drops what does not fit, and a
 * secret is skipped in the input, never copied, so every prefix of the
 * output is safe to show.  The pass stops when out is full, and each look
 * ahead is bounded, so a megabyte error page costs little. */

struct rw {
	char *p;
	size_t n, len;
};

static void put(struct rw *w, const char *s, size_t k)
{
	for (; k > 0 && w->len + 1 < w->n; k--)
		w->p[w->len++] = *s++;
}

static int full(const struct rw *w) { return w->len + 1 >= w->n; }
static int tok_char(int c) { return isalnum((unsigned char)c) || c == '-' || c == '_'; }
static int scheme_char(int c) { return isalnum((unsigned char)c) || c == '+' || c == '-' || c == '.'; }
/* Where a URL ends inside text: blanks, controls, quotes, angle brackets. */
static int url_end(int c)
{
	return (unsigned char)c <= ' ' || c == 0x7f || c == '"' || c == '\'' || c == '<' || c == '>' || c == '`' ||
	       c == '\\';
}

static const char *find_any(const char *s, const char *e, const char *set)
{
	while (s < e && !strchr(set, *s))
		s++;
	return s;
}

static const char *find_last(const char *s, const char *e, char c)
{
	const char *r = NULL;
	for (; s < e; s++)
		if (*s == c)
			r = s;
	return r;
}

/* One step of plain text at s (< e): an API-key-like run, masked, or one
 * byte.  base is the start of the whole input: a key starts a run, so
 * "task-force" holds none.  Returns where the next step starts. */
static const char *plain_step(struct rw *w, const char *base, const char *s, const char *e)
{
	if (e - s > 3 && memcmp(s, "sk-", 3) == 0 && (s == base || !tok_char(s[-1]))) {
		const char *r = s;
		while (r < e && tok_char(*r))
			r++;
		if (r - s > 8) {
			put(w, s, 4);
			put(w, "***", 3);
			return r;
		}
	}
	put(w, s, 1);
	return s + 1;
}

static void put_plain(struct rw *w, const char *base, const char *s, const char *e)
{
	while (s < e && !full(w))
		s = plain_step(w, base, s, e);
}

static int secret_param(const char *s, const char *e)
{
	static const char *const names[] = {"key",    "api_key",   "apikey",   "token",  "access_token", "refresh_token",
					    "sig",    "signature", "password", "secret", "client_secret", NULL};
	for (int i = 0; names[i]; i++)
		if (strlen(names[i]) == (size_t)(e - s) && strncasecmp(s, names[i], (size_t)(e - s)) == 0)
			return 1;
	return 0;
}

/* Whether the authority [a, e) has a ':' whose "port" is not digits:
 * user:pass cut short by a '/' in the password.  An IPv6 literal's colons
 * do not count. */
static int odd_port(const char *a, const char *e)
{
	const char *b = find_last(a, e, ']');
	const char *c = find_last(b ? b : a, e, ':');
	if (!c)
		return 0;
	for (c++; c < e; c++)
		if (!isdigit((unsigned char)*c))
			return 1;
	return 0;
}

/* One URL: [s, auth) is "scheme://" (empty without a scheme), [auth, e) the rest. */
static void put_url(struct rw *w, const char *base, const char *s, const char *auth, const char *e)
{
	put(w, s, (size_t)(auth - s));
	const char *q = find_any(auth, e, "?#");
	const char *aend = find_any(auth, q, "/");
	const char *at = find_last(auth, aend, '@');
	if (!at && odd_port(auth, aend))
		at = find_last(auth, q, '@');
	if (at) {
		put(w, "***@", 4);
		auth = at + 1;
	}
	put_plain(w, base, auth, q);
	for (const char *p = q; p < e && !full(w);) {
		put(w, p++, 1); /* '?', '#', '&' or ';' */
		const char *name = p;
		p = find_any(p, e, "=&;#");
		put_plain(w, base, name, p);
		if (p < e && *p == '=') {
			const char *ve = find_any(p + 1, e, "&;#");
			put(w, "=", 1);
			if (secret_param(name, p))
				put(w, "***", 3);
			else
				put_plain(w, base, p + 1, ve);
			p = ve;
		}
	}
}

/* Bounds on looking ahead for a URL's start: a scheme name, and a
 * schemeless "user:pass@" (long enough for a JWT as the password). */
#define SCHEME_MAX 32
#define USERINFO_MAX 4096

/* Whether a URL starts at s: "scheme://", or, with no scheme, as curl would
 * take it, "user:pass@host" (a word with a ':' before an '@' and no '/'
 * before either).  *auth is set to where the part after "scheme://" starts. */
static int url_at(const char *base, const char *s, const char **auth)
{
	if (s > base && (scheme_char(s[-1]) || s[-1] == '@' || s[-1] == ':' || s[-1] == '/'))
		return 0;
	const char *j = s;
	if (isalpha((unsigned char)*s)) {
		while (scheme_char(*j) && j - s < SCHEME_MAX)
			j++;
		if (strncmp(j, "://", 3) == 0) {
			*auth = j + 3;
			return 1;
		}
	}
	const char *colon = NULL;
	for (j = s; *j && !url_end(*j) && !strchr("/?#", *j) && j - s < USERINFO_MAX; j++) {
		if (*j == ':' && !colon)
			colon = j;
		if (*j == '@' && colon && colon > s) {
			*auth = s;
			return 1;
		}
	}
	return 0;
}

void http_redact(const char *in, char *out, size_t n)
{
	if (!out || n == 0)
		return;
	struct rw w = {out, n, 0};
	const char *base = in ? in : "", *end = base + strlen(base), *s = base, *auth;
	while (s < end && !full(&w)) {
		if (url_at(base, s, &auth)) {
			const char *e = auth;
			while (e < end && !url_end(*e))
				e++;
			put_url(&w, base, s, auth, e);
			s = e;
		} else {
			s = plain_step(&w, base, s, end);
		}
	}
	out[w.len] = '\0';
}
