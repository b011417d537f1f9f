#!/usr/bin/env bash
# evolve-parallel.sh — evolve.sh with each generation's candidates spread over
# job slots and hosts by GNU parallel (pipelines/spread.sh).
#
# A generation is two steps. The model step, kselect | kgen, runs here (where
# the network and the API keys are) and writes the candidates, sources and
# all, to WORK/TASK-BACKEND-gG/candidates.ndjson. The GPU step sends them,
# CHUNK records per job, to the hosts (stages.sh: kcompile | kverify | ktime)
# and collects the results. Once every candidate is back, exactly once, the
# generation is appended to the archive as one gzip member under flock
# (archive-append.sh) and its work directory is removed.
#
# An interrupted run continues where it stopped when re-run with the same
# options: a finished generation is in the archive; the unfinished one's
# candidates are not generated again, and its joblog (parallel --resume-failed)
# skips every job that finished.
#
# As evolve.sh: the options are checked by a dry run of kselect and kgen
# (exit 2), the run lock ARCHIVE.run.lock is held for the whole run (exit 5),
# a damaged archive is refused (exit 4), and the provider failure policy is
# applied to each generation's candidates before they are spread (exit 6).
# The ledger and the stop rules are evolve.sh's: the rules are checked before
# each generation and a stop is exit 0 (an unfinished generation's work stays
# for a later run).
set -euo pipefail

usage() {
	cat <<'USAGE'
usage: evolve-parallel.sh [options]
  evolve.sh's options:
  --task NAME, --backend B, --generations G, --population P, --archive FILE,
  --strategy S, --seed N, --provider P (or --generator P), --model M, --budget SEC,
  --kselect-opt OPT, --kgen-opt OPT, --kcompile-opt OPT, --kverify-opt OPT,
  --ktime-opt OPT, --max-provider-failures K, --stop-slower F, -q/--quiet,
  --max-usd X, --max-tokens N, --max-minutes M, --target-speedup S, --plateau G,
  --prices FILE, --ledger FILE, --max-fix N, --tune N, --findings DIR, --compose on|off,
  --race K
                       (see evolve.sh --help; the fix rounds, the tune pass and the
                       composition run as the generation's main step does: kgen here,
                       the stages spread)
  spreading each generation (see spread.sh --help):
  --work DIR           state of the unfinished generation (default: ARCHIVE.work)
  --chunk N            candidates per job (default: about two jobs a slot)
  --jobs N             job slots per host (default: --gpus when given, else 1)
  --gpus G             G GPUs per host: one slot per GPU, CUDA_VISIBLE_DEVICES per job
  -S, --sshlogin L     a host (repeatable); --sshloginfile F: hosts from a file
  --retries N          tries per job, on another host where possible (default: 3)
  --bar                progress ("N of M jobs done") on stderr
  --env VAR            pass this environment variable to the jobs (repeatable)
  --stages-cmd CMD     stages.sh on the workers (default: the one next to this script
                       without ssh logins, else "stages.sh" on the workers' PATH)
  --srun, --srun-opt OPT   run each job under srun inside a Slurm allocation
  --keep-work          keep each generation's work directory after appending it
  -h, --help           this text
Environment: as evolve.sh (KSCI_TASKS, KSCI_CACHE, KSCIBIN, KSCI_PRICES, KSCI_LEDGER).
Exit status: 0 done, or stopped by a stop rule; 1 a generation's tools reported bad
input (records kept); 2 usage (nothing run); 3 a tool failed fatally, no parent could be
selected, the archive could not be read or written, or some jobs failed after their
retries (re-run the same command to continue); 4 the archive is damaged (nothing run);
5 another run holds the archive; 6 stopped by the provider failure policy.
USAGE
}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=evolve-lib.sh
. "$here/evolve-lib.sh"
# shellcheck source=evolve-passes.sh
. "$here/evolve-passes.sh"
work="" keep=0 max_fix=2 tune=4 findings=""
spread_opts=()
while [ $# -gt 0 ]; do
	if evolve_option "$@"; then
		shift "$evolve_shift"
		continue
	fi
	case $1 in
	--work) work=$2; shift ;;
	--keep-work) keep=1 ;;
	--max-fix | --tune | --findings)
		[ $# -ge 2 ] || { echo "evolve-parallel.sh: $1 needs a value" >&2; exit 2; }
		case $1 in --tune) tune=$2 ;; --findings) findings=$2 ;; *) max_fix=$2 ;; esac
		shift ;;
	--bar | --srun) spread_opts+=("$1") ;;
	-S | --sshlogin | --sshloginfile | --chunk | --jobs | --gpus | --retries | --env | --stages-cmd | \
		--srun-opt | --kcompile-opt | --kverify-opt | --ktime-opt)
		spread_opts+=("$1" "$2"); shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "evolve-parallel.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
	esac
	shift
