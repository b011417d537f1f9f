#!/usr/bin/env bash
# kcompile | kverify | ktime through real pipes, good and bad input.
. "$(dirname "$0")/lib.sh"

# rec TASK SOURCE-FILE [STATUS] — one generated record for a source file.
rec() {
	jq -cn --arg t "$1" --rawfile s "$2" --arg st "${3:-generated}" \
		'{task: $t, backend: "c", generation: 1, parents: [], source: $s, status: $st, extra: {keep: [1, 2]}}'
}
seed=$ROOT/data/tasks/softmax/seed.c
cat >"$T/segv.c" <<'C'
void solve(const float* x, float* y, int rows, int cols)
{
	(void)x; (void)rows; (void)cols;
	volatile float *p = 0;
	*p = y[0];
}
C
cat >"$T/loop.c" <<'C'
void solve(const float* x, float* y, int rows, int cols)
{
	(void)x; (void)y; (void)rows; (void)cols;
	for (volatile int i = 0;; i++) {}
}
C
# Correct everywhere except when cols is 33 (one of the edge test sizes).
sed 's/^void solve(const float\* x, float\* y, int rows, int cols)$/static void solve_ok(const float* x, float* y, int rows, int cols)/' \
	"$ROOT/data/tasks/softmax/baseline.c" >"$T/edge.c"
cat >>"$T/edge.c" <<'C'
void solve(const float* x, float* y, int rows, int cols)
{
	solve_ok(x, y, rows, cols);
	if (cols == 33 && rows > 0)
		y[(long)rows * cols - 1] += 0.5f;
}
C
cat >"$T/tail.c" <<'C'
#include <math.h>
void solve(const float* x, float* y, int rows, int cols)
{
	for (long r = 0; r < rows; r++) {
		float m = -INFINITY, s = 0;
		for (int c = 0; c < cols; c++) m = fmaxf(m, x[r * cols + c]);
		for (int c = 0; c < cols; c++) s += expf(x[r * cols + c] - m);
		for (int c = 0; c < (cols / 32) * 32; c++) y[r * cols + c] = expf(x[r * cols + c] - m) / s;
	}
}
C
cat >"$T/bad.c" <<'C'
void solve(const float* x, float* y, int rows, int cols) { this is not C; }
C
cat >"$T/sig.c" <<'C'
void solve(float* x, float* y, int rows) { (void)x; (void)y; (void)rows; }
C
cat >"$T/modin.c" <<'C'
#include <math.h>
void solve(const float* x, float* y, int rows, int cols)
{
	float *w = (float *)x;
	for (long i = 0; i < (long)rows * cols; i++) { y[i] = 0; }
	for (long r = 0; r < rows; r++) {
		float m = -INFINITY, s = 0;
		for (int c = 0; c < cols; c++) m = fmaxf(m, x[r * cols + c]);
		for (int c = 0; c < cols; c++) { w[r * cols + c] = expf(x[r * cols + c] - m); s += w[r * cols + c]; }
		for (int c = 0; c < cols; c++) y[r * cols + c] = w[r * cols + c] / s;
	}
}
C
{
	rec softmax "$seed"
	echo 'this line is not json'
	rec softmax "$T/segv.c"
	rec softmax "$T/loop.c"
	rec softmax "$T/edge.c"
	rec softmax "$T/tail.c"
	rec softmax "$T/bad.c"
	rec softmax "$T/sig.c"
	rec softmax "$T/modin.c"
	rec no-such-task "$seed"
	rec softmax "$seed" | jq -c 'del(.source)'
	rec softmax "$seed" compile_error
	echo '[1,2,3]'
} >"$T/in.ndjson"

kcompile <"$T/in.ndjson" >"$T/c.ndjson" 2>"$T/c.err"
expect_eq "kcompile exits 1 on bad input" 1 $?
expect_eq "kcompile keeps every record (11 of 13 lines are records)" 11 "$(wc -l <"$T/c.ndjson")"
ok "kcompile names the non-JSON line" grep -q 'line 2: not JSON' "$T/c.err"
ok "kcompile names the non-object line" grep -q 'line 13: not a JSON object' "$T/c.err"
ok "kcompile names the missing field" grep -q 'line 11: missing field "source"' "$T/c.err"
ok "kcompile names the unknown task" grep -q 'unknown task "no-such-task"' "$T/c.err"
expect_eq "statuses after kcompile" \
	"compiled compiled compiled compiled compiled compile_error compile_error compiled invalid invalid compile_error" \
	"$(jq -r .status "$T/c.ndjson" | xargs)"
ok "compile error log names the line" sh -c "jq -r 'select(.status==\"compile_error\" and .compile) | .compile.log' '$T/c.ndjson' | grep -q 'candidate.c:1'"
ok "wrong signature is a compile error mentioning solve" sh -c "sed -n 7p '$T/c.ndjson' | jq -r .compile.log | grep -q 'conflicting types for .solve.'"
ok "unknown fields pass through" sh -c "sed -n 1p '$T/c.ndjson' | jq -e '.extra.keep == [1,2]'"
ok "record already failed passes untouched" sh -c "sed -n 11p '$T/c.ndjson' | jq -e '.status == \"compile_error\" and (.compile == null)'"

