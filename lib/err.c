/* err: program-name-prefixed diagnostics; see err.h. */
#include "err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *prog = "ksci";

void err_init(const char *argv0)
{
	const char *s = argv0 ? strrchr(argv0, '/') : NULL;
	prog = s ? s + 1 : (argv0 ? argv0 : "ksci");
}

const char *err_prog(void) { return prog; }

static void vmsg(const char *fmt, va_list ap, int with_errno)
{
	int e = errno;
	fprintf(stderr, "%s: ", prog);
	vfprintf(stderr, fmt, ap);
	if (with_errno)
		fprintf(stderr, ": %s", strerror(e));
	fputc('\n', stderr);
}

void warnx_(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap, 0);
	va_end(ap);
}

void warn_(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap, 1);
	va_end(ap);
}

void die(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap, 0);
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
