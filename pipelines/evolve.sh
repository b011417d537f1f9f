#!/usr/bin/env bash
# evolve.sh — run an evolutionary kernel search on one task.
#
# Each generation is one pipe:
#   kselect ARCHIVE | kgen | kcompile | kverify | ktime
# whose records are appended, as one gzip member, to the archive once the
# generation is complete. The archive is the only state: re-running with the
# same archive continues after its last complete generation.
#
# Before anything runs: the options are checked by a dry run of the tools
# (exit 2), the run lock ARCHIVE.run.lock is taken for the whole run (exit 5
# when another run holds it), and an archive the tools cannot read to its end
# is refused (exit 4). A generation whose records show an authentication or
# quota failure, or --max-provider-failures consecutive provider failures, is
# not archived and the run stops (exit 6). Every model call of the run is a
# line in the ledger (ARCHIVE.ledger.ndjson, written by kselect and kgen as
# each call ends); the stop rules (--max-usd, --max-tokens, --max-minutes,
# --target-speedup, --plateau) are checked before each generation and end
# the run normally (exit 0), saying why in ARCHIVE.stop.json and on stderr.
# Codes: docs/exit-codes.md.
set -euo pipefail

usage() {
	cat <<'USAGE'
usage: evolve.sh [options]
  --task NAME          task under the tasks root (default: matmul)
  --backend B          c | cuda | hip (default: c)
  --generations G      stop once generation G is complete (default: 5; the seed is generation 0)
  --population P       children per generation (default: 8); with a model provider each
                       selected base yields one child per kept plan (up to 3), so P is
                       rounded up to whole bases (fix and tune children come on top)
  --archive FILE       gzip NDJSON archive, appended to (default: runs/TASK-BACKEND.ndjson.gz)
  --strategy S         kselect strategy (default: tournament)
  --seed N             base random seed; generation g uses N+g (default: 1)
  --provider P         kgen provider: mutate | openai | anthropic | cmd | replay
                       (default: $KSCI_PROVIDER or mutate; --generator is the same)
  --model M            model name for the provider (kgen --model)
  --budget SEC         ktime budget per benchmark size (default: ktime's)
  --max-fix N          model providers: fix rounds per generation — children that came
                       out compile_error, wrong, crashed or timeout go through
                       kgen --stage fix | kcompile | kverify | ktime, and the fixed
                       children that fail again, up to N rounds (default: 2; 0: none)
  --tune N             model providers, "model, then tune": each model child that was
                       timed and keeps ktune: knobs gets N mutate children in the same
                       generation (default: 4; 0: none)
  --findings DIR       model providers: after each generation the model rewrites the
                       findings of the task, back end and device (kgen --stage findings,
                       each finding citing archive records) in DIR, and the plan prompt
                       shows them (default: ARCHIVE.findings; none: off)
  --compose on|off     cuda and hip: after each generation, one candidate made of the
                       archive's per-size winners (kgen --generator compose) when they
                       differ, verified, timed and appended to the generation (default: on)
  --race K             before a generation is appended, its K fastest timed children that
                       could take the best's place are timed again with twice the budget,
                       the slower half dropped, again with twice that, until one is left
                       (successive halving; time.race in each; default: 4 on cuda and hip,
                       0 on c; 0: none)
  --stop-slower F      stop timing a child whose speedup over the seed falls below F
                       times the best so far: status slow (ktime --stop-slower;
                       default: 0.5; 0: time every child in full)
  --kselect-opt OPT    extra option for kselect (repeatable); likewise
  --kgen-opt, --kcompile-opt, --kverify-opt, --ktime-opt
  --max-provider-failures K
                       stop after K consecutive provider failures (default: 3; 0: never);
                       an authentication or quota failure stops at once
  --max-usd X          stop once the ledger's spend reaches X dollars (needs a price table)
  --max-tokens N       stop once the ledger's tokens bought (in + out) reach N
  --max-minutes M      stop once this run has taken M minutes
  --target-speedup S   stop once the best candidate is S times as fast as the seed
  --plateau G          stop once the best has not improved for G generations
                       (each checked before every generation; a stop is exit 0, with
                       its reason on stderr and in ARCHIVE.stop.json)
  --prices FILE        price table for kgen's and kselect's calls (sets KSCI_PRICES)
  --ledger FILE        one line per model call (default: $KSCI_LEDGER, else
                       ARCHIVE.ledger.ndjson)
  -q, --quiet          no per-generation summary
  -h, --help           this text
Environment: KSCI_TASKS (tasks root), KSCI_CACHE (compile cache), KSCIBIN
(directory of the ksci tools; default: next to this script's ../build/bin, then PATH),
KSCI_PRICES, KSCI_LEDGER.
Exit status: 0 done, or stopped by a stop rule; 1 a generation's tools reported bad
input (records kept); 2 usage (nothing run); 3 a tool failed fatally, no parent could be
selected, or the archive could not be read or written; 4 the archive is damaged (nothing
run); 5 another run holds the archive; 6 stopped by the provider failure policy.
USAGE
}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=evolve-lib.sh
. "$here/evolve-lib.sh"
# shellcheck source=evolve-passes.sh
. "$here/evolve-passes.sh"
comp_opts=() ver_opts=() time_opts=() max_fix=2 tune=4 findings=""
while [ $# -gt 0 ]; do
	if evolve_option "$@"; then
		shift "$evolve_shift"
		continue
	fi
	case $1 in
	--kcompile-opt) comp_opts+=("$2"); shift ;;
	--kverify-opt) ver_opts+=("$2"); shift ;;
	--ktime-opt) time_opts+=("$2"); shift ;;
	--max-fix) [ $# -ge 2 ] || { echo "evolve.sh: --max-fix needs a value" >&2; exit 2; }; max_fix=$2; shift ;;
	--tune) [ $# -ge 2 ] || { echo "evolve.sh: --tune needs a value" >&2; exit 2; }; tune=$2; shift ;;
	--findings) [ $# -ge 2 ] || { echo "evolve.sh: --findings needs a value" >&2; exit 2; }; findings=$2; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "evolve.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
	esac
	shift
done
evolve_check_numbers evolve.sh "$gens" "$pop" "$seed" "$max_pf" "$max_fix" "$tune"
# Children per selected base: with a model provider one per kept plan (up
# to 3, as in the method), so P children come from ceil(P/3) bases (P
# rounded up to whole bases); mutate: one child per base.
if [ "$generator" = mutate ]; then per_base=1; else per_base=$((pop < 3 ? pop : 3)); fi
bases=$(((pop + per_base - 1) / per_base))
[ -n "$archive" ] || archive="runs/$task-$backend.ndjson.gz"
[ -n "$findings" ] || findings=$archive.findings
[ "$findings" = none ] || [ "$generator" = mutate ] || gen_opts+=(--findings "$findings")
[ -n "$budget" ] && time_opts+=(--budget "$budget")
[ -n "$model" ] && gen_opts+=(--model "$model")

evolve_find_tools evolve.sh kselect kgen kcompile kverify ktime karchive jq gzip flock
evolve_dry_run kselect --task "$task" --backend "$backend" --strategy "$strategy" -n "$pop" \
	--seed "$seed" "${sel_opts[@]}" /dev/null
evolve_dry_run kgen --provider "$generator" --seed "$seed" --max-fix "$max_fix" "${gen_opts[@]}"
evolve_dry_run kcompile "${comp_opts[@]}"
evolve_dry_run kverify "${ver_opts[@]}"
evolve_dry_run ktime "${time_opts[@]}" --stop-slower "$stop_slower"
evolve_stops_check

evolve_run_lock
evolve_check_archive 1
[ -e "$archive" ] || : >"$archive"
evolve_stops_start
tmp=$(mktemp -d "${TMPDIR:-/tmp}/evolve.XXXXXX") || { echo "evolve.sh: cannot make a temporary directory in ${TMPDIR:-/tmp}" >&2; exit 3; }
trap 'rm -rf "$tmp"' EXIT
tmp_findings=$tmp/findings.out


# pass_round G WHAT IN KGEN-OPTION...: kgen with these options on IN, then
# the stages; the records that are new are appended to $out (and left in
# $tmp/pass-new.ndjson) as generation G.  Status: 0, 3 a stage failed
# fatally, 6 the provider policy.
pass_round() {
	local g=$1 what=$2 in=$3 res=$tmp/pass-out.ndjson
	shift 3
	set +e
	kgen "$@" --archive "$archive" "${gen_opts[@]}" <"$in" 8>&- |
		kcompile "${comp_opts[@]}" 8>&- |
		kverify "${ver_opts[@]}" 8>&- |
		ktime "${time_opts[@]}" "${gen_time[@]}" >"$res" 8>&-
	local rcs=("${PIPESTATUS[@]}") worst
	set -e
	worst=$(evolve_worst "${rcs[@]}")
	if [ "$worst" -ge 2 ]; then
		echo "evolve.sh: generation $g: $what failed (exit statuses: ${rcs[*]}); archive unchanged" >&2
		return 3
	fi
	[ "$worst" = 1 ] && status=1
	passes_new "$out" "$res" "$g" >"$tmp/pass-new.ndjson"
	evolve_provider_policy "$tmp/pass-new.ndjson" "$g" || return
	cat "$tmp/pass-new.ndjson" >>"$out"
}

# fix_pass G: up to --max-fix rounds (pipelines/evolve-passes.sh); each
# round takes the failures of the round before (first: the generation's).
# kgen's own --max-fix bounds the fixes in a row in a lineage, across
# generations.
fix_pass() {
	local g=$1 r
	cp "$out" "$tmp/pass-new.ndjson"
	for ((r = 1; r <= max_fix; r++)); do
		passes_fix_input "$tmp/pass-new.ndjson" "$tmp/fix-in.ndjson"
		[ -s "$tmp/fix-in.ndjson" ] || return 0
		pass_round "$g" "fix round $r" "$tmp/fix-in.ndjson" --provider "$generator" --stage fix \
			--max-fix "$max_fix" --seed "$((seed + g))" || return
	done
}

# tune_pass G: model, then tune — --tune mutate children of each model
# child of the generation (its fixes included) that was timed and keeps
# ktune knobs.
tune_pass() {
	local g=$1
	passes_tune_input "$out" "$tmp/tune-in.ndjson" "$((seed + g))"
	[ -s "$tmp/tune-in.ndjson" ] || return 0
	pass_round "$g" "the tune pass" "$tmp/tune-in.ndjson" --provider mutate --children "$tune" \
		--seed "$((seed + g))"
}

# recheck_pass G: the generation's children held back as implausible,
# verified (8 seeds) and timed again (pipelines/evolve-passes.sh), in place
# in $out.  0; 3 a stage failed (said).
recheck_pass() {
	local g=$1 worst
	passes_recheck_input "$out" "$tmp/recheck-in.ndjson"
	[ -s "$tmp/recheck-in.ndjson" ] || return 0
	set +e
	kverify --force --seeds 8 "${ver_opts[@]}" <"$tmp/recheck-in.ndjson" 8>&- |
		ktime --force "${time_opts[@]}" "${gen_time[@]}" >"$tmp/recheck-out.ndjson" 8>&-
	local rcs=("${PIPESTATUS[@]}")
	set -e
	worst=$(evolve_worst "${rcs[@]}")
	if [ "$worst" -ge 2 ]; then
		echo "evolve.sh: generation $g: checking again the results above the device's peak failed (exit statuses: ${rcs[*]}); archive unchanged" >&2
		return 3
	fi
	[ "$worst" = 1 ] && status=1 # bad input, as in the main step (records kept)
	passes_recheck_merge "$out" "$tmp/recheck-out.ndjson" >"$tmp/recheck-merged.ndjson"
	mv "$tmp/recheck-merged.ndjson" "$out"
}

# race_time IN OUT BUDGET: one round of the race (pipelines/evolve-passes.sh):
# ktime again on IN with BUDGET.  0; 3 ktime failed (said).
# shellcheck disable=SC2317 # called through passes_race
race_time() {
	local rc
	set +e
	ktime --force "${time_opts[@]}" --budget "$3" <"$1" >"$2" 8>&-
	rc=$?
	set -e
	[ "$rc" = 1 ] && status=1 # bad input, as in the main step (records kept)
	[ "$rc" -lt 2 ] && return 0
	echo "evolve.sh: generation $g: the race failed (ktime exit $rc); archive unchanged" >&2
	return 3
}

# compose_pass G: after generation G is appended, the composition of the
# archive's per-size winners through the stages, appended to G as a member
# of its own.  0; 3 a stage failed or the append did (said); 4 the archive
# is damaged.
compose_pass() {
	local g=$1 res=$tmp/compose-out.ndjson worst arc
	passes_compose_request "$g" >"$tmp/compose-in.ndjson"
	[ -s "$tmp/compose-in.ndjson" ] || return 0
	set +e
	kgen --generator compose --archive "$archive" <"$tmp/compose-in.ndjson" 8>&- |
		kcompile "${comp_opts[@]}" 8>&- |
		kverify "${ver_opts[@]}" 8>&- |
		ktime "${time_opts[@]}" "${gen_time[@]}" >"$res" 8>&-
	local rcs=("${PIPESTATUS[@]}")
	set -e
	worst=$(evolve_worst "${rcs[@]}")
	if [ "$worst" -ge 2 ]; then
		echo "evolve.sh: generation $g: the compose pass failed (exit statuses: ${rcs[*]}); the generation is appended, its composition is not" >&2
		return 3
	fi
	[ "$worst" = 1 ] && status=1 # bad input, as in the main step (records kept)
	passes_compose_keep "$res" "$tmp/compose-keep.ndjson" "$g"
	[ -s "$tmp/compose-keep.ndjson" ] || return 0
	set +e
	karchive append "$archive" <"$tmp/compose-keep.ndjson" 8>&-
	arc=$?
	set -e
	[ "$arc" = 0 ] && return 0
	echo "evolve.sh: generation $g: cannot append the composition to $archive (karchive append exit $arc)" >&2
	[ "$arc" = 4 ] && return 4
	return 3
}

status=0
while :; do
	evolve_read_state || exit
	[ "$last" -ge "$gens" ] && break
	evolve_stop_check && break
	evolve_time_opts ""
	g=$((last + 1))
	evolve_ledger_mark "$g"
	out="$tmp/gen.ndjson"
	set +e
	# The tools do not get the run lock (fd 8): it ends with this script.
	kselect --task "$task" --backend "$backend" --strategy "$strategy" -n "$bases" \
		--seed "$((seed + g))" "${sel_opts[@]}" "$archive" 8>&- |
		kgen --provider "$generator" --seed "$((seed + g))" --children "$per_base" --archive "$archive" "${gen_opts[@]}" 8>&- |
		kcompile "${comp_opts[@]}" 8>&- |
		kverify "${ver_opts[@]}" 8>&- |
		ktime "${time_opts[@]}" "${gen_time[@]}" >"$out" 8>&-
	rcs=("${PIPESTATUS[@]}")
	set -e
	worst=$(evolve_worst "${rcs[@]}")
	if [ "$worst" -ge 2 ]; then
		echo "evolve.sh: generation $g failed (exit statuses: ${rcs[*]}); archive unchanged" >&2
		exit 3
	fi
	[ "$worst" = 1 ] && status=1
	if [ ! -s "$out" ]; then
		echo "evolve.sh: generation $g produced no records (exit statuses: ${rcs[*]})" >&2
		exit 3
	fi
	evolve_provider_policy "$out" "$g" || exit
	if [ "$max_fix" -gt 0 ] && [ "$generator" != mutate ]; then fix_pass "$g" || exit; fi
	if [ "$tune" -gt 0 ] && [ "$generator" != mutate ]; then tune_pass "$g" || exit; fi
	recheck_pass "$g" || exit
	out_race=$out race_dir=$tmp passes_race "$g" race_time || exit
	# One gzip member per generation through karchive append: every line
	# checked to read back the same (else nothing is appended), the member
	# written in one go under ARCHIVE.lock and fsynced, a failed write cut
	# back, a torn archive refused (docs/tools/karchive.md).
	set +e
	karchive append "$archive" <"$out" 8>&-
	arc=$?
	set -e
	if [ "$arc" != 0 ]; then
		keep="$archive.gen-$g.ndjson"
		cp "$out" "$keep" 2>/dev/null || keep="(could not be kept: $(dirname "$archive") is not writable or full)"
		echo "evolve.sh: generation $g: cannot append to $archive (karchive append exit $arc, see above); archive unchanged; the generation's records: $keep" >&2
		[ "$arc" = 4 ] && exit 4
		exit 3
	fi
	compose_pass "$g" || exit
	passes_findings "$g"
	if [ "$quiet" = 0 ]; then summary "$g" || exit; fi
done
evolve_stopped
exit "$status"
