#!/usr/bin/env bash
# t43-race: the pipelines' race before crowning (pipelines/evolve-passes.sh,
# --race K): which children race (the K fastest timed ones whose interval
# reaches the archive's best; none held back as implausible), successive
# halving with the budget doubled each round, each racer's rounds in
# time.race and its longest timing kept, one winner; then evolve.sh with
# --race on the c back end, end to end.
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1
# shellcheck source=../../pipelines/evolve-passes.sh
. "$ROOT/pipelines/evolve-passes.sh"

# rec ID STATUS SPEEDUP [LOW HIGH]: a timed child of generation 3.
rec() {
	jq -cn --arg id "$1" --arg st "$2" --argjson s "$3" --argjson lo "${4:-null}" --argjson hi "${5:-null}" \
		'{id: $id, task: "mm", backend: "cuda", generation: 3, status: $st,
		  time: ({speedup_vs_baseline: $s} + (if $lo then {speedup_vs_baseline_ci: [$lo, $hi]} else {} end))}'
}
{
	rec a timed 2.0 1.9 2.1; rec b timed 1.9 1.8 2.0; rec c timed 1.5 1.4 1.6; rec d timed 1.3 1.25 1.35
	rec e timed 1.25 1.2 1.3; rec low timed 1.1 1.0 1.15; rec wide timed 1.1 0.9 1.3
	rec held timed 5.0 4.9 5.1 | jq -c '.time.implausible = {sizes: []}'
	rec bad wrong 0 | jq -c 'del(.time.speedup_vs_baseline)'
} >gen.nd
cp gen.nd gen0.nd

backend=cuda race="" budget=0.5 quiet=1 prog=t43 best_base=1.2
expect_eq "K: 4 on cuda by default, 0 on c, --race otherwise" "4 0 2" \
	"$(passes_race_k) $(backend=c passes_race_k) $(race=2 passes_race_k)"
expect_eq "round budgets: the generation's doubled each round (0.5: 1 2 4; c without --budget: 2)" "1 2 4 2" \
	"$(passes_race_budget 1) $(passes_race_budget 2) $(passes_race_budget 3) $(budget="" backend=c passes_race_budget 1)"
passes_race_input gen.nd in.nd 4 1.2
expect_eq "contenders: the 4 fastest reaching the best's 1.2 (not the implausible 5x, the wrong one, nor 1.1 up to 1.15)" \
	"a b c d" "$(jq -r .id in.nd | xargs)"
passes_race_input gen.nd in8.nd 8 1.2
expect_eq "with room for 8: 1.1 whose interval reaches 1.3 races, 1.1 up to 1.15 does not" "a b c d e wide" \
	"$(jq -r .id in8.nd | xargs)"
ok "each contender's round 0 is its own timing" jq -se 'map(.time.race) ==
	[{contenders: 4, rounds: [{round: 0, status: "timed", speedup_vs_baseline: 2.0, speedup_vs_baseline_ci: [1.9, 2.1]}]},
	 {contenders: 4, rounds: [{round: 0, status: "timed", speedup_vs_baseline: 1.9, speedup_vs_baseline_ci: [1.8, 2.0]}]},
	 {contenders: 4, rounds: [{round: 0, status: "timed", speedup_vs_baseline: 1.5, speedup_vs_baseline_ci: [1.4, 1.6]}]},
	 {contenders: 4, rounds: [{round: 0, status: "timed", speedup_vs_baseline: 1.3, speedup_vs_baseline_ci: [1.25, 1.35]}]}]' in.nd

