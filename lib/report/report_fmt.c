/* report_fmt: number spellings for reports; see report_fmt.h. */
#include "report_fmt.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static char *fmt(char *b, double v, const char *f)
{
	if (!isfinite(v))
		snprintf(b, RP_FMT, "n/a");
	else
		snprintf(b, RP_FMT, f, v);
	return b;
}

char *rp_fmt_x(char *b, double v) { return fmt(b, v, "%.2fx"); }
char *rp_fmt_pct(char *b, double v) { return fmt(b, v, "%.1f%%"); }
char *rp_fmt_frac(char *b, double v) { return fmt(b, v, "%.3f"); }
char *rp_fmt_usd(char *b, double v) { return fmt(b, v, "%.4f"); }
char *rp_fmt_int(char *b, double v) { return fmt(b, v, "%.0f"); }
char *rp_fmt_sec(char *b, double v) { return fmt(b, v, "%.1f"); }

char *rp_fmt_gen(char *b, long gen)
{
	if (gen < 0)
		snprintf(b, RP_FMT, "?");
	else
		snprintf(b, RP_FMT, "%ld", gen);
	return b;
}

char *rp_fmt_cut(char *b, size_t n, const char *s, size_t max)
{
	size_t len = strlen(s);
	if (max + 4 > n)
		max = n > 4 ? n - 4 : 0;
	if (len <= max && len < n) {
		memcpy(b, s, len + 1);
		return b;
	}
	size_t cut = max;
	while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80)
		cut--;
	memcpy(b, s, cut);
	memcpy(b + cut, "...", 4);
	return b;
}

char *rp_fmt_safe(char *b, size_t n, const char *s)
{
	size_t i = 0;
	for (; s[i] && i + 1 < n; i++) {
		char c = s[i];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
			 c == '_' || c == '-';
		b[i] = ok ? c : '_';
	}
	b[i] = '\0';
	if (b[0] == '.')
		b[0] = '_';
	return b;
}
