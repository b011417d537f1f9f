#!/usr/bin/env bash
# t21-kselect-summary.sh — kselect --summary and the pipelines' last_generation
# and summary built on it (pipelines/evolve-lib.sh), against the jq they replace.
. "$(dirname "$0")/lib.sh"

# rec ID GEN STATUS [SPEEDUP [VS_SEED [TASK]]]: one record line.
rec() {
	jq -cn --arg id "$1" --argjson g "$2" --arg st "$3" --arg sp "${4:-}" --arg ss "${5:-}" --arg task "${6:-mm}" '
		{id: $id, task: $task, backend: "c", generation: $g, status: $st, source: "int x;\n"}
		+ (if $sp == "" then {} else {time: ({speedup_vs_baseline: ($sp | tonumber)}
		     + (if $ss == "" then {} else {speedup_vs_seed: ($ss | tonumber)} end))} end)'
}
# The jq that evolve-lib.sh's summary used to run over the whole archive.
jq_summary() { # archive generation
	gzip -dc "$1" | jq -rs --arg t mm --arg b c --argjson g "$2" -f "$ROOT/bench/kselect/summary-before.jq"
}
# evolve-lib.sh's functions, as evolve.sh calls them.
lib() { # archive function args...
	bash -c 'set -euo pipefail; . "$ROOT/pipelines/evolve-lib.sh"; archive=$1 task=mm backend=c; shift; "$@"' lib "$@"
}

{
	rec s 0 timed 1 1
	rec a 1 timed 1.23456 0.98765
	rec b 1 wrong
	rec c 2 compile_error
	rec d 2 timed 2.5
	rec e 2 timed 2.5 1.7
	rec f 2 crashed
	rec q 9 timed 99 9 other
} >"$T/a.ndjson"
head -n 3 "$T/a.ndjson" | gzip -c >"$T/a.gz"
tail -n +4 "$T/a.ndjson" | gzip -c >>"$T/a.gz"

kselect --summary --task mm "$T/a.gz" >"$T/out" 2>"$T/err"
expect_eq "--summary: exit 0, one line" "0 1" "$? $(wc -l <"$T/out" | tr -d ' ')"
expect_eq "--summary: the object" \
	'{"backend":"c","best":{"generation":2,"id":"e","speedup_vs_baseline":2.5,"speedup_vs_seed":1.7},"best_sizes":{},"generation":2,"last_generation":2,"records":7,"statuses":{"compile_error":1,"crashed":1,"timed":2},"task":"mm"}' \
	"$(jq -cS . "$T/out")"
expect_eq "--summary --generation G: that generation's statuses" '1 {"timed":1,"wrong":1}' \
	"$(kselect --summary --task mm --generation 1 "$T/a.gz" | jq -c '"\(.generation) \(.statuses | tojson)"' -r)"
expect_eq "--summary of a plain archive equals the gzip one" "$(cat "$T/out")" "$(kselect --summary --task mm "$T/a.ndjson")"
expect_eq "--summary: another back end has nothing" '0 -1 null' \
	"$(kselect --summary --task mm --backend cuda "$T/a.gz" | jq -r '"\(.records) \(.last_generation) \(.best)"')"
kselect --summary "$T/a.gz" >/dev/null 2>"$T/err"
expect_eq "--summary without --task: usage error (2)" 2 "$?"
ok "--summary without --task: says so" grep -q "kselect: --summary needs --task" "$T/err"
ok "--help documents --summary" sh -c 'kselect --help | grep -q -- "--summary --task T"'

# The crown passes only when the difference exceeds the noise
# (a-gain-within-the-noise-keeps-the-crown): with intervals, a challenger
# needs its lower end above the holder's speedup.
ci() {
	jq -cn --arg id "$1" --argjson g "$2" --argjson s "$3" --argjson lo "$4" --argjson hi "$5" \
		'{id: $id, task: "mm", backend: "c", generation: $g, status: "timed",
		  time: {speedup_vs_baseline: $s, speedup_vs_seed: $s, speedup_vs_baseline_ci: [$lo, $hi]}}'
}
{ ci a 1 1.50 1.45 1.55; ci b 2 1.52 1.47 1.57; } >"$T/crown.nd"
expect_eq "a gain within the noise (1.52, interval from 1.47) keeps the crown on 1.50" a \
	"$(kselect --summary --task mm "$T/crown.nd" | jq -r .best.id)"
ci c 3 1.70 1.60 1.80 >>"$T/crown.nd"
expect_eq "a gain beyond it (interval from 1.60) takes it" c "$(kselect --summary --task mm "$T/crown.nd" | jq -r .best.id)"
jq -cn '{id: "d", task: "mm", backend: "c", generation: 4, status: "timed", time: {speedup_vs_baseline: 1.70}}' >>"$T/crown.nd"
expect_eq "a record without an interval: the old rule (a tie goes to the later)" d \
	"$(kselect --summary --task mm "$T/crown.nd" | jq -r .best.id)"

