#!/usr/bin/env bash
# t20-kselect.sh — kselect through real pipes on small hand-made archives.
. "$(dirname "$0")/lib.sh"

# rec ID SPEEDUP [STATUS [GEN [ISLAND [PARENT [KNOB [TASK]]]]]]: one candidate line.
rec() {
	jq -cn --arg id "$1" --argjson sp "$2" --arg st "${3:-timed}" --argjson g "${4:-0}" \
		--arg isl "${5:-}" --arg par "${6:-}" --arg knob "${7:-}" --arg task "${8:-mm}" '
		{id: $id, task: $task, backend: "c", generation: $g,
		 parents: (if $par == "" then [] else [$par] end),
		 source: ("#define TILE " + ($sp * 10 | floor | tostring) + " // ktune: 8 16\nvoid solve(void) {}\n"),
		 origin: (if $knob == "" then {generator: "seed"} else {generator: "mutate", changes: [{knob: $knob, from: "8", to: "16", line: 1}]} end),
		 status: $st}
		+ (if $isl == "" then {} else {island: ($isl | tonumber)} end)
		+ (if $st == "timed" then {time: {ok: true, status: "ok", speedup_vs_baseline: $sp,
		     sizes: [{size: {n: 64}, candidate: {median_us: (100 / $sp)}, speedup_vs_baseline: $sp}]}}
		   else {verify: {ok: false, status: $st}} end)'
}
ids() { jq -r '.parents[0]' | tr '\n' ' ' | sed 's/ $//'; }

# --- usage and exit codes ---
ok "--help exits 0 and shows the synopsis" sh -c 'kselect --help | grep -q "^usage: kselect"'
kselect --bogus </dev/null >/dev/null 2>&1
expect_eq "an unknown option is a usage error (2)" 2 "$?"
kselect --seed -3 </dev/null >/dev/null 2>&1
expect_eq "--seed is range-checked" 2 "$?"
ok "--help lists every strategy the docs describe" sh -c 'kselect --help | tr -s " \n" "  " | grep -q "best, tournament (default), islands, map-elites, bandit, llm"'

# --- seed request ---
: >"$T/empty.ndjson"
kselect --task mm --seed 1 "$T/empty.ndjson" >"$T/out" 2>"$T/err"
expect_eq "empty archive: exit 0" 0 "$?"
expect_eq "empty archive: one seed request" '1 "seed" null 0 [] "selected" "mm"' \
	"$(jq -sc '[length, .[0].strategy.name, .[0].base, .[0].generation, .[0].parents, .[0].status, .[0].task]' "$T/out" | jq -r 'map(tojson)|join(" ")')"
kselect --task mm </dev/null >"$T/out" 2>/dev/null
expect_eq "empty stdin: seed request" seed "$(jq -r .strategy.name "$T/out")"
kselect </dev/null >/dev/null 2>"$T/err"
expect_eq "no --task and nothing to take it from: usage error" 2 "$?"

# --- best-k ---
{
	rec a 1.5 timed 0
	rec b 3.0 timed 1 "" a
	rec c 2.0 timed 1 "" a
	rec d 9.0 wrong 2 "" b
	rec e 0 compile_error 2 "" b
} >"$T/a.ndjson"
expect_eq "best-k -k 1 picks the best timed candidate" "b" "$(kselect -s best -k 1 -n 1 --seed 1 "$T/a.ndjson" | ids)"
expect_eq "best-k -k 2 cycles over the two best" "b c b" "$(kselect -s best -k 2 -n 3 --seed 1 "$T/a.ndjson" | ids)"
expect_eq "a failed candidate with a great time is never a parent" "b c a" \
	"$(kselect -s best -k 5 -n 3 --seed 1 "$T/a.ndjson" | ids)"
kselect -s best -k 1 -n 1 --seed 1 "$T/a.ndjson" >"$T/out"
expect_eq "generation is the archive's max + 1" 3 "$(jq .generation "$T/out")"
expect_eq "base is the whole parent record" "$(sed -n 2p "$T/a.ndjson" | jq -cS .)" "$(jq -cS .base "$T/out")"
expect_eq "parents: base first, then the inspiration" '["b","c"] c' "$(jq -c .parents "$T/out") $(jq -r '.inspirations[0].id' "$T/out")"
expect_eq "failed candidates are counted in strategy.population" '{"failed":2,"records":5,"timed":3}' \
	"$(jq -cS .strategy.population "$T/out")"
expect_eq "--generation overrides" 7 "$(kselect -s best -n 1 --generation 7 --seed 1 "$T/a.ndjson" | jq .generation)"
expect_eq "child indexes 0..P-1" "0 1 2" "$(kselect -n 3 --seed 1 "$T/a.ndjson" | jq .child | tr '\n' ' ' | sed 's/ $//')"

