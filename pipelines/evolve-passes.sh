# shellcheck shell=bash
# shellcheck disable=SC2154 # variables of the sourcing scripts (evolve.sh, evolve-parallel.sh)
# pipelines/evolve-passes.sh — the passes inside a generation that
# evolve.sh and evolve-parallel.sh share (docs/loop.md): after the
# generation's children are timed,
#   fix   children that failed for their own sake (compile_error, wrong,
#         crashed, timeout; not a transient compile failure of the machine,
#         the candidate's or, in kverify and ktime, the task's own objects')
#         go to kgen --stage fix, and the fixes that fail again, up to
#         --max-fix rounds;
#   tune  "model, then tune": every model child that was verified and timed
#         and whose source keeps `// ktune:` knobs gets a short mutate sweep
#         (--tune N children each);
#   recheck  a timed child faster than the device's peak allows
#         (time.implausible) is verified again with more seeds and timed
#         again before the generation is appended; one still above the
#         peak keeps the flag with rechecked: true (held back);
#   race  (--race K; default 4 on cuda and hip, 0 on c) the generation's K
#         fastest timed children (speedup_vs_baseline) that could take the
#         crown — their interval reaches the archive's best — are timed again
#         with twice the budget, the slower half dropped, the rest timed
#         again with twice that, until one is left (successive halving); each
#         keeps its longest timing, its rounds in time.race, the last one
#         standing time.race.won; the crown rule (kselect) then decides on
#         these longer timings;
# and, once the generation is appended,
#   compose  (cuda, hip; --compose on) kgen --generator compose makes one
#         candidate of the archive's per-size winners, when they differ,
#         which goes through the stages and is appended to the generation;
#   findings  the model rewrites the findings file of the task, back end
#         and device from the notebook.
# Each pass is: make the input (the functions here), run kgen and the
# stages on it (the caller's runner: one pipe in evolve.sh, spread.sh in
# evolve-parallel.sh), keep only the records that are new, as generation G.
# Sourced, not run.

