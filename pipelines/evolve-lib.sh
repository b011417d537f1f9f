# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034 # variables set and read across the sourcing scripts
# pipelines/evolve-lib.sh — what evolve.sh and evolve-parallel.sh share:
# finding the tools, checking numbers, reading the archive's last generation
# and printing a generation's summary (both from one small object that
# kselect --summary writes; jq reads only that). Sourced, not run; uses the callers'
# variables archive, task, backend.

# The options both scripts take, with their defaults. evolve_option OPT [ARG]
# takes one of them (setting evolve_shift to the words it used) and returns 0,
# or returns 1 when OPT is not one of them.
task=matmul backend=c gens=5 pop=8 archive="" strategy=tournament seed=1
generator=${KSCI_PROVIDER:-mutate} model="" budget="" quiet=0
sel_opts=() gen_opts=()
evolve_option() {
	evolve_shift=2
	case $1 in
	-q | --quiet) quiet=1; evolve_shift=1; return 0 ;;
	--task | --backend | --generations | --population | --archive | --strategy | --seed | \
		--provider | --generator | --model | --budget | --kselect-opt | --kgen-opt)
		[ $# -ge 2 ] || { echo "${0##*/}: $1 needs a value" >&2; exit 2; } ;;
	*) return 1 ;;
	esac
	case $1 in
	--task) task=$2 ;;
	--backend) backend=$2 ;;
	--generations) gens=$2 ;;
	--population) pop=$2 ;;
	--archive) archive=$2 ;;
	--strategy) strategy=$2 ;;
	--seed) seed=$2 ;;
	--provider | --generator) generator=$2 ;;
	--model) model=$2 ;;
	--budget) budget=$2 ;;
	--kselect-opt) sel_opts+=("$2") ;;
	--kgen-opt) gen_opts+=("$2") ;;
	esac
}

# evolve_find_tools PROG TOOL...: put $KSCIBIN (default: the build next to
# this script) first on PATH and check every TOOL is there (exit 3 if not).
evolve_find_tools() {
	local prog=$1 here t
	shift
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	if [ -z "${KSCIBIN:-}" ] && [ -x "$here/../build/bin/kselect" ]; then
		KSCIBIN=$here/../build/bin
	fi
	[ -n "${KSCIBIN:-}" ] && PATH="$KSCIBIN:$PATH"
	for t in "$@"; do
		command -v "$t" >/dev/null || { echo "$prog: $t not found (build with make)" >&2; exit 3; }
	done
}

# evolve_check_numbers PROG GENS POP SEED: usage error (exit 2) unless all are
# non-negative integers and POP >= 1.
evolve_check_numbers() {
	local prog=$1 n
	shift
	for n in "$@"; do
		case $n in '' | *[!0-9]*) echo "$prog: '$n' is not a non-negative integer" >&2; exit 2 ;; esac
	done
	[ "$2" -ge 1 ] || { echo "$prog: --population must be at least 1" >&2; exit 2; }
}

# evolve_summary [--generation G]: kselect's one JSON object summing the
# archive up for this task and back end (docs/tools/kselect.md, --summary),
# read once through its fast path. An archive kselect cannot read to its end
# (a torn last gzip member, a line that is not JSON) is a message and
# status 3: continuing from a wrong last generation would run away.
evolve_summary() {
	local out rc=0
	out=$(kselect --summary --task "$task" --backend "$backend" "$@" "$archive") || rc=$?
	if [ "$rc" != 0 ]; then
		echo "${0##*/}: cannot read all of $archive (kselect --summary exit $rc, see above); repair it (e.g. drop its torn last gzip member) and run again" >&2
		return 3
	fi
	printf '%s\n' "$out"
}

# Highest generation of this task/back end in the archive (-1: none); exit
# status 3 when the archive cannot be read completely.
last_generation() {
	local s
	[ -s "$archive" ] || { echo -1; return 0; }
	s=$(evolve_summary) || return 3
	jq -r .last_generation <<<"$s"
}

# summary G: one line — generation G's statuses and the best so far; exit
# status 3 when the archive cannot be read completely.
summary() {
	local s
	s=$(evolve_summary --generation "$1") || return 3
	jq -r '
		.statuses as $st
		| "generation \(.generation): \([$st | keys[] | "\(.) \($st[.])"] | join(", "))"
		+ (if .best then "; best so far \(.best.id) (generation \(.best.generation)): "
		     + "\(.best.speedup_vs_baseline * 1000 | round / 1000)x vs baseline, "
		     + "\((.best.speedup_vs_seed // 0) * 1000 | round / 1000)x vs seed"
		   else "; nothing timed yet" end)' <<<"$s"
}
