/* t_gen: gen_load_archive (lib/gen/gen.c), which walks archive lines with
 * jscan and parses only some, against the reading it replaced — every line
 * parsed by jansson through lib/ndjson.h — on lines chosen to sit where a
 * walk and a parse could disagree: escapes, UTF-8, numbers, nesting, blank
 * and CRLF lines.  Same seen set, same notebook, same warnings; and a
 * truncated gzip archive is an error, not a shorter archive. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "archive.h"
#include "gen/gen.h"
#include "ndjson.h"
#include "rec.h"
#include "t.h"

static const char *const LINES[] = {
	"{\"id\":\"plain\",\"task\":\"t\",\"source\":\"int x;\\n\\tdone\",\"origin\":{\"generator\":\"mutate\"}}",
	"{\"id\":\"hyp\",\"task\":\"t\",\"source\":\"s\",\"request\":{\"a\":1},\"status\":\"wrong\","
	"\"origin\":{\"hypothesis\":\"wider tiles\"},\"verify\":{\"message\":\"c[0] = 1\"}}",
	"{\"id\":\"hypobj\",\"origin\":{\"hypothesis\":{\"title\":\"t\"}},\"time\":{\"speedup_vs_seed\":1.5e0}}",
	"{\"id\":\"plan\",\"origin\":{\"plan\":{\"title\":\"fuse\",\"max_uplift\":2}}}",
	"{\"id\":\"plannum\",\"origin\":{\"plan\":{\"title\":3},\"hypothesis\":7}}",
	"{\"id\":\"dupkey\",\"origin\":{\"hypothesis\":\"first\",\"hypothesis\":null}}",
	"not json",
	"[1,2]",
	"\"a string\"",
	"",
	"  \t ",
	"{\"id\":\"caf\\u00e9\",\"x\":-0}",
	"{\"id\":\"raw caf\xc3\xa9\",\"x\":1E+05}",
	"{\"id\":\"pair \\ud83d\\ude00\",\"x\":[0.5,-12,1e-99]}",
	"{\"id\":\"badutf8\",\"source\":\"\xff\"}",
	"{\"id\":\"overlong\",\"source\":\"\xc0\xaf\"}",
	"{\"id\":\"surrogate-utf8\",\"source\":\"\xed\xa0\x80\"}",
	"{\"id\":\"lone\",\"source\":\"\\ud800 x\"}",
	"{\"id\":\"lowfirst\",\"source\":\"\\udc00\"}",
	"{\"id\":\"badesc\",\"source\":\"\\q\"}",
	"{\"id\":\"badhex\",\"source\":\"\\u12G4\"}",
	"{\"id\":\"ctl\",\"source\":\"a\tb\"}",
	"{\"id\":\"bigint\",\"n\":123456789012345678901234}",
	"{\"id\":\"int19\",\"n\":1234567890123456789}",
	"{\"id\":\"zero\",\"n\":012}",
	"{\"id\":\"dot\",\"n\":1.}",
	"{\"id\":\"exp\",\"n\":1e}",
	"{\"id\":\"huge\",\"n\":1e999}",
	"{\"id\":\"hugeok\",\"n\":1e99}",
	"{\"id\":\"plus\",\"n\":+1}",
	"{\"id\":\"crlf\",\"origin\":{\"plan\":{\"title\":\"x\"}}}\r",
	"{\"id\":\"one\",\"id\":\"two\"}",
	"{\"id\":17}",
	"{\"id\":\"nul\\u0000tail\"}",
	"{\"id\":\"after\"} x",
	"{\"id\":\"hyp-bad\",\"origin\":{\"hypothesis\":\"h\"},\"source\":\"\\x\"}",
	"{\"id\":\"unterminated",
	"{\"id\":\"esc\\\"quote\\\\\",\"source\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"}",
	"{}",
	"{\"id\":\"ws\" , \"origin\" :\t{ \"hypothesis\" : \"spaced\" } }",
	"{\"id\":\"timed-plain\",\"origin\":{\"generator\":\"mutate\"},\"time\":{\"speedup_vs_seed\":0.5}}",
	"{\"id\":\"fixrec\",\"status\":\"timed\",\"origin\":{\"fixes\":\"hyp\"},\"time\":{\"speedup_vs_seed\":2}}",
	"{\"id\":\"fixnum\",\"origin\":{\"fixes\":7}}",
};

/* 80 levels of arrays: deeper than jscan walks, well within jansson. */
static char *deep_line(void)
{
	static char b[512];
	size_t o = (size_t)snprintf(b, sizeof b, "{\"id\":\"deep\",\"x\":");
	for (int i = 0; i < 80; i++)
		b[o++] = '[';
	for (int i = 0; i < 80; i++)
		b[o++] = ']';
	snprintf(b + o, sizeof b - o, "}");
	return b;
}

