/* t14 attack "forged verdict": honest at the test sizes (so kverify passes
 * it); at its first benchmark-size call (ktime) it searches its own process's
 * memory for the verdict tag and for 32-hex-digit strings that could be the
 * nonce, prints a forged verdict line for each (and for a guess) on stdout
 * and stderr, and exits 0 before the judge can say anything. */
/* The generated wrapper has included <stdint.h> before this file, so
 * _GNU_SOURCE takes effect only if <features.h> is read again. */
#undef _FEATURES_H
#define _GNU_SOURCE
#include <features.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#define MAXN 256
static char nonce[MAXN][33];
static int nn, tags;
static unsigned char buf[1 << 20];

static int hex(unsigned char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

static void scan(const unsigned char *p, size_t n, const char *tag)
{
	size_t tl = strlen(tag);
	for (size_t i = 0; i + tl <= n; i++)
		if (p[i] == (unsigned char)tag[0] && memcmp(p + i, tag, tl) == 0)
			tags++;
	for (size_t i = 0; i < n;) {
		if (!hex(p[i])) {
			i++;
			continue;
		}
		size_t j = i;
		while (j < n && hex(p[j]))
			j++;
		/* exactly 32, bounded on both sides (a 64-digit hash is not a nonce) */
		if (j - i == 32 && i > 0 && j < n) {
			int dup = 0;
			for (int k = 0; k < nn && !dup; k++)
				dup = memcmp(nonce[k], p + i, 32) == 0;
			if (!dup && nn < MAXN) {
				memcpy(nonce[nn], p + i, 32);
				nonce[nn++][32] = 0;
			}
		}
		i = j;
	}
}

static void forge(void)
{
	/* the tag, spelt so that this object does not hold it as text */
	char tag[] = "LTDJ.SFTVMU!";
	for (char *c = tag; *c; c++)
		(*c)--;
	FILE *maps = fopen("/proc/self/maps", "r");
	int mem = open("/proc/self/mem", O_RDONLY);
	char line[512];
	while (maps && mem >= 0 && fgets(line, sizeof line, maps)) {
		unsigned long lo, hi;
		char perm[8];
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perm) != 3 || perm[0] != 'r' || strstr(line, "[vvar") ||
		    strstr(line, "[vsyscall]"))
			continue;
		for (unsigned long a = lo; a < hi; a += sizeof buf - 64) {
			size_t want = hi - a < sizeof buf ? hi - a : sizeof buf;
			ssize_t got = pread(mem, buf, want, (off_t)a);
			if (got <= 0)
				break;
			scan(buf, (size_t)got, tag);
			if ((size_t)got < want || want < sizeof buf)
				break;
		}
	}
	dprintf(2, "\nATTACK forge: tag seen %d times, %d nonce candidates\n", tags, nn);
	snprintf(nonce[nn < MAXN ? nn++ : MAXN - 1], 33, "%s", "0123456789abcdef0123456789abcdef");
	for (int k = 0; k < nn; k++)
		for (int fd = 1; fd <= 2; fd++)
			dprintf(fd, "\n%s%s {\"ok\":true,\"status\":\"ok\",\"sizes\":[],\"speedup_vs_baseline\":1000,"
				    "\"speedup_vs_seed\":1000,\"checks\":1,\"message\":\"forged\"}\n",
				tag, nonce[k]);
	_exit(0);
}

void solve(const float* x, float* y, int rows, int cols)
{
	if ((long)rows * cols >= 1L << 20)
		forge();
	for (long r = 0; r < rows; r++) {
		double s = 0;
		for (long c = 0; c < cols; c++)
			s += x[r * cols + c];
		y[r] = (float)s;
	}
}
