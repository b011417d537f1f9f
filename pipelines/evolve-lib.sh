# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034 # variables set and read across the sourcing scripts
# pipelines/evolve-lib.sh — what evolve.sh and evolve-parallel.sh share:
# finding the tools, checking numbers, reading the archive's last generation
# and printing a generation's summary. Sourced, not run; uses the callers'
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

# Highest generation of this task/back end in the archive (-1: none).
last_generation() {
	[ -s "$archive" ] || { echo -1; return; }
	gzip -dc "$archive" 2>/dev/null | jq -r --arg t "$task" --arg b "$backend" \
		'select(.task == $t and .backend == $b and (.generation | type) == "number") | .generation' 2>/dev/null |
		sort -n | tail -n 1 | grep . || echo -1
}

# summary G: one line — generation G's statuses and the best so far.
summary() {
	gzip -dc "$archive" | jq -rs --arg t "$task" --arg b "$backend" --argjson g "$1" '
		map(select(.task == $t and .backend == $b)) as $all
		| ($all | map(select(.generation == $g)) | group_by(.status)
		   | map("\(.[0].status) \(length)") | join(", ")) as $counts
		| ($all | map(select(.status == "timed" and (.time.speedup_vs_baseline | type) == "number"))
		   | max_by(.time.speedup_vs_baseline)) as $best
		| "generation \($g): \($counts)"
		  + (if $best then "; best so far \($best.id) (generation \($best.generation)): "
		       + "\($best.time.speedup_vs_baseline * 1000 | round / 1000)x vs baseline, "
		       + "\(($best.time.speedup_vs_seed // 0) * 1000 | round / 1000)x vs seed"
		     else "; nothing timed yet" end)'
}