# The timer: what ktime would say with the longer budgets, from a table
# (id budget -> speedup, or "wrong"); every call logged.
cat >table <<'EOF'
a 1 1.4
b 1 1.8
c 1 1.6
d 1 1.2
b 2 1.75
c 2 1.7
EOF
fake_time() {
	echo "$3 $(jq -r .id "$1" | xargs)" >>calls
	while IFS= read -r line; do
		id=$(jq -r .id <<<"$line")
		v=$(awk -v i="$id" -v b="$3" '$1 == i && $2 == b { print $3 }' table)
		if [ "$v" = wrong ]; then
			jq -c '.status = "wrong" | .time = {ok: false, status: "wrong", message: "wrong at benchmark size"}' <<<"$line"
		else
			jq -c --argjson v "$v" '.time = {ok: true, status: "timed", speedup_vs_baseline: $v,
				speedup_vs_baseline_ci: [$v - 0.01, $v + 0.01]}' <<<"$line"
		fi
	done <"$1" >"$2"
}
mkdir race
out_race=gen.nd race_dir=race passes_race 3 fake_time
expect_eq "the race: exit 0" 0 "$?"
expect_eq "rounds: 4 at budget 1, the faster 2 at budget 2, then over" "1 a b c d|2 b c" "$(paste -sd '|' calls)"
expect_eq "every record kept, in its place" "a b c d e low wide held bad" "$(jq -r .id gen.nd | xargs)"
expect_eq "each racer's longest timing kept: a 1.4, b 1.75, c 1.7, d 1.2" "1.4 1.75 1.7 1.2" \
	"$(jq -r 'select(.time.race) | .time.speedup_vs_baseline' gen.nd | xargs)"
expect_eq "one winner: b (1.9 at first, 1.8 and 1.75 with longer budgets; a fell from 2.0 to 1.4)" "b" \
	"$(jq -r 'select(.time.race.won) | .id' gen.nd | xargs)"
ok "b's rounds: 0, 1 (budget 1), 2 (budget 2)" jq -se '.[1].time.race.rounds | map([.round, .budget_s, .speedup_vs_baseline]) ==
	[[0, null, 1.9], [1, 1, 1.8], [2, 2, 1.75]]' gen.nd
ok "a: dropped after round 1, not the winner" jq -se '.[0].time.race | (.rounds | length) == 2 and .won == false' gen.nd
# shellcheck disable=SC2016 # jq's variables
ok "the others untouched (no race on e, low, wide, held, bad)" \
	jq -se --slurpfile g gen0.nd '.[4:] == $g[4:]' gen.nd

# A racer found wrong with the longer budget drops out, and is archived as wrong.
cp gen0.nd gen2.nd
rm -rf race calls && mkdir race
printf 'a 1 wrong\nb 1 1.8\nc 1 1.6\nd 1 1.2\nb 2 1.75\nc 2 1.8\n' >table
out_race=gen2.nd race_dir=race passes_race 3 fake_time
expect_eq "wrong in round 1: a is wrong now; c wins round 2 (1.8 against 1.75)" "wrong c" \
	"$(jq -r 'select(.id == "a") | .status' gen2.nd) $(jq -r 'select(.time.race.won) | .id' gen2.nd)"
# A failed timer leaves the generation as it was.
cp gen0.nd gen3.nd
rm -rf race && mkdir race
fail_time() { return 3; }
out_race=gen3.nd race_dir=race passes_race 3 fail_time
expect_eq "a failed round: status 3, the generation unchanged" "3 same" \
	"$? $(cmp -s gen0.nd gen3.nd && echo same || echo changed)"
# Off: --race 0, or the c back end by default.
cp gen0.nd gen4.nd
rm -rf race calls && mkdir race
backend=c out_race=gen4.nd race_dir=race passes_race 3 fake_time
expect_eq "c without --race: no race" "same no calls" "$(cmp -s gen0.nd gen4.nd && echo same) $([ -e calls ] && echo calls || echo no calls)"

# End to end: evolve.sh --race 3 on the c back end.
export KSCI_CACHE=$T/cache
# race-never-ran-under-load: these runs used rowsum's own seed, whose mutate
# children reach the archive's best (the seed's) only as the timing's noise
# falls; under two busy loops none did once, no race ran, and "the race is
# said on stderr" failed (a make check under load, 2026-11-27).  A rowsum
# whose seed does its sum 16 times over: of the 5 moves of its two knobs, 3
# make a child 16x less work, so any 3 children hold one that reaches the bar by
# a margin no load hides, and the race always runs.
mkdir -p tasks && cp -r "$KSCI_TASKS/rowsum" tasks/
cat >tasks/rowsum/seed.c <<'C'
/* t43's slow rowsum seed: the baseline's loop REPEAT times over (the memory
 * clobber keeps the compiler from doing it once); PAD changes nothing. */
#define REPEAT 16 // ktune: 1 16
#define PAD 0    // ktune: 0 1 2