done
evolve_check_numbers evolve-parallel.sh "$gens" "$pop" "$seed" "$max_pf" "$max_fix" "$tune"
# Children per selected base: with a model provider one per kept plan (up
# to 3, as in the method), so P children come from ceil(P/3) bases (P
# rounded up to whole bases); mutate: one child per base.
if [ "$generator" = mutate ]; then per_base=1; else per_base=$((pop < 3 ? pop : 3)); fi
bases=$(((pop + per_base - 1) / per_base))
[ -n "$archive" ] || archive="runs/$task-$backend.ndjson.gz"
[ -n "$work" ] || work=$archive.work
[ -n "$findings" ] || findings=$archive.findings
[ "$findings" = none ] || [ "$generator" = mutate ] || gen_opts+=(--findings "$findings")
[ -n "$budget" ] && spread_opts+=(--budget "$budget")
[ -n "$model" ] && gen_opts+=(--model "$model")

evolve_find_tools evolve-parallel.sh kselect kgen jq gzip parallel flock
evolve_dry_run kselect --task "$task" --backend "$backend" --strategy "$strategy" -n "$pop" \
	--seed "$seed" "${sel_opts[@]}" /dev/null
evolve_dry_run kgen --provider "$generator" --seed "$seed" --max-fix "$max_fix" "${gen_opts[@]}"
evolve_stops_check

evolve_run_lock
# archive-append.sh appends gzip members to a .gz archive, plain lines to any other.
case $archive in *.gz) evolve_check_archive 1 ;; *) evolve_check_archive 0 ;; esac
mkdir -p "$work"
[ -e "$archive" ] || : >"$archive"
evolve_stops_start


# spread_stages IN WORK OUT WHAT: the stages on IN's records, spread by
# spread.sh (resumable in WORK), into OUT.  0 (1 from spread.sh, bad input,
# sets status); 2 usage; 3 incomplete, said with WHAT.
spread_stages() {
	local rc
	set +e
	"$here/spread.sh" --work "$2" --out "$3" "${spread_opts[@]}" "${gen_time[@]}" "$1" 8>&-
	rc=$?
	set -e
	case $rc in
	0) ;;
	1) status=1 ;;
	2) return 2 ;;
	*) echo "evolve-parallel.sh: $4 incomplete; archive unchanged; re-run to continue" >&2; return 3 ;;
	esac
}

# par_round G NAME IN KGEN-OPTION...: one pass round of generation G, as
# its main step: kgen here (where the keys are), the stages spread by
# spread.sh; the round's new records end in $gdir/pass-NAME.new.ndjson,
# which also marks it done (a re-run goes on from the first round not
# done).  Status: 0; 3 a step failed (re-run to continue); 6 the provider
# policy.
par_round() {
	local g=$1 name=$2 in=$3 p=$gdir/pass-$2 rc
	shift 3
	[ -e "$p.new.ndjson" ] && return 0
	if [ ! -e "$p.candidates.ndjson" ]; then
		set +e
		kgen "$@" --archive "$archive" "${gen_opts[@]}" <"$in" >"$p.candidates.tmp" 8>&-
		rc=$?
		set -e
		if [ "$rc" -ge 2 ]; then
			echo "evolve-parallel.sh: generation $g: the model step of $name failed (exit $rc); archive unchanged" >&2
			return 3
		fi
		[ "$rc" = 1 ] && status=1
		mv "$p.candidates.tmp" "$p.candidates.ndjson"
	fi
	spread_stages "$p.candidates.ndjson" "$p.spread" "$p.results.ndjson" "generation $g: $name" || return
	cat "$gdir/results.ndjson" "$gdir"/pass-*.new.ndjson 2>/dev/null >"$gdir/so-far.ndjson" || true
	passes_new "$gdir/so-far.ndjson" "$p.results.ndjson" "$g" >"$p.new.tmp"
	evolve_provider_policy "$p.new.tmp" "$g" || return 6
	mv "$p.new.tmp" "$p.new.ndjson"
}