kcompile <"$T/c.ndjson" >"$T/c2.ndjson" 2>/dev/null
expect_eq "kcompile on its own output changes nothing" "$(cat "$T/c.ndjson")" "$(cat "$T/c2.ndjson")"
printf '%s\n' "$(sed -n 1p "$T/in.ndjson")" | kcompile --force | jq -r .compile.cached >"$T/cached"
expect_eq "same source is served from the compile cache" true "$(cat "$T/cached")"

kverify --timeout 5 <"$T/c.ndjson" >"$T/v.ndjson" 2>"$T/v.err"
expect_eq "kverify exits 0 when every line was a record (failures are data)" 0 $?
expect_eq "kverify keeps every record" 11 "$(wc -l <"$T/v.ndjson")"
expect_eq "statuses after kverify" \
	"verified crashed timeout wrong wrong compile_error compile_error wrong invalid invalid compile_error" \
	"$(jq -r .status "$T/v.ndjson" | xargs)"
ok "segfault is reported as a signal" sh -c "sed -n 2p '$T/v.ndjson' | jq -r .verify.message | grep -q 'signal 11'"
ok "the hang was killed within the limit" sh -c "sed -n 3p '$T/v.ndjson' | jq -e '.verify.seconds < 15'"
ok "edge-size bug is found at cols=33" sh -c "sed -n 4p '$T/v.ndjson' | jq -e '.verify.mismatch.size.cols == 33 and .verify.mismatch.index == [6, 32]'"
ok "unwritten tail is found (NaN poison)" sh -c "sed -n 5p '$T/v.ndjson' | jq -e '.verify.mismatch.reason | test(\"never written\")'"
ok "modified input is found" sh -c "sed -n 8p '$T/v.ndjson' | jq -e '.verify.mismatch.reason == \"input argument was modified\"'"
ok "verify records seeds and error bounds" sh -c "sed -n 1p '$T/v.ndjson' | jq -e '(.verify.seeds | length) == 3 and .verify.max_abs_err < 1e-5 and .verify.checks == 21'"

sed -n 1p "$T/v.ndjson" | ktime --budget 0.05 --min-runs 3 >"$T/t.ndjson" 2>"$T/t.err"
expect_eq "ktime exits 0" 0 $?
ok "ktime times candidate, baseline and seed at each size" sh -c "jq -e '.status == \"timed\" and (.time.sizes | length) == 2 and (.time.sizes[0] | .candidate.n >= 3 and .baseline.n >= 3 and .seed.n >= 3 and .gbps > 0)' '$T/t.ndjson'"
ok "ktime records geometric-mean speedups" sh -c "jq -e '(.time.speedup_vs_baseline > 0) and (.time.speedup_vs_seed > 0) and .time.env.device == \"cpu\"' '$T/t.ndjson'"
# shellcheck disable=SC2016 # a jq program: its $t is jq's
ok "speedups-carry-an-interval: every speedup, per size and overall, lies inside its 95 % interval" jq -e '
	def inside(r; ci): (ci | length) == 2 and ci[0] > 0 and ci[0] <= r and r <= ci[1];
	.time as $t | ($t.sizes | all(inside(.speedup_vs_baseline; .speedup_vs_baseline_ci) and inside(.speedup_vs_seed; .speedup_vs_seed_ci)))
	and inside($t.speedup_vs_baseline; $t.speedup_vs_baseline_ci) and inside($t.speedup_vs_seed; $t.speedup_vs_seed_ci)' "$T/t.ndjson"
sed -n 1p "$T/v.ndjson" | ktime --budget 0.05 --min-runs 3 --noise 0.5 >"$T/tn.ndjson" 2>/dev/null
ok "--noise 0.5: every interval at least exp(1.96 x 0.5) wide each way" jq -e '
	.time.sizes | all(.speedup_vs_seed_ci[1] / .speedup_vs_seed >= 2.66 and .speedup_vs_seed / .speedup_vs_seed_ci[0] >= 2.66)' "$T/tn.ndjson"
# --processes: each timed role in that many processes, used in turn (one
# process carries a timing offset of its own; docs/gpu.md, A/A).
sed -n 1p "$T/v.ndjson" | ktime --budget 0.05 --min-runs 3 --processes 3 >"$T/t3.ndjson"
ok "ktime --processes 3: timed, the judge says 3 processes per timed role" \
	jq -e '.status == "timed" and (.time.log | test("children ready \\(3 processes per timed role\\)"))' "$T/t3.ndjson"
ok "ktime on c: 1 process per role by default" jq -e '.time.log | test("children ready \\(1 process per timed role\\)")' "$T/t.ndjson"
sed -n 2p "$T/v.ndjson" | ktime >"$T/t2.ndjson"
expect_eq "ktime passes a crashed record through untouched" "$(sed -n 2p "$T/v.ndjson")" "$(cat "$T/t2.ndjson")"

echo '{"status":"generated","task":"softmax"}' | kcompile --timeout 0 >/dev/null 2>&1
expect_eq "bad option value is a usage error" 2 $?
kverify --no-such-option </dev/null >/dev/null 2>&1
expect_eq "unknown option is a usage error" 2 $?
ok "--help prints usage" sh -c 'ktime --help | grep -q "^usage: ktime"'
done_testing