static char *long_id_line(void)
{
	static char b[1200];
	size_t o = (size_t)snprintf(b, sizeof b, "{\"id\":\"");
	for (int i = 0; i < 1000; i++)
		b[o++] = (char)('a' + i % 26);
	snprintf(b + o, sizeof b - o, "\"}");
	return b;
}

static void write_archive(const char *path, int gz, int last_newline)
{
	size_t n = sizeof LINES / sizeof *LINES;
	gzFile f = gzopen(path, gz ? "wb" : "wbT");
	for (size_t i = 0; i < n; i++)
		gzprintf(f, "%s\n", LINES[i]);
	gzprintf(f, "%s\n%s", deep_line(), long_id_line());
	if (last_newline)
		gzputs(f, "\n");
	gzclose(f);
}

struct warns {
	char text[64][ERRBUF];
	int n;
};

static void warn_cb(void *ctx, const char *msg)
{
	struct warns *w = ctx;
	if (w->n < 64)
		snprintf(w->text[w->n++], ERRBUF, "%s", msg);
}

static int no_emit(void *ctx, const json_t *rec)
{
	(void)ctx;
	(void)rec;
	return 0;
}

/* The reading gen_load_archive replaced: every line parsed. */
static int old_load(struct gen *g, const char *path, char *errbuf)
{
	struct nd_reader *r = nd_open(path, errbuf);
	if (!r)
		return -1;
	for (;;) {
		json_t *rec;
		char e[ERRBUF];
		int rc = nd_next(r, &rec, e);
		if (rc == 0)
			break;
		if (rc == -2) {
			nd_close(r);
			return -1;
		}
		if (rc < 0) {
			gen_warnf(g, "archive %s; line skipped", e);
			continue;
		}
		const char *id = rec_str(rec, "id");
		if (id)
			json_object_set_new(g->seen, id, json_true());
		json_t *h = rec_path(rec, "origin.hypothesis");
		if (json_is_object(h) || json_is_string(h) || json_is_string(rec_path(rec, "origin.plan.title")) ||
		    json_is_string(rec_path(rec, "origin.fixes"))) {
			json_t *slim = json_deep_copy(rec);
			json_object_del(slim, "source");
			json_object_del(slim, "request");
			json_array_append_new(g->notebook, slim);
		}
		json_decref(rec);
	}
	nd_close(r);
	return 0;
}