# passes G: the fix rounds, then the tune pass (pipelines/evolve-passes.sh).
passes() {
	local g=$1 r prev=$gdir/results.ndjson
	for ((r = 1; r <= max_fix; r++)); do
		passes_fix_input "$prev" "$gdir/fix$r.in.ndjson"
		[ -s "$gdir/fix$r.in.ndjson" ] || break
		par_round "$g" "fix$r" "$gdir/fix$r.in.ndjson" --provider "$generator" --stage fix \
			--max-fix "$max_fix" --seed "$((seed + g))" || return
		prev=$gdir/pass-fix$r.new.ndjson
	done
	[ "$tune" -gt 0 ] || return 0
	cat "$gdir/results.ndjson" "$gdir"/pass-fix*.new.ndjson 2>/dev/null >"$gdir/tune.from.ndjson" || true
	passes_tune_input "$gdir/tune.from.ndjson" "$gdir/tune.in.ndjson" "$((seed + g))"
	[ -s "$gdir/tune.in.ndjson" ] || return 0
	par_round "$g" tune "$gdir/tune.in.ndjson" --provider mutate --children "$tune" --seed "$((seed + g))"
}

# recheck G: the generation's children held back as implausible, verified
# (8 seeds) and timed again, spread like the stages, merged into
# $gdir/all.ndjson (pipelines/evolve-passes.sh).  0; 3 incomplete (said).
recheck() {
	local g=$1 p=$gdir/recheck rc
	passes_recheck_input "$gdir/all.ndjson" "$p.in.ndjson"
	[ -s "$p.in.ndjson" ] || return 0
	set +e
	"$here/spread.sh" --work "$p.spread" --out "$p.out.ndjson" "${spread_opts[@]}" "${gen_time[@]}" \
		--stages verify,time --force --kverify-opt --seeds --kverify-opt 8 "$p.in.ndjson" 8>&-
	rc=$?
	set -e
	case $rc in
	0) ;;
	1) status=1 ;; # bad input, as in the main step (records kept)
	*) echo "evolve-parallel.sh: generation $g: checking again the results above the device's peak incomplete; archive unchanged; re-run to continue" >&2; return 3 ;;
	esac
	passes_recheck_merge "$gdir/all.ndjson" "$p.out.ndjson" >"$p.merged.ndjson"
	mv "$p.merged.ndjson" "$gdir/all.ndjson"
}

# race_time IN OUT BUDGET: one round of the race (pipelines/evolve-passes.sh),
# ktime again on IN with BUDGET, spread like the stages.  0; 3 incomplete
# (said).
# shellcheck disable=SC2317 # called through passes_race
race_time() {
	local rc
	set +e
	"$here/spread.sh" --work "$race_dir/spread.$3" --out "$2" "${spread_opts[@]}" --stages time --force \
		--budget "$3" "$1" 8>&-
	rc=$?
	set -e
	case $rc in
	0) return 0 ;;
	1) status=1; return 0 ;; # bad input, as in the main step (records kept)
	*) echo "evolve-parallel.sh: generation $g: the race incomplete; archive unchanged; re-run to continue" >&2; return 3 ;;
	esac
}

