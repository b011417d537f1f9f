/*
 * http: one HTTPS/HTTP POST of a JSON body through libcurl, with connect and
 * total timeouts; no retries here (lib/llm.c owns the policy).
 *
 * The response owns its body and header copies; http_resp_free releases
 * them.  Transport failures are classified so callers can choose a retry
 * and a record status: "timeout", "truncated" (the connection ended before
 * the announced body), "connect", "transport".
 */
#ifndef KSCI_HTTP_H
#define KSCI_HTTP_H

#include <stddef.h>

#include "err.h"

struct http_resp {
	long status;          /* HTTP status, 0 when none arrived */
	char *body;           /* NUL-terminated */
	size_t len;
	char *retry_after;    /* Retry-After header value, or NULL */
	char *retry_after_ms; /* retry-after-ms (OpenAI), or NULL */
	const char *fail;     /* NULL, or the transport failure word */
};

/* headers: NULL-terminated "Name: value" strings.  0 when a whole response
 * arrived (any status); -1 with resp->fail and errbuf otherwise. */
int http_post(const char *url, const char *const *headers, const char *body, double connect_timeout,
	      double timeout, struct http_resp *resp, char *errbuf);
void http_resp_free(struct http_resp *r);

#endif