# best_sizes: per benchmark size the best speedup over the seed, from timed
# records and the sizes slow ones finished; implausible ones, other tasks and
# failed ones left out (ktime --best-sizes; the bound that stopped every child
# of an H100 run once a composition held the crown was one number for all sizes).
sz() { # id status implausible? [rows speedup]...
	local id=$1 st=$2 imp=$3
	shift 3
	local sizes="[]"
	while [ $# -ge 2 ]; do
		sizes=$(jq -c --argjson r "$1" --argjson s "$2" '. + [{size: {rows: $r, cols: 1048576}, speedup_vs_seed: $s}]' <<<"$sizes")
		shift 2
	done
	jq -cn --arg id "$id" --arg st "$st" --argjson sizes "$sizes" --argjson imp "$imp" \
		'{id: $id, task: "mm", backend: "c", generation: 1, status: $st, time: ({sizes: $sizes, speedup_vs_baseline: 1}
		  + if $imp then {implausible: {sizes: []}} else {} end)}'
}
{
	sz t1 timed false 4 1.5 64 1.0
	sz t2 timed false 4 1.2 64 3.0
	sz s1 slow false 4 2.5
	sz i1 timed true 4 99 64 99
	sz w1 wrong false 4 50 64 50
} >"$T/sizes.nd"
expect_eq "best_sizes: per size the best of timed and slow records, implausible and wrong ones left out; exact integers in the key" \
	'{"rows=4 cols=1048576":2.5,"rows=64 cols=1048576":3}' \
	"$(kselect --summary --task mm "$T/sizes.nd" | jq -cS .best_sizes)"

for g in 0 1 2 3; do
	expect_eq "summary line of generation $g is the one jq wrote" "$(jq_summary "$T/a.gz" "$g")" "$(lib "$T/a.gz" summary "$g")"
done
expect_eq "last_generation" 2 "$(lib "$T/a.gz" last_generation)"
: >"$T/empty.gz"
expect_eq "last_generation of an empty archive: -1" -1 "$(lib "$T/empty.gz" last_generation)"
rec x 0 wrong | gzip -c >"$T/none.gz"
expect_eq "summary with nothing timed yet" "$(jq_summary "$T/none.gz" 0)" "$(lib "$T/none.gz" summary 0)"

# Regression (torn last line of a gzip archive): a last member cut short made
# gzip and jq fail after printing, so last_generation printed "2" and "-1"
# and evolve.sh ran away.  Now kselect says so (exit 4, the archive damaged:
# docs/exit-codes.md; nothing written) and last_generation and summary fail
# with status 4 and print no number.
size=$(wc -c <"$T/a.gz")
head -c "$((size - 30))" "$T/a.gz" >"$T/torn.gz"
kselect --summary --task mm "$T/torn.gz" >"$T/out" 2>"$T/err"
expect_eq "torn gzip archive: --summary exits 4 and writes nothing" "4 " "$? $(cat "$T/out")"
ok "torn gzip archive: kselect names the archive, the cause and the repair" \
	grep -qE "^kselect: $T/torn.gz: damaged at byte [0-9]+ \(truncated gzip member\); repair with: karchive repair $T/torn.gz\$" "$T/err"
lib "$T/torn.gz" last_generation >"$T/out" 2>"$T/err"
expect_eq "torn gzip archive: last_generation fails with 4 and prints no number" "4 " "$? $(cat "$T/out")"
ok "torn gzip archive: last_generation says what to do" grep -qF "$T/torn.gz: damaged (a truncated or corrupt gzip member); nothing appended; repair with: karchive repair $T/torn.gz" "$T/err"
lib "$T/torn.gz" summary 1 >"$T/out" 2>"$T/err"
expect_eq "torn gzip archive: summary fails with 4" "4 " "$? $(cat "$T/out")"
{ cat "$T/a.ndjson"; printf '{"id":"z","task":"mm","backend":"c","generation":7,'; } >"$T/torn.ndjson"
kselect --summary --task mm "$T/torn.ndjson" >"$T/out" 2>"$T/err"
expect_eq "torn last line of a plain archive: exit 1, reported, the rest summed" "1 2" "$? $(jq .last_generation "$T/out")"
lib "$T/torn.ndjson" last_generation >"$T/out" 2>/dev/null
expect_eq "torn plain archive: last_generation fails with 4 and prints no number" "4 " "$? $(cat "$T/out")"

# Regression (exit code by message text): a write error is exit 3 because
# sel_run says so, and --summary's write is checked too.
if [ -w /dev/full ]; then
	kselect --task mm -n 2 --seed 1 "$T/a.gz" >/dev/full 2>"$T/err"
	expect_eq "requests to a full disk: exit 3" 3 "$?"
	ok "requests to a full disk: says write error" grep -q "kselect: write error" "$T/err"
	kselect --summary --task mm "$T/a.gz" >/dev/full 2>/dev/null
	expect_eq "--summary to a full disk: exit 3" 3 "$?"
fi
done_testing
