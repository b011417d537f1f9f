/* Unit tests for the core lib modules: sha256, expr, dtype, stats, rec, ndjson, opt, envknob. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtype.h"
#include "envknob.h"
#include "expr.h"
#include "ndjson.h"
#include "opt.h"
#include "rec.h"
#include "sha256.h"
#include "stats.h"
#include "strbuf.h"
#include "t.h"

static void test_sha256(void)
{
	struct sha256 s;
	char hex[65];
	sha256_init(&s);
	sha256_update(&s, "abc", 3);
	sha256_hex(&s, hex, 64);
	T_OK(strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0, "sha256(abc)");
	sha256_init(&s);
	const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	sha256_update(&s, m, strlen(m));
	sha256_hex(&s, hex, 64);
	T_OK(strcmp(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1") == 0, "sha256 two blocks");
	sha256_init(&s);
	for (int i = 0; i < 10000; i++)
		sha256_update(&s, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 100);
	sha256_hex(&s, hex, 16);
	T_OK(strcmp(hex, "cdc76e5c9914fb92") == 0, "sha256 of 1000000 'a' in pieces, truncated to 16 hex (%s)", hex);
}

static void test_expr(void)
{
	json_t *v = json_pack("{s:i, s:i, s:i}", "M", 7, "N", 3, "K", 5);
	char e[ERRBUF];
	double r = 0;
	T_OK(expr_eval("2*M*N*K", v, &r, e) == 0 && r == 210, "expr product");
	T_OK(expr_eval("(M+1)*(N-1) / 2", v, &r, e) == 0 && r == 8, "expr parentheses and division");
	T_OK(expr_eval("cdiv(M, 2) + max(N, K) - min(N, K) + M % 4", v, &r, e) == 0 && r == 9, "expr functions");
	T_OK(expr_eval("-M + 10", v, &r, e) == 0 && r == 3, "expr unary minus");
	T_OK(expr_eval("M * Q", v, &r, e) < 0 && strstr(e, "unknown name \"Q\""), "expr names the unknown variable");
	T_OK(expr_eval("M * (N", v, &r, e) < 0 && strstr(e, "expected ')'"), "expr unbalanced parenthesis");
	T_OK(expr_eval("M / (N - 3)", v, &r, e) < 0 && strstr(e, "division by zero"), "expr division by zero");
	T_OK(expr_eval("M M", v, &r, e) < 0 && strstr(e, "trailing"), "expr trailing text");
	json_decref(v);
}

static void test_dtype(void)
{
	unsigned short h[1];
	double vals[] = {0, 1, -2, 0.5, 65504, 1e-7, 3.14159, -0.0};
	int good = 1;
	for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
		dtype_set(DT_F16, h, 0, vals[i]);
		double back = dtype_get(DT_F16, h, 0);
		if (fabs(back - vals[i]) > fabs(vals[i]) * 1e-3 + 6e-8)
			good = 0;
	}
	T_OK(good, "f16 round trip within half precision");
	dtype_set(DT_F16, h, 0, 1e6);
	T_OK(isinf(dtype_get(DT_F16, h, 0)), "f16 overflow is inf");
	dtype_set(DT_F16, h, 0, NAN);
	T_OK(isnan(dtype_get(DT_F16, h, 0)), "f16 NaN stays NaN");
	dtype_set(DT_BF16, h, 0, 1.00390625);
	T_OK(dtype_get(DT_BF16, h, 0) == 1.0, "bf16 rounds to nearest even");
	T_OK(dtype_parse("bf16") == DT_BF16 && dtype_parse("f33") == DT_NONE, "dtype names");
	T_OK(strcmp(dtype_ctype(DT_F16, "cuda"), "half") == 0, "cuda spelling of f16");
}

static void test_stats(void)
{
	double x[] = {5, 1, 4, 2, 3};
	struct stats s;
	T_OK(stats_summarize(x, 5, &s) == 0 && s.median == 3 && s.mean == 3 && s.min == 1 && s.max == 5, "median/mean/min/max");
	T_OK(fabs(s.sem - sqrt(2.5) / sqrt(5)) < 1e-12, "SEM uses the sample standard deviation");
	double y[] = {1, 2, 3, 4};
	stats_summarize(y, 4, &s);
	T_OK(s.median == 2.5, "even-count median");
	double g[] = {2, 8};
	T_OK(fabs(stats_geomean(g, 2) - 4) < 1e-12, "geometric mean");
	double z[] = {2, 0};
	T_OK(isnan(stats_geomean(z, 2)), "geometric mean of a non-positive value is NaN");
}

static void test_rec(void)
{
	char id1[REC_ID_LEN + 1], id2[REC_ID_LEN + 1], id3[REC_ID_LEN + 1];
	rec_make_id("t", "c", "src", id1);
	rec_make_id("t", "c", "src", id2);
	rec_make_id("t", "cuda", "src", id3);
	T_OK(strcmp(id1, id2) == 0 && strcmp(id1, id3) != 0 && strlen(id1) == 16, "id is a content hash of task+backend+source");
	json_t *o = json_object();
	size_t n = 40000;
	char *big = malloc(n);
	memset(big, 'x', n);
	big[0] = (char)0xff; /* invalid UTF-8 */
	big[1] = '\0';       /* NUL */
	rec_set_log(o, "log", big, n);
	const char *l = json_string_value(json_object_get(o, "log"));
	T_OK(l && strlen(l) < REC_LOG_HEAD + REC_LOG_TAIL + 100 && strstr(l, "bytes cut by ksci"), "long log is cut with a marker");
	T_OK(json_is_true(json_object_get(o, "log_truncated")), "log_truncated is set");
	T_OK(l && l[0] == '?' && l[1] == '?', "invalid UTF-8 and NUL become '?'");
	char *dump = json_dumps(o, 0);
	json_t *back = json_loads(dump, 0, NULL);
	T_OK(back != NULL, "a record with a cleaned log is valid JSON");
	json_decref(back);
	free(dump);
	free(big);
	rec_set_log(o, "log", "short", 5);
	T_OK(!json_object_get(o, "log_truncated"), "a short log clears log_truncated");
	json_t *r = json_pack("{s:s, s:s, s:s}", "task", "t", "backend", "c", "source", "src");
	rec_set_id(r);
	T_OK(strcmp(rec_str(r, "id"), id1) == 0, "rec_set_id matches rec_make_id");
	static const char *const need[] = {"task", "source", "parents", NULL};
	T_OK(strcmp(rec_missing_str(r, need), "parents") == 0, "rec_missing_str names the first missing field");
	rec_fail(r, "verify", "wrong", "wrong", "bad");
	T_OK(strcmp(rec_str(r, "status"), "wrong") == 0 && json_is_false(rec_path(r, "verify.ok")), "rec_fail sets stage and status");
	json_decref(r);
	json_decref(o);
}