void solve(const float* x, float* y, int rows, int cols)
{
	for (long r = 0; r < rows; r++) {
		double s = 0;
		for (int k = 0; k < REPEAT + 0 * PAD; k++) {
			__asm__ volatile("" ::: "memory");
			s = 0;
			for (long c = 0; c < cols; c++)
				s += x[r * cols + c];
		}
		y[r] = (float)s;
	}
}
C
# One small size to time (the work ratio is what matters): the slow seed
# would otherwise take minutes of the test's time.
jq '.bench = [{rows: 128, cols: 4096}]' "$KSCI_TASKS/rowsum/task.json" >tasks/rowsum/task.json
export KSCI_TASKS=$T/tasks
fast=(--budget 0.01 --ktime-opt --min-runs --ktime-opt 2 --ktime-opt --max-runs --ktime-opt 3)
evolve.sh --task rowsum --backend c --generations 1 --population 4 "${fast[@]}" --race 3 \
	--archive arc.ndjson.gz >ev.out 2>ev.err
expect_eq "evolve.sh --race 3: exit 0" 0 "$?"
gzip -dc arc.ndjson.gz >arc.nd
expect_eq "every record once, every status final" "0 0" \
	"$(jq -r .id arc.nd | sort | uniq -d | wc -l) $(jq -r 'select(.status | IN("timed", "slow", "wrong", "compile_error", "crashed", "timeout") | not) | .id' arc.nd | wc -l)"
ok "one winner in each generation that raced" jq -se '[.[] | select(.time.race)] | group_by(.generation)
	| all(map(select(.time.race.won)) | length == 1)' arc.nd
ok "each racer's rounds: 0 first, then budgets 0.02, 0.04, ... (twice the generation's 0.01)" jq -se '
	[.[] | select(.time.race) | .time.race.rounds] | length > 0 and
	all(.[0].round == 0 and (.[1:] | to_entries | all(.value.round == .key + 1 and .value.budget_s == 0.01 * pow(2; .key + 1))))' arc.nd
ok "the race is said on stderr" grep -q "generation 1: raced [0-9]* children in [0-9]* rounds" ev.err
# The same through evolve-parallel.sh, each round spread like the stages.
evolve-parallel.sh --task rowsum --backend c --generations 1 --population 3 "${fast[@]}" --race 2 --jobs 2 \
	--archive par.ndjson.gz >par.out 2>par.err
expect_eq "evolve-parallel.sh --race 2: exit 0" 0 "$?"
gzip -dc par.ndjson.gz >par.nd
ok "evolve-parallel.sh: one winner in each generation that raced, every record once" jq -se '
	([.[] | select(.time.race)] | length > 0 and (group_by(.generation) | all(map(select(.time.race.won)) | length == 1)))
	and (map(.id) | length == (unique | length))' par.nd
# race-bad-input-exit-1: a race round whose ktime reports bad input (exit 1)
# makes the run exit 1, as one in the main step does (docs/exit-codes.md);
# both pipelines exited 0. A ktime that exits 1 when it is asked to time
# again (--force: the race's rounds) stands for the tool.
bad_input_tools wrap ktime --force
KSCIBIN=$PWD/wrap evolve.sh --task rowsum --backend c --generations 1 --population 4 "${fast[@]}" --race 3 \
	--archive bad1.ndjson.gz >/dev/null 2>bad1.err
expect_eq "race-bad-input-exit-1: evolve.sh exits 1 after a race, generation 1 appended" "1 true" \
	"$? $(gzip -dc bad1.ndjson.gz | jq -se '[.[] | select(.generation == 1 and .time.race)] | length > 0')"
KSCIBIN=$PWD/wrap evolve-parallel.sh --task rowsum --backend c --generations 1 --population 3 "${fast[@]}" --race 2 \
	--jobs 2 --archive bad2.ndjson.gz >/dev/null 2>bad2.err
expect_eq "race-bad-input-exit-1: evolve-parallel.sh exits 1 after a race, generation 1 appended" "1 true" \
	"$? $(gzip -dc bad2.ndjson.gz | jq -se '[.[] | select(.generation == 1 and .time.race)] | length > 0')"
evolve.sh --task rowsum --backend c --race x --archive arc2.ndjson.gz >/dev/null 2>bad.err
expect_eq "--race x: usage error, exit 2, said" "2 1" "$? $(grep -c 'race: "x" is not a non-negative integer' bad.err)"
done_testing