# compose_pass G: after generation G is appended, the composition of the
# archive's per-size winners (pipelines/evolve-passes.sh): kgen here, the
# stages spread, appended to G.  Lost if the run stops before it ends (the
# next generation's composes everything).  0; 3 a step failed (said).
compose_pass() {
	local g=$1 p=$gdir/compose rc
	passes_compose_request "$g" >"$p.in.ndjson"
	[ -s "$p.in.ndjson" ] || return 0
	set +e
	kgen --generator compose --archive "$archive" <"$p.in.ndjson" >"$p.candidates.ndjson" 8>&-
	rc=$?
	set -e
	if [ "$rc" -ge 2 ]; then
		echo "evolve-parallel.sh: generation $g: the compose pass failed (kgen exit $rc); the generation is appended, its composition is not" >&2
		return 3
	fi
	[ "$rc" = 1 ] && status=1 # bad input, as in the main step (records kept)
	passes_compose_keep "$p.candidates.ndjson" "$p.todo.ndjson" "$g"
	[ -s "$p.todo.ndjson" ] || return 0
	spread_stages "$p.todo.ndjson" "$p.spread" "$p.results.ndjson" "generation $g: the composition" || return
	passes_compose_keep "$p.results.ndjson" "$p.keep.ndjson" "$g"
	"$here/archive-append.sh" "$archive" "$p.keep.ndjson" 8>&- || return 3
}

status=0
while :; do
	evolve_read_state || exit
	# Work left by a generation that was appended but not cleaned up.
	for d in "$work/$task-$backend-g"*; do
		[ -d "$d" ] || continue
		n=${d##*-g}
		case $n in '' | *[!0-9]*) continue ;; esac
		if [ "$n" -le "$last" ] && [ "$keep" = 0 ]; then rm -rf "$d"; fi
	done
	[ "$last" -ge "$gens" ] && break
	evolve_stop_check && break
	g=$((last + 1))
	gdir=$work/$task-$backend-g$g
	mkdir -p "$gdir"
	if [ ! -e "$gdir/candidates.ndjson" ]; then
		evolve_ledger_mark "$g"
		set +e
		# The tools and jobs do not get the run lock (fd 8): it ends with this
		# script, not with the last job or progress loop that outlives it.
		kselect --task "$task" --backend "$backend" --strategy "$strategy" -n "$bases" \
			--seed "$((seed + g))" "${sel_opts[@]}" "$archive" 8>&- |
			kgen --provider "$generator" --seed "$((seed + g))" --children "$per_base" --archive "$archive" "${gen_opts[@]}" \
				>"$gdir/candidates.tmp" 8>&-
		rcs=("${PIPESTATUS[@]}")
		set -e
		worst=$(evolve_worst "${rcs[@]}")
		if [ "$worst" -ge 2 ] || [ ! -s "$gdir/candidates.tmp" ]; then
			echo "evolve-parallel.sh: generation $g: the model step failed (exit statuses: ${rcs[*]}); archive unchanged" >&2
			rm -f "$gdir/candidates.tmp"
			exit 3
		fi
		evolve_provider_policy "$gdir/candidates.tmp" "$g" || { rm -f "$gdir/candidates.tmp"; exit 6; }
		echo "$worst" >"$gdir/model.rc"
		mv "$gdir/candidates.tmp" "$gdir/candidates.ndjson"
	fi
	[ "$(cat "$gdir/model.rc" 2>/dev/null)" = 1 ] && status=1
	evolve_time_opts --ktime-opt
	spread_stages "$gdir/candidates.ndjson" "$gdir/spread" "$gdir/results.ndjson" "generation $g" || exit
	if [ "$generator" != mutate ]; then passes "$g" || exit; fi
	cat "$gdir/results.ndjson" "$gdir"/pass-*.new.ndjson >"$gdir/all.ndjson" 2>/dev/null || true
	recheck "$g" || exit
	mkdir -p "$gdir/race"
	out_race=$gdir/all.ndjson race_dir=$gdir/race passes_race "$g" race_time || exit
	"$here/archive-append.sh" "$archive" "$gdir/all.ndjson" 8>&- || exit 3
	compose_pass "$g" || exit
	tmp_findings=$gdir/findings.out
	passes_findings "$g"
	[ "$keep" = 1 ] || rm -rf "$gdir"
	if [ "$quiet" = 0 ]; then summary "$g" || exit; fi
done
rmdir "$work" 2>/dev/null || true
evolve_stopped
exit "$status"