# passes_fix_input IN OUT: the records of IN a fix round takes.
passes_fix_input() {
	jq -c 'select((.status | IN("compile_error", "wrong", "crashed", "timeout")) and
		([.compile, .verify, .time] | any(.transient? // false) | not) and (.source | type == "string"))' "$1" >"$2"
}

# passes_tune_input IN OUT SEED: one mutate request for each model child of
# IN that was timed and keeps a ktune knob (a comment that starts with
# ktune:, the form kgen's mutate reads).
passes_tune_input() {
	jq -c --argjson seed "$3" 'select(.status == "timed" and
			(.origin.generator // "mutate" | IN("mutate", "seed") | not) and
			(.source | type == "string" and test("(//|/\\*)[ \t]*ktune:")))
		| {status: "selected", task, backend, generation, parents: [.id], base: .,
		   island, strategy: {name: "tune", reason: "model, then tune", seed: $seed}, child: 0}
		| with_entries(select(.value != null))' "$1" >"$2"
}

# passes_new OLD NEW G: the records of NEW whose id OLD does not hold (kgen
# passes a failed record on before its fix), numbered generation G (kgen
# numbers a child one past its parent).
passes_new() {
	jq -c --slurpfile old "$1" --argjson g "$3" \
		'($old | map(.id)) as $ids | select(.id as $i | $ids | index($i) | not) | .generation = $g' "$2"
}

# passes_findings G: after generation G is appended, kgen --stage findings
# updates the findings file of the task, back end and device (model
# providers; $findings, none: off).  A failure here costs the next prompts
# their update, not the run: kgen's gen_error record says why, and only a
# fatal kgen (exit 2 or more) is said on stderr.
passes_findings() {
	local g=$1 rc
	[ "$g" -gt 0 ] && [ "$findings" != none ] && [ "$generator" != mutate ] || return 0
	set +e
	jq -cn --arg t "$task" --arg b "$backend" --argjson g "$g" \
		'{status: "selected", task: $t, backend: $b, generation: $g}' |
		kgen --provider "$generator" --stage findings --archive "$archive" "${gen_opts[@]}" \
			--findings "$findings" >"$tmp_findings" 2>&1 8>&-
	rc=$?
	set -e
	[ "$rc" -lt 2 ] || echo "$prog: generation $g: the findings were not updated (kgen exit $rc: $(tail -n 1 "$tmp_findings"))" >&2
	return 0
}

# passes_compose_request G: the compose pass's one request (cuda and hip
# with --compose on; nothing otherwise).
passes_compose_request() {
	[ "$compose" = on ] && [ "$backend" != c ] || return 0
	jq -cn --arg t "$task" --arg b "$backend" --argjson g "$1" \
		'{status: "selected", task: $t, backend: $b, generation: $g, parents: [], strategy: {name: "compose"}}'
}

# passes_compose_keep IN OUT G: what the compose pass appends — the
# composition whatever became of it, as generation G; a "nothing to
# compose" (the winners are one kernel, or their composition is already
# in the archive) is no record worth keeping.
passes_compose_keep() {
	jq -c --argjson g "$3" 'select(.gen.status != "nothing_to_compose") | .generation = $g' "$1" >"$2"
}

# passes_recheck_input IN OUT: the records of IN held back as implausible
# (timed above the device's peak) and not yet checked again.
passes_recheck_input() {
	jq -c 'select(.status == "timed" and (.time.implausible | type == "object") and
		(.time.implausible.rechecked // false | not))' "$1" >"$2"
}

# passes_replace OUT RES: OUT with each record that RES holds again (by id)
# replaced by RES's, on stdout.
passes_replace() {
	jq -c --slurpfile new "$2" '($new | map(select(.id) | {key: .id, value: .}) | from_entries) as $m
		| if (.id | type) == "string" and $m[.id] then $m[.id] else . end' "$1"
}

# passes_recheck_merge OUT RES: OUT with each record that RES holds again
# replaced by RES's (verified and timed again); one still implausible is
# marked rechecked.
passes_recheck_merge() {
	passes_replace "$1" <(jq -c 'if (.time.implausible | type) == "object" then .time.implausible.rechecked = true else . end' "$2")
}

# passes_race_k: the race's K (--race, else 4 on cuda and hip, 0 on c).
passes_race_k() {
	if [ -n "$race" ]; then echo "$race"; elif [ "$backend" = c ]; then echo 0; else echo 4; fi
}

# passes_race_budget R: round R's ktime --budget, 2^R times the
# generation's (--budget, else ktime's default: 0.5 s on a GPU, 1 s on c).
passes_race_budget() {
	local b=${budget:-}
	[ -n "$b" ] || if [ "$backend" = c ]; then b=1; else b=0.5; fi
	awk -v b="$b" -v r="$1" 'BEGIN { printf "%g\n", b * 2 ^ r }'
}

# One round of a racer's time.race.rounds (jq): round R with budget B (null:
# the generation's own timing), its status and speedup, nulls left out.
# shellcheck disable=SC2016 # jq's variables
passes_race_round='def race_round($r; $b): {round: $r, budget_s: $b, status: .status,
	speedup_vs_baseline: .time.speedup_vs_baseline, speedup_vs_baseline_ci: .time.speedup_vs_baseline_ci}
	| with_entries(select(.value != null)); '

# passes_race_input IN OUT K BAR: the race's contenders of IN — timed, not
# held back as implausible, with a speedup over the baseline whose interval
# (or value) reaches BAR — the K fastest, each with its round 0 (the
# generation's own timing) in time.race.
passes_race_input() {
	jq -c --argjson bar "$4" 'select(.status == "timed" and (.time.speedup_vs_baseline | type == "number") and
			(.time.implausible | type != "object") and
			((.time.speedup_vs_baseline_ci[1]? // .time.speedup_vs_baseline) >= $bar))' "$1" |
		jq -sc --argjson k "$3" "$passes_race_round"'(sort_by(-.time.speedup_vs_baseline) | .[:$k]) as $c | $c[]
			| .time.race = {contenders: ($c | length), rounds: [race_round(0; null)]}' >"$2"
}

# passes_race_carry BEFORE AFTER R B OUT: AFTER's records (timed again in
# round R with budget B) with BEFORE's race history and round R added.
passes_race_carry() {
	jq -c --slurpfile before "$1" --argjson r "$3" --argjson b "$4" "$passes_race_round"'
		($before | map({key: .id, value: .time.race}) | from_entries) as $h
		| .time.race = ($h[.id] // {rounds: []})
		| .time.race.rounds += [race_round($r; $b)]' "$2" >"$5"
}

# passes_race_top IN N: the N fastest timed records of IN, on stdout.
passes_race_top() {
	jq -sc --argjson n "$2" 'map(select(.status == "timed" and (.time.speedup_vs_baseline | type == "number")))
		| sort_by(-.time.speedup_vs_baseline) | .[:$n] | .[]' "$1"
}

# passes_race G TIMER: the race of generation G's records in $out_race (a
# file, rewritten in place), timing each round with "TIMER IN OUT BUDGET"
# (the caller's: ktime here, spread.sh across slots); the work in
# $race_dir.  0; 3 a round failed (TIMER's status, said by TIMER).
passes_race() {
	local g=$1 timer=$2 k r=0 n b
	k=$(passes_race_k)
	[ "$k" -gt 0 ] || return 0
	passes_race_input "$out_race" "$race_dir/race-0.ndjson" "$k" "$best_base"
	n=$(wc -l <"$race_dir/race-0.ndjson")
	[ "$n" -gt 0 ] || return 0
	cp "$race_dir/race-0.ndjson" "$race_dir/race-all.ndjson"
	cp "$race_dir/race-0.ndjson" "$race_dir/race-in.ndjson"
	while :; do
		r=$((r + 1))
		b=$(passes_race_budget "$r")
		"$timer" "$race_dir/race-in.ndjson" "$race_dir/race-out.ndjson" "$b" || return 3
		passes_race_carry "$race_dir/race-in.ndjson" "$race_dir/race-out.ndjson" "$r" "$b" "$race_dir/race-timed.ndjson"
		passes_replace "$race_dir/race-all.ndjson" "$race_dir/race-timed.ndjson" >"$race_dir/race-all.tmp"
		mv "$race_dir/race-all.tmp" "$race_dir/race-all.ndjson"
		# Two or fewer: the faster wins; more: the faster half runs again
		# (one that is no longer timed drops out).
		if [ "$n" -le 2 ]; then n=1; else n=$(((n + 1) / 2)); fi
		passes_race_top "$race_dir/race-timed.ndjson" "$n" >"$race_dir/race-in.ndjson"
		n=$(wc -l <"$race_dir/race-in.ndjson")
		[ "$n" -gt 1 ] || break
	done
	jq -c --slurpfile w "$race_dir/race-in.ndjson" '($w | map(.id)) as $won
		| .time.race.won = (.id as $i | $won | index($i) != null)' "$race_dir/race-all.ndjson" >"$race_dir/race-final.ndjson"
	passes_replace "$out_race" "$race_dir/race-final.ndjson" >"$race_dir/race-merged.ndjson"
	mv "$race_dir/race-merged.ndjson" "$out_race"
	[ "$quiet" = 1 ] || echo "$prog: generation $g: raced $(wc -l <"$race_dir/race-0.ndjson") children in $r rounds: $(jq -r \
		'"\(.id) won, \(.time.speedup_vs_baseline * 1000 | round / 1000)x the baseline"' "$race_dir/race-in.ndjson" |
		head -n 1 | grep . || echo "none stayed timed")" >&2
}