# --- tournament: reproducible under --seed ---
for i in $(seq 1 30); do rec "t$i" "$(awk -v i="$i" 'BEGIN{print 1 + (i * 7 % 30) / 10}')" timed 1; done >"$T/t.ndjson"
kselect -s tournament -n 8 --seed 42 "$T/t.ndjson" >"$T/o1"
kselect -s tournament -n 8 --seed 42 "$T/t.ndjson" >"$T/o2"
kselect -s tournament -n 8 --seed 43 "$T/t.ndjson" >"$T/o3"
ok "tournament: same seed, same output" cmp -s "$T/o1" "$T/o2"
not_ok_is "tournament: another seed, other output" cmp -s "$T/o1" "$T/o3"
expect_eq "strategy.run_seed records the seed" 42 "$(jq -s '.[0].strategy.run_seed' "$T/o1")"
expect_eq "children get distinct strategy.seed values" 8 "$(jq .strategy.seed "$T/o1" | sort -u | wc -l | tr -d ' ')"

# --- no timed candidate: error, nothing emitted ---
{ rec x 0 compile_error 0; rec y 0 crashed 1; } >"$T/f.ndjson"
kselect --seed 1 "$T/f.ndjson" >"$T/out" 2>"$T/err"
expect_eq "records but none timed: exit 1" 1 "$?"
expect_eq "records but none timed: nothing on stdout" "" "$(cat "$T/out")"
ok "records but none timed: says so" grep -q "no timed candidate of task mm" "$T/err"

# --- bad lines ---
{ rec a 1.5; echo 'this is not json'; rec b 3.0; echo '{"id": "z", "task":'; } >"$T/bad.ndjson"
kselect -s best -k 1 -n 1 --seed 1 "$T/bad.ndjson" >"$T/out" 2>"$T/err"
expect_eq "bad line: exit 1" 1 "$?"
ok "bad line: reported with file and line number" grep -q "kselect: $T/bad.ndjson: line 2: not JSON" "$T/err"
ok "bad line: the truncated line 4 too" grep -q "line 4: not JSON" "$T/err"
expect_eq "bad line: selection still happens from the good lines" b "$(ids <"$T/out")"
# A line whose structure scans but whose string escape is bad is caught when it is chosen.
{ rec a 1.5; rec b 3.0 | sed 's/"#define/"\\q#define/'; } >"$T/esc.ndjson"
kselect -s best -k 1 -n 1 --seed 1 "$T/esc.ndjson" >"$T/out" 2>"$T/err"
expect_eq "bad escape in a chosen parent: reported, next best chosen, exit 1" "1 a" "$? $(ids <"$T/out")"
ok "bad escape: line number given" grep -q "esc.ndjson: line 2: not JSON" "$T/err"

# --- gzip, plain, several members, stdin pipe ---
gzip -c "$T/a.ndjson" >"$T/a.ndjson.gz"
kselect -n 4 --seed 5 "$T/a.ndjson" >"$T/plain.out"
kselect -n 4 --seed 5 "$T/a.ndjson.gz" >"$T/gz.out"
ok "gzip and plain archives give the same requests" cmp -s "$T/plain.out" "$T/gz.out"
head -n 2 "$T/a.ndjson" | gzip -c >"$T/m.gz"
tail -n +3 "$T/a.ndjson" | gzip -c >>"$T/m.gz"
kselect -n 4 --seed 5 "$T/m.gz" >"$T/m.out"
ok "appended gzip members read as one archive" cmp -s "$T/plain.out" "$T/m.out"
# shellcheck disable=SC2002 # a pipe, not a file, is the point
cat "$T/a.ndjson.gz" | kselect -n 4 --seed 5 >"$T/pipe.out"
ok "gzip through a pipe (spooled) gives the same requests" cmp -s "$T/plain.out" "$T/pipe.out"
kselect -n 4 --seed 5 <"$T/a.ndjson" >"$T/stdin.out"
ok "plain archive on stdin" cmp -s "$T/plain.out" "$T/stdin.out"

# Regression: a line longer than the 4 MB read chunk, and a base found after
# a restart point in the middle of a gzip member (re-read by offset).
{
	awk 'BEGIN { for (i = 0; i < 3000; i++) { s = ""; for (j = 0; j < 30; j++) s = s sprintf("%08x", (i * 7919 + j * 104729) % 4294967291); printf "{\"id\":\"f%d\",\"task\":\"mm\",\"backend\":\"c\",\"generation\":1,\"status\":\"timed\",\"source\":\"%s\",\"time\":{\"speedup_vs_baseline\":%.4f}}\n", i, s, 1 + (i % 997) / 1000 } }'
	printf '{"id":"big","task":"mm","backend":"c","generation":2,"status":"timed","source":"%s","time":{"speedup_vs_baseline":3}}\n' "$(head -c 5000000 /dev/zero | tr '\0' x)"
	echo '{"id":"last","task":"mm","backend":"c","generation":2,"status":"timed","source":"s","time":{"speedup_vs_baseline":7}}'
} >"$T/long.ndjson"
gzip -c "$T/long.ndjson" >"$T/long.ndjson.gz"
expect_eq "long line and late base: the right records" "last big f996" \
	"$(kselect -s best -k 3 -n 3 --seed 1 "$T/long.ndjson.gz" | ids)"
