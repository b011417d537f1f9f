#!/usr/bin/env bash
# t60-report.sh — kreport's numbers, checked exactly on a hand-made archive
# whose every figure was worked out by hand (docs/reports.md has the
# definitions): leaderboard, fast_p, geomean, per-generation counts, cost
# with a price table, lineage; plus the exit-code contract and records with
# missing or ill-typed fields.
# shellcheck disable=SC1091 # lib.sh sits next to this file
. "$(dirname "$0")/lib.sh"

# Archive 1 (gzip): matmul, 7 candidates over 4 generations, with a request,
# a re-timed duplicate id, a line that is not JSON (line 5) and a record
# without a task; vadd with nothing timed.
cat >"$T/a.ndjson" <<'EOF'
{"status":"selected","task":"matmul","generation":1,"parents":["aaaaaaaaaaaa0000"],"base":null}
{"id":"aaaaaaaaaaaa0000","task":"matmul","backend":"c","generation":0,"parents":[],"origin":{"generator":"seed"},"status":"timed","compile":{"ok":true,"status":"ok","seconds":1},"verify":{"ok":true,"status":"ok","seconds":2},"time":{"ok":true,"status":"ok","seconds":3,"speedup_vs_baseline":1.25,"speedup_vs_seed":1.0,"env":{"peak_gbps":1000,"peak_gflops":10000},"sizes":[{"gbps":100,"gflops":2000},{"gbps":300,"gflops":1000}]}}
{"id":"aaaaaaaaaaaa0001","task":"matmul","backend":"c","generation":1,"parents":["aaaaaaaaaaaa0000"],"origin":{"generator":"mutate","changes":[{"knob":"TILE","from":"32","to":"64","line":7}]},"status":"verified","compile":{"ok":true,"status":"ok","seconds":1},"verify":{"ok":true,"status":"ok","seconds":1}}
{"id":"aaaaaaaaaaaa0002","task":"matmul","backend":"c","generation":1,"parents":["aaaaaaaaaaaa0000"],"origin":{"generator":"mutate","changes":[{"knob":"TILE","from":"32","to":"7"}]},"status":"compile_error","compile":{"ok":false,"status":"error","seconds":0.5}}
this is not json
{"id":"aaaaaaaaaaaa0001","task":"matmul","backend":"c","generation":1,"parents":["aaaaaaaaaaaa0000"],"origin":{"generator":"mutate","changes":[{"knob":"TILE","from":"32","to":"64","line":7}]},"status":"timed","compile":{"ok":true,"status":"ok","seconds":1},"verify":{"ok":true,"status":"ok","seconds":1},"time":{"ok":true,"status":"ok","seconds":2,"speedup_vs_baseline":2.5,"speedup_vs_seed":2.0}}
{"id":"aaaaaaaaaaaa0003","task":"matmul","backend":"c","generation":2,"parents":["aaaaaaaaaaaa0001","aaaaaaaaaaaa0000"],"origin":{"generator":"openai","model":"gpt-test","hypothesis":"stage tiles in shared memory\nto cut global loads","plan":"ignored when there is a hypothesis","usage":{"tokens_in":1000,"tokens_out":500}},"status":"timed","compile":{"ok":true,"status":"ok","seconds":1},"verify":{"ok":true,"status":"ok","seconds":1},"time":{"ok":true,"status":"ok","seconds":1,"speedup_vs_baseline":3.75,"speedup_vs_seed":3.0,"env":{"peak_gbps":1000},"sizes":[{"gbps":450,"gflops":9000}]}}
{"id":"aaaaaaaaaaaa0004","task":"matmul","backend":"c","generation":2,"parents":["aaaaaaaaaaaa0001"],"origin":{"generator":"anthropic","llm":{"model":"claude-test","usage":{"input_tokens":2000,"output_tokens":1000,"cost":0.05}},"plan":["unroll k","vectorize"]},"status":"wrong","compile":{"ok":true,"status":"ok","seconds":1},"verify":{"ok":false,"status":"wrong","seconds":1}}
{"id":"aaaaaaaaaaaa0005","task":"matmul","backend":"c","generation":3,"parents":["aaaaaaaaaaaa0003"],"origin":{"generator":"openai","model":"gpt-test","usage":{"tokens_in":1000}},"status":"crashed","verify":{"ok":false,"status":"crashed","seconds":0.5}}
{"id":"aaaaaaaaaaaa0006","task":"matmul","backend":"c","generation":3,"parents":["aaaaaaaaaaaa0003"],"origin":{"generator":"cmd","model":"unknown-model","usage":{"prompt_tokens":100,"completion_tokens":100}},"status":"timeout","verify":{"ok":false,"status":"timeout","seconds":10}}
{"id":"cccccccccccc0000","task":"vadd","backend":"c","generation":0,"parents":[],"origin":{"generator":"seed"},"status":"compile_error","compile":{"ok":false,"status":"error","seconds":1.5}}
{"id":"cccccccccccc0001","task":"vadd","backend":"c","generation":1,"parents":["cccccccccccc0000"],"origin":{"generator":"mutate"},"status":"crashed"}
{"id":"cccccccccccc0002","task":"vadd","backend":"cuda","generation":1,"parents":["cccccccccccc0000"],"origin":{"generator":"mutate"},"status":"unsupported"}
{"id":"ffffffffffff0000","status":"timed","time":{"speedup_vs_baseline":9.0}}
EOF
gzip "$T/a.ndjson"
# Archive 2 (plain): softmax; one record without id, one without generation
# and speedup.
cat >"$T/b.ndjson" <<'EOF'
{"id":"bbbbbbbbbbbb0000","task":"softmax","backend":"c","generation":0,"parents":[],"origin":{"generator":"seed"},"status":"timed","time":{"seconds":2,"speedup_vs_baseline":0.8,"speedup_vs_seed":1.0}}
{"id":"bbbbbbbbbbbb0001","task":"softmax","backend":"c","generation":1,"parents":["bbbbbbbbbbbb0000"],"origin":{"generator":"mutate","changes":[{"knob":"BLOCK","from":"128","to":"256"},{"knob":"UNROLL","from":"1","to":"4"}]},"status":"timed","time":{"seconds":3,"speedup_vs_baseline":1.2,"speedup_vs_seed":1.5,"sizes":[{"gbps":50}]}}
{"task":"softmax","backend":"c","generation":1,"parents":["bbbbbbbbbbbb0000"],"origin":{"generator":"replay"},"status":"generated"}
{"id":"bbbbbbbbbbbb0003","task":"softmax","backend":"c","parents":["bbbbbbbbbbbb0001"],"origin":{"generator":"mutate"},"status":"timed","time":{"seconds":0}}
EOF
printf '# model  usd/Mtok in  usd/Mtok out\ngpt-test 2 8  # dollars per million\n' >"$T/prices"

