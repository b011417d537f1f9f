/* t_select_archive: lib/archive.c — every line delivered once with the right
 * offset, and ar_fetch returning any line byte-exactly, for plain files,
 * single- and multi-member gzip (past several restart points) and pipes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "archive.h"
#include "t.h"

#define NL 40000

static char *lines[NL];
static size_t lens[NL];

struct seen {
	long n, bad;
	uint64_t off[NL + 1];
};

static int on_line(void *ctx, const char *l, size_t n, long lineno, uint64_t off)
{
	struct seen *s = ctx;
	if (lineno < 1 || lineno > NL || n != lens[lineno - 1] || memcmp(l, lines[lineno - 1], n) != 0)
		s->bad++;
	else
		s->off[lineno] = off;
	s->n++;
	return 0;
}

/* Write the lines as plain text, or gzip with a new member every `member` lines. */
static void write_file(const char *path, int gz, int member)
{
	FILE *f = fopen(path, "wb");
	gzFile g = NULL;
	for (int i = 0; i < NL; i++) {
		if (gz && i % member == 0) {
			if (g)
				gzclose(g);
			fflush(f);
			g = gzdopen(dup(fileno(f)), "ab6");
		}
		if (gz) {
			gzwrite(g, lines[i], (unsigned)lens[i]);
			gzputc(g, '\n');
		} else {
			fwrite(lines[i], 1, lens[i], f);
			fputc('\n', f);
		}
	}
	if (g)
		gzclose(g);
	fclose(f);
}

static void check(const char *label, const char *path, int through_pipe)
{
	char e[ERRBUF];
	static struct seen s;
	memset(&s, 0, sizeof s);
	struct ar_file *a;
	int saved = -1;
	if (through_pipe) {
		/* feed the file to our stdin through a pipe from a child process */
		int fd[2];
		if (pipe(fd) != 0)
			return;
		if (fork() == 0) {
			close(fd[0]);
			FILE *f = fopen(path, "rb");
			char buf[65536];
			size_t n;
			while ((n = fread(buf, 1, sizeof buf, f)) > 0)
				if (write(fd[1], buf, n) < 0)
					break;
			_exit(0);
		}
		close(fd[1]);
		saved = dup(0);
		dup2(fd[0], 0);
		close(fd[0]);
		a = ar_open("-", e);
	} else {
		a = ar_open(path, e);
	}
	int rc = a ? ar_scan(a, on_line, &s, e) : -1;
	T_OK(rc == 0 && s.n == NL && s.bad == 0, "%s: every line once, in order (%ld lines, %ld wrong)", label, s.n, s.bad);
	int fetched = 0;
	for (int i = 0; a && i < NL; i += 997) {
		char *t = ar_fetch(a, s.off[i + 1], lens[i], e);
		fetched += t && memcmp(t, lines[i], lens[i]) == 0 && t[lens[i]] == '\0';
		free(t);
	}
	T_OK(fetched == (NL + 996) / 997, "%s: ar_fetch returns sampled lines exactly (%d)", label, fetched);
	char *t = a ? ar_fetch(a, s.off[NL], lens[NL - 1], e) : NULL;
	T_OK(t && memcmp(t, lines[NL - 1], lens[NL - 1]) == 0, "%s: the last line too", label);
	free(t);
	ar_close(a);
	if (saved >= 0) {
		dup2(saved, 0);
		close(saved);
	}
}

int main(void)
{
	uint64_t x = 88172645463325252ULL;
	for (int i = 0; i < NL; i++) {
		/* ~200 bytes of weakly compressible text: past AR_SPAN several times */
		char buf[512];
		int n = snprintf(buf, sizeof buf, "{\"i\":%d,\"s\":\"", i);
		for (int j = 0; j < 24; j++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			n += snprintf(buf + n, sizeof buf - (size_t)n, "%07llx", (unsigned long long)(x & 0xfffffff));
		}
		n += snprintf(buf + n, sizeof buf - (size_t)n, "\"}");
		lines[i] = strdup(buf);
		lens[i] = (size_t)n;
	}
	char dir[] = "/tmp/t_select_archive.XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	char plain[64], one[64], many[64];
	snprintf(plain, sizeof plain, "%s/a.ndjson", dir);
	snprintf(one, sizeof one, "%s/one.gz", dir);
	snprintf(many, sizeof many, "%s/many.gz", dir);
	write_file(plain, 0, 0);
	write_file(one, 1, NL);
	write_file(many, 1, 3001);
	check("plain", plain, 0);
	check("gzip, one member", one, 0);
	check("gzip, appended members", many, 0);
	check("gzip through a pipe", many, 1);
	check("plain through a pipe", plain, 1);

	char e[ERRBUF];
	T_OK(ar_open("/nonexistent/x.gz", e) == NULL && strstr(e, "No such file"), "a missing file: %s", e);
	/* a truncated gzip archive is a read error, after the lines before it */
	char cut[64];
	snprintf(cut, sizeof cut, "%s/cut.gz", dir);
	FILE *in = fopen(one, "rb"), *out = fopen(cut, "wb");
	char buf[4096];
	long total = 0;
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, in)) > 0 && total < 200000) {
		fwrite(buf, 1, n, out);
		total += (long)n;
	}
	fclose(in);
	fclose(out);
	static struct seen s;
	struct ar_file *a = ar_open(cut, e);
	int rc = ar_scan(a, on_line, &s, e);
	T_OK(rc == AR_DAMAGED && s.n > 0 && s.bad == 0,
	     "regression: a truncated gzip is an error, not a silent end (%s; %ld lines first)", e, s.n);
	char want[256];
	snprintf(want, sizeof want, "%s: damaged at byte 0 (truncated gzip member); repair with: karchive repair %s", cut,
	         cut);
	T_OK(strcmp(e, want) == 0, "a truncated gzip: the message of docs/exit-codes.md (%s)", e);
	ar_close(a);

	unlink(plain), unlink(one), unlink(many), unlink(cut);
	rmdir(dir);
	for (int i = 0; i < NL; i++)
		free(lines[i]);
	return T_DONE();
}
