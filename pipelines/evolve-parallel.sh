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
set -euo pipefail

usage() {
	cat <<'USAGE'
usage: evolve-parallel.sh [options]
  evolve.sh's options:
  --task NAME, --backend B, --generations G, --population P, --archive FILE,
  --strategy S, --seed N, --provider P (or --generator P), --model M, --budget SEC,
  --kselect-opt OPT, --kgen-opt OPT, --kcompile-opt OPT, --kverify-opt OPT,
  --ktime-opt OPT, --max-provider-failures K, --stop-slower F, -q/--quiet
                       (see evolve.sh --help)
  spreading each generation (see spread.sh --help):
  --work DIR           state of the unfinished generation (default: ARCHIVE.work)
  --chunk N            candidates per job (default: 1)
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
Environment: as evolve.sh (KSCI_TASKS, KSCI_CACHE, KSCIBIN).
Exit status: 0 done; 1 a generation's tools reported bad input (records kept);
2 usage (nothing run); 3 a tool failed fatally, no parent could be selected, the archive
could not be read or written, or some jobs failed after their retries (re-run the same
command to continue); 4 the archive is damaged (nothing run); 5 another run holds the
archive; 6 stopped by the provider failure policy.
USAGE
}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=evolve-lib.sh
. "$here/evolve-lib.sh"
work="" keep=0
spread_opts=()
while [ $# -gt 0 ]; do
	if evolve_option "$@"; then
		shift "$evolve_shift"
		continue
	fi
	case $1 in
	--work) work=$2; shift ;;
	--keep-work) keep=1 ;;
	--bar | --srun) spread_opts+=("$1") ;;
	-S | --sshlogin | --sshloginfile | --chunk | --jobs | --gpus | --retries | --env | --stages-cmd | \
		--srun-opt | --kcompile-opt | --kverify-opt | --ktime-opt)
		spread_opts+=("$1" "$2"); shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "evolve-parallel.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
	esac
	shift
done
evolve_check_numbers evolve-parallel.sh "$gens" "$pop" "$seed" "$max_pf"
[ -n "$archive" ] || archive="runs/$task-$backend.ndjson.gz"
[ -n "$work" ] || work=$archive.work
[ -n "$budget" ] && spread_opts+=(--budget "$budget")
[ -n "$model" ] && gen_opts+=(--model "$model")

evolve_find_tools evolve-parallel.sh kselect kgen jq gzip parallel flock
evolve_dry_run kselect --task "$task" --backend "$backend" --strategy "$strategy" -n "$pop" \
	--seed "$seed" "${sel_opts[@]}" /dev/null
evolve_dry_run kgen --provider "$generator" --seed "$seed" "${gen_opts[@]}"

evolve_run_lock
# archive-append.sh appends gzip members to a .gz archive, plain lines to any other.
case $archive in *.gz) evolve_check_archive 1 ;; *) evolve_check_archive 0 ;; esac
mkdir -p "$work"
[ -e "$archive" ] || : >"$archive"


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
	g=$((last + 1))
	gdir=$work/$task-$backend-g$g
	mkdir -p "$gdir"
	if [ ! -e "$gdir/candidates.ndjson" ]; then
		set +e
		# The tools and jobs do not get the run lock (fd 8): it ends with this
		# script, not with the last job or progress loop that outlives it.
		kselect --task "$task" --backend "$backend" --strategy "$strategy" -n "$pop" \
			--seed "$((seed + g))" "${sel_opts[@]}" "$archive" 8>&- |
			kgen --provider "$generator" --seed "$((seed + g))" --archive "$archive" "${gen_opts[@]}" \
				>"$gdir/candidates.tmp" 8>&-
		rcs=("${PIPESTATUS[@]}")
		set -e
		worst=0
		for rc in "${rcs[@]}"; do [ "$rc" -gt "$worst" ] && worst=$rc; done
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
	set +e
	evolve_time_opts --ktime-opt
	"$here/spread.sh" --work "$gdir/spread" --out "$gdir/results.ndjson" "${spread_opts[@]}" "${gen_time[@]}" \
		"$gdir/candidates.ndjson" 8>&-
	rc=$?
	set -e
	case $rc in
	0) ;;
	1) status=1 ;;
	2) exit 2 ;;
	*) echo "evolve-parallel.sh: generation $g incomplete; archive unchanged; re-run to continue" >&2; exit 3 ;;
	esac
	"$here/archive-append.sh" "$archive" "$gdir/results.ndjson" 8>&- || exit 3
	[ "$keep" = 1 ] || rm -rf "$gdir"
	if [ "$quiet" = 0 ]; then summary "$g" || exit; fi
done
rmdir "$work" 2>/dev/null || true
exit "$status"