cat >"$T/expect" <<'EOF'
ksci report
===========
records: 17 read, 1 requests skipped, 1 duplicate ids replaced, 15 candidates
missing: id 1, task 1, generation 2, status 0, speedup of a timed record 1

Across tasks
------------
tasks                      3
with a correct candidate   2
fast_0                     0.667 (2/3)
fast_1                     0.667 (2/3)
fast_1.5                   0.333 (1/3)
fast_2                     0.333 (1/3)
geomean speedup            2.12x (over 2 tasks)

Leaderboard
-----------
task     vs_baseline  vs_seed   %peak   gen  id                candidates
matmul   3.75x        3.00x     45.0%   2    aaaaaaaaaaaa0003  7
softmax  1.20x        1.50x     n/a     1    bbbbbbbbbbbb0001  4
vadd     n/a          n/a       n/a     -    -                 3

Cost (all tasks)
----------------
                total         per improvement
tokens in       4100          1367
tokens out      1600          533
money (USD)     0.0580        0.0193
GPU seconds     32.5          10.8
improvements    3
model records   3 priced, 1 with tokens but no price

Task matmul
-----------
winner: aaaaaaaaaaaa0003, generation 2: 3.75x vs baseline, 3.00x vs seed, 45.0% of peak
lineage, root first (effect = speedup / parent's speedup):
  gen  id                generator   speedup  effect  change
  0    aaaaaaaaaaaa0000  seed        1.25x    -       seed kernel
  1    aaaaaaaaaaaa0001  mutate      2.50x    x2.00   TILE 32->64
  2    aaaaaaaaaaaa0003  openai      3.75x    x1.50   stage tiles in shared memory to cut global loads
by generation:
  gen  total  compile_error  wrong  crashed  timeout  timed  slow  other  best_so_far
  0    1      0              0      0        0        1      0     0      1.25x
  1    2      1              0      0        0        1      0     0      2.50x
  2    2      0              1      0        0        1      0     0      3.75x
  3    2      0              0      1        1        0      0     0      3.75x
cost:
                  total         per improvement
  tokens in       4100          2050
  tokens out      1600          800
  money (USD)     0.0580        0.0290
  GPU seconds     26.0          13.0
  improvements    2
  model records   3 priced, 1 with tokens but no price

Task softmax
------------
winner: bbbbbbbbbbbb0001, generation 1: 1.20x vs baseline, 1.50x vs seed, n/a of peak
lineage, root first (effect = speedup / parent's speedup):
  gen  id                generator   speedup  effect  change
  0    bbbbbbbbbbbb0000  seed        0.80x    -       seed kernel
  1    bbbbbbbbbbbb0001  mutate      1.20x    x1.50   BLOCK 128->256, UNROLL 1->4
by generation:
  gen  total  compile_error  wrong  crashed  timeout  timed  slow  other  best_so_far
  ?    1      0              0      0        0        1      0     0      n/a
  0    1      0              0      0        0        1      0     0      0.80x
  1    2      0              0      0        0        1      0     1      1.20x
cost:
                  total         per improvement
  tokens in       0             0
  tokens out      0             0
  money (USD)     n/a           n/a
  GPU seconds     5.0           5.0
  improvements    1
  model records   0 priced, 0 with tokens but no price

Task vadd
---------
winner: none (no candidate was timed)
by generation:
  gen  total  compile_error  wrong  crashed  timeout  timed  slow  other  best_so_far
  0    1      1              0      0        0        0      0     0      n/a
  1    2      0              0      1        0        0      0     1      n/a
cost:
                  total         per improvement
  tokens in       0             n/a
  tokens out      0             n/a
  money (USD)     n/a           n/a
  GPU seconds     1.5           n/a
  improvements    0
  model records   0 priced, 0 with tokens but no price
EOF

rc=0
kreport --prices "$T/prices" "$T/a.ndjson.gz" "$T/b.ndjson" >"$T/actual" 2>"$T/err" || rc=$?
if diff -u "$T/expect" "$T/actual" >"$T/diff"; then d=0; else d=1; fi
_report "$d" "text report matches the hand-computed numbers exactly" "$(cat "$T/diff")"
expect_eq "a bad line means exit 1" 1 "$rc"
expect_eq "the bad line is reported with its number" \
	"kreport: $T/a.ndjson.gz: line 5: not JSON: '[' or '{' expected near 'this' (column 4); line skipped" "$(cat "$T/err")"

# Same archives from stdin, one after the other: same numbers.
rc=0
{ zcat "$T/a.ndjson.gz"; cat "$T/b.ndjson"; } | kreport --prices "$T/prices" >"$T/stdin" 2>/dev/null || rc=$?
ok "stdin reads like files" cmp "$T/actual" "$T/stdin"
expect_eq "stdin with a bad line: exit 1" 1 "$rc"

# --text with --html writes both; the text is the same.
ok "--text --html" kreport --prices "$T/prices" --text --html "$T/r.html" "$T/b.ndjson"
ok "html written" test -s "$T/r.html"

# Without a price table only the record's own cost counts.
kreport "$T/a.ndjson.gz" "$T/b.ndjson" 2>/dev/null | grep '^money' >"$T/money"
expect_eq "no price table: only origin.usage.cost" "money (USD)     0.0500        0.0167" "$(cat "$T/money")"

# "*" prices everything else.
printf 'gpt-test 2 8\n* 1 1\n' >"$T/prices2"
kreport --prices "$T/prices2" "$T/a.ndjson.gz" 2>/dev/null | grep -E '^(money|model records)' >"$T/money2"
expect_eq "'*' line prices the rest" "money (USD)     0.0582        0.0291
model records   4 priced, 0 with tokens but no price" "$(cat "$T/money2")"

# --peak-gbps overrides time.env: softmax's 50 GB/s of 100 is 50%, matmul's 450 GB/s 450%.
kreport --peak-gbps 100 "$T/a.ndjson.gz" "$T/b.ndjson" 2>/dev/null | sed -n '/^Leaderboard/,/^vadd/p' | awk 'NR>3{print $1, $4}' >"$T/peak"
expect_eq "--peak-gbps overrides time.env" "matmul 450.0%
softmax 50.0%
vadd n/a" "$(cat "$T/peak")"

# A clean archive exits 0.
ok "clean archive: exit 0" kreport "$T/b.ndjson"

# Usage and fatal errors.
rc=0; kreport --peak-gbps fast "$T/b.ndjson" >/dev/null 2>&1 || rc=$?
expect_eq "bad --peak-gbps: exit 2" 2 "$rc"
rc=0; kreport --bogus >/dev/null 2>&1 || rc=$?
expect_eq "unknown option: exit 2" 2 "$rc"
printf 'gpt-test two 8\n' >"$T/badprices"
rc=0; kreport --prices "$T/badprices" "$T/b.ndjson" >/dev/null 2>"$T/err" || rc=$?
expect_eq "bad price table: exit 2" 2 "$rc"
ok "bad price table names file and line" grep -q "badprices: line 1:" "$T/err"
rc=0; kreport "$T/no-such-archive" >"$T/out" 2>/dev/null || rc=$?
expect_eq "unreadable archive: exit 3" 3 "$rc"
ok "--help exits 0 with the synopsis" sh -c 'kreport --help | grep -q "^usage: kreport"'

# Records missing fields, or with fields of the wrong type, are counted, never fatal.
cat >"$T/odd.ndjson" <<'EOF'
{}
{"status":5,"task":7,"generation":"x","parents":"no","origin":[],"time":{"sizes":"no","speedup_vs_baseline":"fast"}}
{"id":"d1","task":"t","generation":0,"status":"timed","parents":[1,null],"time":{"speedup_vs_baseline":-1,"sizes":[1,{"gbps":"x"}],"env":{"peak_gbps":0}}}
{"id":"d2","task":"t","generation":1,"status":"timed","parents":["d2"],"origin":{"generator":"mutate","changes":[{},{"knob":1}]},"time":{"speedup_vs_baseline":2}}
{"id":"d3","task":"t","generation":2,"status":"timed","parents":["zz"],"origin":{"usage":{"tokens_in":"many","cost":"free"}},"time":{"speedup_vs_baseline":3}}
EOF
rc=0
kreport "$T/odd.ndjson" >"$T/odd.out" 2>"$T/odd.err" || rc=$?
expect_eq "odd records: exit 0, nothing on stderr" "0:" "$rc:$(cat "$T/odd.err")"
ok "odd records are counted as missing" grep -qx "missing: id 2, task 2, generation 2, status 2, speedup of a timed record 0" "$T/odd.out"
ok "a parent not in the archive is shown" grep -q "zz                (parent not in the archive)" "$T/odd.out"
ok "a negative speedup never wins" grep -qx "  0    1      0              0      0        0        1      0     0      n/a" "$T/odd.out"
printf '%s\n' '{"id":"d2","task":"t","generation":1,"status":"timed","parents":["d2"],"time":{"speedup_vs_baseline":2}}' >"$T/loop.ndjson"
ok "parents that loop: chain cut, said so" sh -c "kreport '$T/loop.ndjson' | grep -q 'parents loop'"

# Empty input: a report with no tasks, n/a everywhere.
rc=0
kreport </dev/null >"$T/empty" || rc=$?
expect_eq "empty archive: exit 0" 0 "$rc"
ok "empty archive: fast_p n/a" grep -qx "fast_1                     n/a (0/0)" "$T/empty"

# kreport-lumped-slow-into-other: a child stopped early as far slower than
# the best (ktime --stop-slower, status slow) has its own column.
{
	echo '{"id":"s0","task":"t","generation":0,"status":"timed","parents":[],"time":{"speedup_vs_baseline":1}}'
	echo '{"id":"s1","task":"t","generation":1,"status":"slow","parents":["s0"]}'
	echo '{"id":"s2","task":"t","generation":1,"status":"slow","parents":["s0"]}'
	echo '{"id":"s3","task":"t","generation":1,"status":"gen_error","parents":["s0"]}'
} >"$T/slow.ndjson"
kreport "$T/slow.ndjson" >"$T/slow.out" 2>&1
ok "slow children counted as slow, not as other (2 slow, 1 other)" \
	grep -qx "  1    3      0              0      0        0        0      2     1      1.00x" "$T/slow.out"
done_testing
