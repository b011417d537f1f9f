/* err: program-name-prefixed diagnostics; see err.h. */
#include "err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *prog = "ksci";

void err_init(const char *argv0)
{
	const char *s = argv0 ? strrchr(argv0, '/') : NULL;
	prog = s ? s + 1 : (argv0 ? argv0 : "ksci");
}

const char *err_prog(void) { return prog; }

/* The whole line in one write(2): tools fork workers (lib/tool.c) that share
 * stderr, and a line printed in pieces ran into another worker's line. */
void err_vsay(const char *where, const char *fmt, va_list ap, int with_errno)
{
	int e = errno;
	char buf[4096];
	size_t n = (size_t)snprintf(buf, sizeof buf, "%s: %s%s", prog, where ? where : "", where ? ": " : "");
	if (n < sizeof buf) {
		int k = vsnprintf(buf + n, sizeof buf - n, fmt, ap);
		n = k < 0 ? n : n + (size_t)k;
	}
	if (with_errno && n < sizeof buf)
		n += (size_t)snprintf(buf + n, sizeof buf - n, ": %s", strerror(e));
	if (n >= sizeof buf - 1) { /* cut: said so, and the line still ends */
		static const char cut[] = " [...]";
		n = sizeof buf - 1 - (sizeof cut - 1);
		memcpy(buf + n, cut, sizeof cut - 1);
		n += sizeof cut - 1;
	}
	buf[n++] = '\n';
	fflush(stderr);
	for (size_t off = 0; off < n;) {
		ssize_t w = write(STDERR_FILENO, buf + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	errno = e;
}

void warnx_(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	err_vsay(NULL, fmt, ap, 0);
	va_end(ap);
}

void warn_(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	err_vsay(NULL, fmt, ap, 1);
	va_end(ap);
}

void die(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	err_vsay(NULL, fmt, ap, 0);
	va_end(ap);
	exit(code);
}

int errf(char *buf, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, ERRBUF, fmt, ap);
	va_end(ap);
	return -1;
}
