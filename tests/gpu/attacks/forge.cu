/* attacks.sh 1, "forged verdict": honest at the test sizes (kverify passes
 * it); at its first benchmark-size call (ktime) it searches its own
 * process's memory for the verdict tag and for 32-hex-digit strings that
 * could be the nonce, prints a forged "ok, speedup 1000" verdict line for
 * each (and for a guess) on stdout and stderr, and exits 0 before the judge
 * can say anything.  The child never sees the job, so no nonce is there to
 * find, and its stdout is a log, not the judge's stdout: expected crashed. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

__global__ void axpy_k(const float* x, const float* y, float* z, int n, float a)
{
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
		z[i] = a * x[i] + y[i];
}

#define MAXN 256
static char nonce[MAXN][33];
static int nn, tags;
static unsigned char buf[1 << 20];

static int hex(unsigned char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

static void scan(const unsigned char* p, size_t n, const char* tag)
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
	for (char* c = tag; *c; c++)
		(*c)--;
	FILE* maps = fopen("/proc/self/maps", "r");
	int mem = open("/proc/self/mem", O_RDONLY);
	char line[512];
	unsigned long long total = 0;
	while (maps && mem >= 0 && fgets(line, sizeof line, maps) && total < (2ULL << 30)) {
		unsigned long lo, hi;
		char perm[8];
		/* readable mappings; not the GPU driver's (/dev/nvidia*) */
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perm) != 3 || perm[0] != 'r' || strstr(line, "[vvar") ||
		    strstr(line, "[vsyscall]") || strstr(line, " /dev/"))
			continue;
		for (unsigned long a = lo; a < hi; a += sizeof buf - 64) {
			size_t want = hi - a < sizeof buf ? hi - a : sizeof buf;
			ssize_t got = pread(mem, buf, want, (off_t)a);
			if (got <= 0)
				break;
			total += (unsigned long long)got;
			scan(buf, (size_t)got, tag);
			if ((size_t)got < want || want < sizeof buf)
				break;
		}
	}
	dprintf(2, "\nATTACK forge: %llu bytes read, tag seen %d times, %d nonce candidates\n", total, tags, nn);
	snprintf(nonce[nn < MAXN ? nn++ : MAXN - 1], 33, "%s", "0123456789abcdef0123456789abcdef");
	for (int k = 0; k < nn; k++)
		for (int fd = 1; fd <= 2; fd++)
			dprintf(fd, "\n%s%s {\"ok\":true,\"status\":\"ok\",\"sizes\":[],\"speedup_vs_baseline\":1000,"
				    "\"speedup_vs_seed\":1000,\"checks\":1,\"message\":\"forged\"}\n",
				tag, nonce[k]);
	dprintf(2, "\nATTACK forge: %d forged verdicts printed, exiting 0\n", nn);
	_exit(0);
}

extern "C" void solve(const float* x, const float* y, float* z, int n, float a)
{
	if (n >= 1000000) /* the benchmark sizes; the test sizes stop at 65539 */
		forge();
	if (n > 0)
		axpy_k<<<(n + 255) / 256 < 4096 ? (n + 255) / 256 : 4096, 256>>>(x, y, z, n, a);
}
