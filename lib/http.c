/* http: libcurl POST; see http.h. */
#include "http.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static void global_init(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

struct buf {
	char *p;
	size_t len, cap;
	int oom;
};

static size_t on_body(char *data, size_t sz, size_t n, void *ud)
{
	struct buf *b = ud;
	size_t k = sz * n;
	if (b->len + k + 1 > b->cap) {
		size_t nc = b->cap ? b->cap : 8192;
		while (nc < b->len + k + 1)
			nc *= 2;
		char *np = realloc(b->p, nc);
		if (!np) {
			b->oom = 1;
			return 0;
		}
		b->p = np;
		b->cap = nc;
	}
	memcpy(b->p + b->len, data, k);
	b->len += k;
	b->p[b->len] = '\0';
	return k;
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
	struct buf b = {0};
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
	resp->body = b.p ? b.p : strdup("");
	resp->len = b.len;
	if (rc == CURLE_OK && !b.oom)
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
	return errf(errbuf, "%s: %s", url, b.oom ? "out of memory" : *cerr ? cerr : curl_easy_strerror(rc));
}

void http_resp_free(struct http_resp *r)
{
	free(r->body);
	free(r->retry_after);
	free(r->retry_after_ms);
	memset(r, 0, sizeof *r);
}