static void test_ndjson(void)
{
	char path[] = "/tmp/ksci-t-core-XXXXXX";
	int fd = mkstemp(path);
	const char *text = "{\"a\":1}\n\nnot json\n[1]\n{\"b\":2}\r\n{\"c\":3}";
	T_OK(write(fd, text, strlen(text)) == (ssize_t)strlen(text), "write sample");
	close(fd);
	char e[ERRBUF];
	struct nd_reader *r = nd_open(path, e);
	json_t *v;
	int rc1 = nd_next(r, &v, e);
	json_decref(v);
	int rc2 = nd_next(r, &v, e);
	T_OK(rc1 == 1 && rc2 == -1 && strstr(e, "line 3: not JSON"), "non-JSON line reported with its number (%s)", e);
	int rc3 = nd_next(r, &v, e);
	T_OK(rc3 == -1 && strstr(e, "line 4: not a JSON object"), "non-object line reported");
	int rc4 = nd_next(r, &v, e);
	T_OK(rc4 == 1 && json_object_get(v, "b") && nd_line(r) == 5, "CRLF line parsed, line numbers count blank lines");
	json_decref(v);
	int rc5 = nd_next(r, &v, e);
	T_OK(rc5 == 1 && json_object_get(v, "c"), "last line without newline");
	json_decref(v);
	T_OK(nd_next(r, &v, e) == 0, "end of input");
	nd_close(r);
	unlink(path);
	T_OK(nd_open("/nonexistent/x", e) == NULL && strstr(e, "No such file"), "missing file named");
}

/* nd_wait_fd: the descriptor the next nd_next would block on, or -1 when a
 * whole line is buffered (lib/tool.c polls it with its workers'
 * pipes: kcompile -j held a compiled record until the next line came). */
static void test_nd_wait_fd(void)
{
	int p[2], keep = dup(0);
	char e[ERRBUF];
	json_t *v = NULL;
	T_OK(pipe(p) == 0 && dup2(p[0], 0) == 0, "a pipe as stdin");
	close(p[0]);
	struct nd_reader *r = nd_open("-", e);
	T_OK(r && nd_wait_fd(r) == 0, "nothing read yet: wait on the input");
	const char *a = "{\"a\":1}\n{\"b\":2}\n{\"c\"";
	T_OK(write(p[1], a, strlen(a)) == (ssize_t)strlen(a), "two lines and a part written");
	T_OK(nd_next(r, &v, e) == 1 && json_object_get(v, "a"), "the first line");
	json_decref(v);
	T_OK(nd_wait_fd(r) == -1, "the second line is already read: no wait");
	T_OK(nd_next(r, &v, e) == 1 && json_object_get(v, "b"), "the second line");
	json_decref(v);
	T_OK(nd_wait_fd(r) == 0, "only part of a line read: wait on the input");
	T_OK(write(p[1], ":3}\n", 4) == 4, "the rest written");
	close(p[1]);
	T_OK(nd_next(r, &v, e) == 1 && json_object_get(v, "c"), "the third line");
	json_decref(v);
	T_OK(nd_next(r, &v, e) == 0 && nd_wait_fd(r) == -1, "at the end: no wait");
	nd_close(r);
	dup2(keep, 0);
	close(keep);
}

