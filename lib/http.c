/* http: libcurl POST; see http.h. */
#include "http.h"

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
	return errf(errbuf, "%s: %s", url, oom ? "out of memory" : *cerr ? cerr : curl_easy_strerror(rc));
}

void http_resp_free(struct http_resp *r)
{
	free(r->body);
	free(r->retry_after);
	free(r->retry_after_ms);
	memset(r, 0, sizeof *r);
}
