/* t_archive_file: lib/gzm.c, nd_parse (lib/ndjson.c) and ar_check_fd
 * (lib/archive_file.c) — member boundaries and the damage offset for a cut
 * at every byte of the last member; the NUL-byte and too-big-integer lines. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "archive.h"
#include "gzm.h"
#include "ndjson.h"
#include "t.h"

/* text as one gzip member appended to buf at *n. */
static void add_member(unsigned char *buf, size_t *n, const char *text)
{
	z_stream z;
	memset(&z, 0, sizeof z);
	deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
	z.next_in = (unsigned char *)text;
	z.avail_in = (uInt)strlen(text);
	z.next_out = buf + *n;
	z.avail_out = 4096;
	deflate(&z, Z_FINISH);
	*n += 4096 - z.avail_out;
	deflateEnd(&z);
}

static int write_file(const char *path, const unsigned char *b, size_t n)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, b, n) != (ssize_t)n)
		return -1;
	lseek(fd, 0, SEEK_SET);
	return fd;
}

int main(void)
{
	static const char *const text[] = {
		"{\"id\":\"a\",\"generation\":0}\n",
		"{\"id\":\"b\",\"generation\":1}\n{\"id\":\"c\",\"generation\":1}\n",
		"{\"id\":\"d\",\"generation\":2,\"pad\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}\n",
	};
	unsigned char buf[16384];
	size_t n = 0, end[3];
	for (int i = 0; i < 3; i++) {
		add_member(buf, &n, text[i]);
		end[i] = n;
	}
	char path[] = "/tmp/t_archive_file.XXXXXX";
	int tfd = mkstemp(path);
	T_OK(tfd >= 0, "temporary file");
	close(tfd);

	/* Whole: every member's end seen, no read spanning two members. */
	int fd = write_file(path, buf, n);
	struct gzm g;
	gzm_init(&g, fd, 0);
	char out[7], all[512] = "";
	size_t got = 0, memb_out = 0;
	int spans = 0, ends = 0;
	uint64_t ends_at[3] = {0};
	ssize_t r;
	while ((r = gzm_read(&g, out, sizeof out)) > 0) {
		memcpy(all + got, out, (size_t)r);
		got += (size_t)r;
		memb_out += (size_t)r;
		if (g.member_done) {
			if (ends < 3) {
				ends_at[ends] = g.last_end;
				spans += memb_out != strlen(text[ends]);
			}
			ends++;
			memb_out = 0;
		}
	}
	T_OK(r == 0 && g.gz && g.members == 3 && ends == 3, "whole: 3 members, a clean end (r %zd, %d ends)", r, ends);
	T_OK(ends_at[0] == end[0] && ends_at[1] == end[1] && ends_at[2] == end[2], "whole: each member's end offset");
	T_OK(!spans, "whole: no read spans two members");
	char want[512];
	snprintf(want, sizeof want, "%s%s%s", text[0], text[1], text[2]);
	T_OK(got == strlen(want) && memcmp(all, want, got) == 0, "whole: the bytes");
	gzm_end(&g);
	struct ar_check c;
	char e[ERRBUF];
	T_OK(ar_check_fd(fd, path, 1, &c, e) == 0 && !c.damaged && !c.plain && c.members == 3 && c.records == 4 &&
		     c.good_end == n,
	     "ar_check_fd: whole, 3 members, 4 records");
	close(fd);

	/* Cut at every byte inside the last member: damaged at its first byte. */
	int wrong = 0, wrong_check = 0;
	for (size_t cut = end[1] + 1; cut < n; cut++) {
		fd = write_file(path, buf, cut);
		gzm_init(&g, fd, 0);
		while ((r = gzm_read(&g, out, sizeof out)) > 0)
			;
		if (r != -2 || g.damage_at != end[1] || strcmp(g.reason, "truncated gzip member") != 0) {
			if (!wrong)
				printf("#   cut %zu: r %zd at %llu (%s)\n", cut, r, (unsigned long long)g.damage_at, g.reason);
			wrong++;
		}
		gzm_end(&g);
		if (ar_check_fd(fd, path, 1, &c, e) != 0 || !c.damaged || c.damage_at != end[1] || c.good_end != end[1] ||
		    c.members != 2 || c.records != 3)
			wrong_check++;
		close(fd);
	}
	T_OK(!wrong, "a cut at any byte of the last member: damaged at its first byte, %zu (%d wrong)", end[1], wrong);
	T_OK(!wrong_check, "ar_check_fd agrees, and keeps the 2 whole members (%d wrong)", wrong_check);
	fd = write_file(path, buf, end[1]);
	T_OK(ar_check_fd(fd, path, 1, &c, e) == 0 && !c.damaged && c.members == 2, "a cut at a member boundary is whole");
	close(fd);

	/* Garbage after the last member. */
	memcpy(buf + n, "junk\n", 5);
	fd = write_file(path, buf, n + 5);
	T_OK(ar_check_fd(fd, path, 1, &c, e) == 0 && c.damaged && c.damage_at == n &&
		     strcmp(c.reason, "garbage after the last gzip member") == 0,
	     "garbage after the last member: damaged at its first byte (%s)", c.reason);
	close(fd);
	/* A plain file. */
	fd = write_file(path, (const unsigned char *)text[0], strlen(text[0]));
	T_OK(ar_check_fd(fd, path, 1, &c, e) == 0 && c.plain, "a plain file is not a gzip archive");
	close(fd);
	unlink(path);

	/* nd_parse */
	char why[ERRBUF];
	json_t *v = nd_parse("{\"a\":\"x\0y\"}", 11, why);
	T_OK(!v && strstr(why, "contains a NUL byte (column 8)"), "nd_parse: a raw NUL byte (%s)", why);
	const char *big = "{\"n\":18446744073709551616,\"m\":-99999999999999999999,\"s\":\"123456789012345678901\",\"k\":7}";
	v = nd_parse(big, strlen(big), why);
	T_OK(v && json_is_real(json_object_get(v, "n")) && json_real_value(json_object_get(v, "n")) == 18446744073709551616.0 &&
		     json_is_real(json_object_get(v, "m")) && json_is_integer(json_object_get(v, "k")) &&
		     strcmp(json_string_value(json_object_get(v, "s")), "123456789012345678901") == 0,
	     "nd_parse: integers beyond 64 bits as reals, the rest as written");
	json_decref(v);
	v = nd_parse("{\"a\":1}{\"b\":2}", 14, why);
	T_OK(!v && strstr(why, "not JSON"), "nd_parse: two objects on one line (%s)", why);
	v = nd_parse("[1]", 3, why);
	T_OK(!v && strcmp(why, "not a JSON object") == 0, "nd_parse: an array is not a record");
	v = nd_parse("{\"a\":\"\xff\"}", 9, why);
	T_OK(!v && strstr(why, "not JSON"), "nd_parse: invalid UTF-8 (%s)", why);
	return T_DONE();
}
