# shellcheck shell=bash
# shellcheck disable=SC2154 # variables of the sourcing scripts (evolve.sh, evolve-parallel.sh)
# pipelines/evolve-passes.sh — the passes inside a generation that
# evolve.sh and evolve-parallel.sh share (docs/loop.md): after the
# generation's children are timed,
#   fix   children that failed for their own sake (compile_error, wrong,
#         crashed, timeout; not a transient compile failure of the machine)
#         go to kgen --stage fix, and the fixes that fail again, up to
#         --max-fix rounds;
#   tune  "model, then tune": every model child that was verified and timed
#         and whose source keeps `// ktune:` knobs gets a short mutate sweep
#         (--tune N children each);
#   recheck  a timed child faster than the device's peak allows
#         (time.implausible) is verified again with more seeds and timed
#         again before the generation is appended; one still above the
#         peak keeps the flag with rechecked: true (held back);
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
		(.compile.transient // false | not) and (.source | type == "string"))' "$1" >"$2"
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

# passes_recheck_merge OUT RES: OUT with each record that RES holds again
# replaced by RES's (verified and timed again); one still implausible is
# marked rechecked.
passes_recheck_merge() {
	jq -c --slurpfile new "$2" '
		($new | map(select(.id) | {key: .id, value: (if (.time.implausible | type) == "object"
			then .time.implausible.rechecked = true else . end)}) | from_entries) as $m
		| if (.id | type) == "string" and $m[.id] then $m[.id] else . end' "$1"
}