static void compare(const char *path, const char *what)
{
	char e[ERRBUF];
	struct warns wn = {0}, wo = {0};
	struct gen gn = {.emit = no_emit, .warn = warn_cb, .ctx = &wn};
	struct gen go = {.emit = no_emit, .warn = warn_cb, .ctx = &wo};
	gen_init(&gn);
	gen_init(&go);
	T_OK(gen_load_archive(&gn, path, e) == 0, "%s: read", what);
	T_OK(old_load(&go, path, e) == 0, "%s: the reference reads it", what);
	T_OK(json_equal(gn.notebook, go.notebook), "%s: same notebook (%zu, %zu records)", what,
	     json_array_size(gn.notebook), json_array_size(go.notebook));
	/* bigint-record-dropped: an integer beyond 64 bits made json_loadb drop
	 * the record ("too big integer"); gen.c now parses with nd_parse. */
	T_OK(json_object_get(gn.seen, "bigint") != NULL, "%s: the big-integer record is kept", what);
	T_OK(json_equal(gn.seen, go.seen), "%s: same seen ids (%zu, %zu)", what, json_object_size(gn.seen),
	     json_object_size(go.seen));
	int same = wn.n == wo.n;
	for (int i = 0; same && i < wn.n; i++)
		same = strcmp(wn.text[i], wo.text[i]) == 0;
	T_OK(same, "%s: same warnings (%d, %d)", what, wn.n, wo.n);
	for (int i = 0; !same && i < wn.n && i < wo.n; i++)
		if (strcmp(wn.text[i], wo.text[i]) != 0)
			printf("#   new: %s\n#   old: %s\n", wn.text[i], wo.text[i]);
	T_OK(json_object_get(gn.seen, "plain") && json_object_get(gn.seen, "caf\xc3\xa9") &&
		     json_object_get(gn.seen, "deep") && json_object_get(gn.seen, "two") &&
		     json_object_get(gn.seen, "nul") && !json_object_get(gn.seen, "badutf8") &&
		     !json_object_get(gn.seen, "hyp-bad"),
	     "%s: ids seen and skipped where jansson takes and refuses the line", what);
	/* notebook-forgets: fixes join the notebook, and every timed record's
	 * speedup is kept for the notebook's "vs parent". */
	int fixin = 0;
	for (size_t i = 0; i < json_array_size(gn.notebook); i++)
		fixin |= strcmp(rec_str(json_array_get(gn.notebook, i), "id"), "fixrec") == 0;
	T_OK(fixin, "%s: a fix (origin.fixes) is in the notebook", what);
	T_OK(json_real_value(json_object_get(gn.speedups, "timed-plain")) == 0.5 &&
		     json_real_value(json_object_get(gn.speedups, "hypobj")) == 1.5 &&
		     json_real_value(json_object_get(gn.speedups, "fixrec")) == 2 && !json_object_get(gn.speedups, "plain"),
	     "%s: speedups of walked and parsed lines (%zu)", what, json_object_size(gn.speedups));
	json_t *first = json_array_get(gn.notebook, 0);
	T_OK(first && !json_object_get(first, "source") && !json_object_get(first, "request") &&
		     json_object_get(first, "verify"),
	     "%s: a notebook record keeps its outcome, not its source or request", what);
	gen_free(&gn);
	gen_free(&go);
}

int main(void)
{
	char dir[] = "/tmp/t_gen.XXXXXX", plain[64], gz[64], gz2[64], cut[64];
	if (!mkdtemp(dir))
		return 1;
	snprintf(plain, sizeof plain, "%s/a.ndjson", dir);
	snprintf(gz, sizeof gz, "%s/a.ndjson.gz", dir);
	snprintf(gz2, sizeof gz2, "%s/b.ndjson.gz", dir);
	snprintf(cut, sizeof cut, "%s/cut.ndjson.gz", dir);
	write_archive(plain, 0, 1);
	write_archive(gz, 1, 1);
	write_archive(gz2, 1, 0);
	compare(plain, "plain");
	compare(gz, "gzip");
	compare(gz2, "gzip, no final newline");

	/* Cut the gzip file short: the scan must fail, not stop early. */
	FILE *in = fopen(gz, "rb"), *out = fopen(cut, "wb");
	char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof buf, in);
	fwrite(buf, 1, n / 2, out);
	fclose(in);
	fclose(out);
	char e[ERRBUF] = "";
	struct warns w = {0};
	struct gen g = {.emit = no_emit, .warn = warn_cb, .ctx = &w};
	gen_init(&g);
	T_OK(gen_load_archive(&g, cut, e) == AR_DAMAGED && strstr(e, "truncated"), "truncated gzip: an error (%s)", e);
	gen_free(&g);
	gen_init(&g);
	T_OK(gen_load_archive(&g, "/nonexistent/archive.gz", e) == -1 && strstr(e, "/nonexistent/archive.gz"),
	     "missing archive: an error naming it");
	gen_free(&g);

	unlink(plain);
	unlink(gz);
	unlink(gz2);
	unlink(cut);
	rmdir(dir);
	return T_DONE();
}