expect_eq "the 5 MB base comes back whole" 5000000 \
	"$(kselect -s best -k 3 -n 2 --seed 1 "$T/long.ndjson.gz" | sed -n 2p | jq '.base.source | length')"
expect_eq "a base re-read after a mid-member restart point is byte-exact" "$(grep '"id":"f996"' "$T/long.ndjson" | jq -cS .)" \
	"$(kselect -s best -k 3 -n 3 --seed 1 "$T/long.ndjson.gz" | sed -n 3p | jq -cS .base)"

# --- task and back end ---
{ rec a 1.5; rec q 2.0 timed 0 "" "" "" other; } >"$T/two.ndjson"
kselect --seed 1 "$T/two.ndjson" >/dev/null 2>"$T/err"
expect_eq "two tasks and no --task: usage error" 2 "$?"
ok "two tasks: names them" grep -q "several tasks (mm, other)" "$T/err"
expect_eq "--task chooses" q "$(kselect --task other -n 1 --seed 1 "$T/two.ndjson" | ids)"
expect_eq "--backend cuda on a c-only archive: seed request" seed \
	"$(kselect --task mm --backend cuda --seed 1 "$T/two.ndjson" | jq -r .strategy.name)"

# --- islands ---
{
	rec a 1.0 timed 0 0
	rec b 2.0 timed 1 0 a
	rec c 1.5 timed 1 1 a
	rec d 0.5 timed 1 1 a
} >"$T/isl.ndjson"
kselect -s islands --islands 2 --migrate-every 2 -n 4 --seed 3 "$T/isl.ndjson" >"$T/out"
expect_eq "migration at the interval: island 0 gets island 1's best, island 1 gets island 0's best" "0:c 1:b" \
	"$(head -n 2 "$T/out" | jq -r '"\(.island):\(.parents[0])"' | tr '\n' ' ' | sed 's/ $//')"
expect_eq "migration is recorded in the strategy" '{"from":1,"id":"c","to":0}' "$(head -n 1 "$T/out" | jq -cS .strategy.migration)"
expect_eq "the island's other children get the migrant as first inspiration" "0:c 1:b" \
	"$(tail -n 2 "$T/out" | jq -r '"\(.island):\(.parents[1])"' | tr '\n' ' ' | sed 's/ $//')"
kselect -s islands --islands 2 --migrate-every 2 --generation 3 --tournament-size 1 -n 8 --seed 3 "$T/isl.ndjson" >"$T/out"
expect_eq "off the interval a child stays on its parent's island" "0:a 0:b 1:c 1:d" \
	"$(jq -r '"\(.island):\(.parents[0])"' "$T/out" | sort -u | tr '\n' ' ' | sed 's/ $//')"
expect_eq "off the interval: no migration field" "null" "$(jq -c .strategy.migration "$T/out" | sort -u)"
{ rec s 1.0 timed 0; } >"$T/seedonly.ndjson"
expect_eq "candidates of no island stock every island" "0:s 1:s 2:s" \
	"$(kselect -s islands --islands 3 -n 3 --seed 1 "$T/seedonly.ndjson" | jq -r '"\(.island):\(.parents[0])"' | tr '\n' ' ' | sed 's/ $//')"

# --- MAP-Elites ---
{
	rec x 1.0 timed 1 # TILE 10
	rec y 1.05 timed 1 # TILE 10, better: replaces x
	rec z 1.05 timed 2 # TILE 10, equal: does not replace y
	rec v 1.01 timed 2 # TILE 10, worse
	rec w 9.5 timed 2 # TILE 95: its own cell
} >"$T/map.ndjson"
kselect -s map-elites --features knob.TILE:2:0:100 -n 30 --seed 9 "$T/map.ndjson" >"$T/out"
expect_eq "map-elites: one elite per cell; replaced only by a strictly better one" "w y" \
	"$(jq -r '.parents[0]' "$T/out" | sort -u | tr '\n' ' ' | sed 's/ $//')"
expect_eq "map-elites: cells reported" '2 [[0],[1]]' \
	"$(jq -s -c '[.[0].strategy.cells, ([.[].strategy.cell] | unique)] | "\(.[0]) \(.[1])"' -r "$T/out")"