static void test_opt(void)
{
	char e[ERRBUF];
	double d;
	long l;
	T_OK(opt_double("--budget", "0.5", 0.001, 10, &d, e) == 0 && d == 0.5, "opt_double accepts");
	T_OK(opt_double("--budget", "0", 0.001, 10, &d, e) < 0 && strstr(e, "--budget"), "opt_double range");
	T_OK(opt_double("--budget", "1x", 0, 10, &d, e) < 0, "opt_double rejects junk");
	T_OK(opt_long("-n", "12", 1, 100, &l, e) == 0 && l == 12, "opt_long accepts");
	T_OK(opt_long("-n", "0", 1, 100, &l, e) < 0, "opt_long range");

	/* One message style for every tool (kgen and kreport had their own). */
	uint64_t u;
	T_OK(opt_double("--budget", "0", 0.001, 3600, &d, e) < 0 && strcmp(e, "--budget: 0 is outside 0.001..3600") == 0,
	     "opt message: out of range (%s)", e);
	T_OK(opt_double("--peak-gbps", "fast", 1e-6, 1e12, &d, e) < 0 && strcmp(e, "--peak-gbps: \"fast\" is not a number") == 0,
	     "opt message: not a number (%s)", e);
	T_OK(opt_long("--children", "x", 1, 1000, &l, e) < 0 && strcmp(e, "--children: \"x\" is not an integer") == 0,
	     "opt message: not an integer (%s)", e);
	T_OK(opt_long("--children", "1001", 1, 1000, &l, e) < 0 && strcmp(e, "--children: 1001 is outside 1..1000") == 0,
	     "opt message: integer out of range (%s)", e);
	T_OK(opt_long("--seed", "99999999999999999999", 0, 10, &l, e) < 0 && strstr(e, "is outside 0..10"),
	     "opt_long: overflow is out of range, not junk (%s)", e);
	T_OK(opt_double("--budget", "1e999", 0, 10, &d, e) < 0 && strstr(e, "is outside"), "opt_double: overflow is out of range");
	T_OK(opt_double("--budget", "nan", 0, 10, &d, e) < 0 && strstr(e, "is not a number"), "opt_double: nan is not a number");
	T_OK(opt_long("-n", " 5", 1, 10, &l, e) < 0 && opt_long("-n", "", 1, 10, &l, e) < 0 &&
	     opt_long("-n", "0x5", 1, 10, &l, e) < 0, "opt_long: leading space, empty and hex are not integers");
	l = 7;
	T_OK(opt_long("-n", "500", 1, 10, &l, e) < 0 && l == 7, "opt: *out untouched on error");
	T_OK(opt_u64("--seed", "18446744073709551615", &u, e) == 0 && u == UINT64_MAX, "opt_u64 accepts UINT64_MAX");
	T_OK(opt_u64("--seed", "-1", &u, e) < 0 && strcmp(e, "--seed: -1 is outside 0..18446744073709551615") == 0,
	     "opt_u64: a negative seed is out of range, not 2^64-1 (%s)", e);
	T_OK(opt_u64("--seed", "010", &u, e) == 0 && u == 10, "opt_u64: decimal like the others (010 is 10, not 8)");
	int ci = 7;
	const char *const stat[] = {"mean", "median", NULL};
	T_OK(opt_choice("--stop-stat", "median", stat, &ci, e) == 0 && ci == 1, "opt_choice: the word's index");
	T_OK(opt_choice("--stop-stat", "med", stat, &ci, e) < 0 && ci == 1 &&
		     strcmp(e, "--stop-stat: \"med\" is not one of mean, median") == 0,
	     "opt_choice: no prefixes; the message lists the words, *out untouched (%s)", e);
}

static void test_strbuf(void)
{
	struct strbuf b = STRBUF_INIT;
	char *s = sb_detach(&b, NULL);
	T_OK(s && *s == '\0', "strbuf: nothing added detaches as \"\"");
	free(s);
	for (int i = 0; i < 1000; i++)
		sb_printf(&b, "%d,", i);
	sb_addc(&b, '!');
	sb_addn(&b, "a\0b", 3);
	size_t n = 0;
	s = sb_detach(&b, &n);
	T_OK(s && n == strlen(s) + 3 - 1 && strncmp(s, "0,1,2,", 6) == 0 && memcmp(s + n - 4, "!a\0b", 4) == 0,
	     "strbuf: printf, addc and addn with a NUL keep every byte (len %zu)", n);
	T_OK(b.buf == NULL && b.len == 0, "strbuf: empty after detach");
	free(s);
	b.oom = 1;
	sb_add(&b, "x");
	T_OK(sb_detach(&b, NULL) == NULL, "strbuf: out of memory is reported once, at detach");
	sb_add(&b, "again");
	sb_release(&b);
	T_OK(b.buf == NULL, "strbuf: release empties");
}

