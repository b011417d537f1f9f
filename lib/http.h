/*
 * http: one HTTPS/HTTP POST of a JSON body through libcurl, with connect and
 * total timeouts; no retries here (lib/llm.c owns the policy).
 *
 * The response owns its body and header copies; http_resp_free releases
 * them.  Transport failures are classified so callers can choose a retry
 * and a record status: "timeout", "truncated" (the connection ended before
 * the announced body), "connect", "transport".
 *
 * Every message that may carry a URL or text a server sent passes through
 * http_redact first, so a credential in a base URL or echoed by a provider
 * never reaches stderr, a record or a transcript.
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

/* in (a URL, or any text holding URLs) with its credentials hidden, into out
 * (n bytes, always NUL-terminated when n > 0):
 *   - a URL's userinfo, "user:pass" in https://user:pass@host/, becomes
 *     "***" (also in user:pass@host/ with no scheme, as curl reads it);
 *   - the value of a query or fragment parameter named key, api_key, apikey,
 *     token, access_token, refresh_token, sig, signature, password, secret or
 *     client_secret (any case):  ?api_key=abc&x=1 -> ?api_key=***&x=1;
 *   - anywhere, an API key: a run of [A-Za-z0-9_-] starting "sk-" (OpenAI
 *     sk-..., sk-proj-..., Anthropic sk-ant-...) longer than 8 characters
 *     keeps its first 4 and the rest becomes "***".
 * Nothing else changes (a path holding '@', a parameter named "monkey").
 * Secret bytes are never written, so text cut to fit out ends early but
 * never shows part of a secret; the result is redacted again unchanged. */
void http_redact(const char *in, char *out, size_t n);

#endif