kselect -s map-elites -n 1 --seed 9 "$T/map.ndjson" >/dev/null 2>"$T/err"
expect_eq "map-elites without --features: usage error" 2 "$?"
kselect -s map-elites --features knob.TILE:0 -n 1 "$T/map.ndjson" >/dev/null 2>&1
expect_eq "map-elites: bins are range-checked" 2 "$?"
expect_eq "map-elites: a missing field is its own (null) cell" '[null]' \
	"$(kselect -s map-elites --features compile.resources.max_registers:4 -n 1 --seed 1 "$T/map.ndjson" | jq -c .strategy.cell)"

# --- bandit ---
{
	rec p 1.0 timed 0
	rec t1 1.5 timed 1 "" p TILE
	rec t2 1.4 timed 1 "" p TILE
	rec u1 0.8 timed 1 "" p UNROLL
	rec u2 0 crashed 1 "" p UNROLL
} >"$T/bandit.ndjson"
kselect -s bandit -n 1 --seed 1 "$T/bandit.ndjson" >"$T/out"
expect_eq "bandit favours the arm with the higher reward" "knob:TILE TILE" "$(jq -r '"\(.strategy.arm) \(.strategy.knob)"' "$T/out")"
expect_eq "bandit: pulls and mean reward of the arm" "2 0.45" "$(jq -r '"\(.strategy.pulls) \(.strategy.mean_reward * 100 | round / 100)"' "$T/out")"
expect_eq "bandit: an arm never tried (--arms) goes first" "knob:VEC" \
	"$(kselect -s bandit --arms knob:VEC -n 1 --seed 1 "$T/bandit.ndjson" | jq -r .strategy.arm)"
expect_eq "bandit: exploration spreads a generation over arms" "knob:TILE knob:UNROLL" \
	"$(kselect -s bandit --ucb-c 5 -n 4 --seed 1 "$T/bandit.ndjson" | jq -r .strategy.arm | sort -u | tr '\n' ' ' | sed 's/ $//')"

# --- llm ---
kselect -s llm "$T/a.ndjson" >/dev/null 2>"$T/err"
expect_eq "llm without a provider: usage error" 2 "$?"
ok "llm without a provider: says it needs one" grep -q "kselect: --strategy llm needs a model provider (--provider ...)" "$T/err"
kselect -s llm --provider mutate "$T/a.ndjson" >/dev/null 2>"$T/err"
ok "llm with mutate: says it needs a model" grep -q "needs a model provider.*mutate is not a model" "$T/err"

cat >"$T/model.sh" <<'SH'
cat >"$(dirname "$0")/prompt.txt"
echo 'I pick: {"base": "c", "reference": "b", "reasoning": "c is close to b and simpler"}'
SH
kselect -s llm --provider cmd --cmd "sh $T/model.sh" -n 1 --seed 1 "$T/a.ndjson" >"$T/out" 2>"$T/err"
expect_eq "llm (cmd provider): the model's base and reference become the parents" '0 ["c","b"]' "$? $(jq -c .parents "$T/out")"
expect_eq "llm: the reasoning is kept" "c is close to b and simpler" "$(jq -r .strategy.reasoning "$T/out")"
ok "llm: the prompt lists ids, parents and per-size timings" sh -c "grep -q 'id c (generation 1, parent a): no speedup over the seed recorded, 2x the baseline; the task.s seed kernel; per size: size {\"n\":64}: 50 us' '$T/prompt.txt'"
ok "llm: failed candidates are counted in the prompt" grep -q "3 timed (eligible), 2 failed" "$T/prompt.txt"
# --no-cache: the same prompt with another command would be answered from the cache (t39)
kselect -s llm --provider cmd --cmd 'echo "{\"base\": \"d\"}"' --no-cache -n 1 --seed 1 "$T/a.ndjson" >"$T/out" 2>"$T/err"
expect_eq "llm: a base that is not a timed candidate falls back to a tournament" "0 true" "$? $(jq .strategy.fallback "$T/out")"
ok "llm: the fallback says why" sh -c "jq -r .strategy.reason '$T/out' | grep -q 'the model.s base \"d\" is not a timed candidate'"
kselect -s llm --provider cmd --cmd 'exit 3' --no-cache -n 1 --seed 1 "$T/a.ndjson" >"$T/out" 2>"$T/err"
expect_eq "llm: a failing model call is exit 1 with nothing written" "1 " "$? $(cat "$T/out")"

# --- in a pipeline: stdout is NDJSON only ---
ok "every output line is a request object" sh -c "kselect -n 5 --seed 2 '$T/a.ndjson' | jq -e -s 'all(.status == \"selected\")' >/dev/null"

done_testing