static void test_status(void)
{
	T_OK(rec_status_failed("wrong") && rec_status_failed("compile_error") && !rec_status_failed("timed") &&
		     !rec_status_failed("gen_error") && !rec_status_failed(NULL),
	     "rec_status_failed: the candidate's own failures only");
	T_OK(rec_status_final("timed") && rec_status_final("invalid") && rec_status_final("crashed") &&
		     !rec_status_final("generated") && !rec_status_final("selected"),
	     "rec_status_final: no later stage changes it");
	T_OK(rec_backend_known("cuda") && rec_backend_known("c") && !rec_backend_known("cud") && !rec_backend_known(NULL),
	     "rec_backend_known");
}

/* env-switch-typo-was-the-default: KSCI_NVCC_PREFIX=no kept the prefix on
 * and KSCI_CUDA_DEVICE=gpu1 ran on device 0, without a word; now each
 * switch's value is checked against its words (or as a device index) and a
 * value it does not take is named. */
static void test_envknob(void)
{
	char e[ERRBUF] = "", w[128];
	const char *name;
	for (int i = 0; (name = envknob_name(i, w, sizeof w)); i++)
		unsetenv(name);
	T_OK(envknob_check(e) == 0, "envknob: none set: taken");
	setenv("KSCI_NVCC_PREFIX", "", 1);
	T_OK(envknob_check(e) == 0 && !envknob_is("KSCI_NVCC_PREFIX", "off"), "envknob: empty is not set");
	setenv("KSCI_NVCC_PREFIX", "off", 1);
	T_OK(envknob_check(e) == 0 && envknob_is("KSCI_NVCC_PREFIX", "off"), "envknob: a word it takes");
	setenv("KSCI_NVCC_PREFIX", "no", 1);
	T_OK(envknob_check(e) < 0 && strcmp(e, "KSCI_NVCC_PREFIX: \"no\" is not one of on, off") == 0 &&
		     !envknob_is("KSCI_NVCC_PREFIX", "off"),
	     "envknob: a word it does not take is named (%s)", e);
	setenv("KSCI_NVCC_PREFIX", "on", 1);
	setenv("KSCI_JUDGE_SPARE", "Asked", 1);
	T_OK(envknob_check(e) < 0 && strcmp(e, "KSCI_JUDGE_SPARE: \"Asked\" is not one of auto, asked, after") == 0,
	     "envknob: words are whole and case counts (%s)", e);
	unsetenv("KSCI_JUDGE_SPARE");
	setenv("KSCI_CUDA_DEVICE", "3", 1);
	T_OK(envknob_check(e) == 0 && envknob_device() == 3, "envknob: a device index");
	setenv("KSCI_CUDA_DEVICE", "gpu1", 1);
	T_OK(envknob_check(e) < 0 && strcmp(e, "KSCI_CUDA_DEVICE: \"gpu1\" is not an integer") == 0 &&
		     envknob_device() == 0,
	     "envknob: a device that is not a number is named, not device 0 (%s)", e);
	setenv("KSCI_CUDA_DEVICE", "1x", 1);
	T_OK(envknob_check(e) < 0, "envknob: \"1x\" is not device 1 (%s)", e);
	setenv("KSCI_CUDA_DEVICE", "-1", 1);
	T_OK(envknob_check(e) < 0 && strcmp(e, "KSCI_CUDA_DEVICE: -1 is outside 0..1023") == 0,
	     "envknob: a device below 0 (%s)", e);
	unsetenv("KSCI_CUDA_DEVICE");
	unsetenv("KSCI_NVCC_PREFIX");
	T_OK(envknob_name(0, w, sizeof w) && strcmp(w, "parallel, serial") == 0, "envknob: the table's words (%s)", w);
	int n = 0;
	while (envknob_name(n, w, sizeof w))
		n++;
	T_OK(n == 6 && envknob_name(n - 1, w, sizeof w) && strcmp(w, "a device index 0..1023") == 0,
	     "envknob: six switches, the device last (%d; %s)", n, w);
}

int main(void)
{
	test_strbuf();
	test_status();
	test_sha256();
	test_expr();
	test_dtype();
	test_stats();
	test_rec();
	test_ndjson();
	test_nd_wait_fd();
	test_opt();
	test_envknob();
	return T_DONE();
}
