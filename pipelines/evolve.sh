#!/usr/bin/env bash
# evolve.sh — run an evolutionary kernel search on one task.
#
# Each generation is one pipe:
#   kselect ARCHIVE | kgen | kcompile | kverify | ktime
# whose records are appended, as one gzip member, to the archive once the
# generation is complete. The archive is the only state: re-running with the
# same archive continues after its last complete generation.
set -euo pipefail

usage() {
	cat <<'USAGE'
usage: evolve.sh [options]
  --task NAME          task under the tasks root (default: matmul)
  --backend B          c | cuda | hip (default: c)
  --generations G      stop once generation G is complete (default: 5; the seed is generation 0)
  --population P       children per generation (default: 8)
  --archive FILE       gzip NDJSON archive, appended to (default: runs/TASK-BACKEND.ndjson.gz)
  --strategy S         kselect strategy (default: tournament)
  --seed N             base random seed; generation g uses N+g (default: 1)
  --provider P         kgen provider: mutate | openai | anthropic | cmd | replay
                       (default: $KSCI_PROVIDER or mutate; --generator is the same)
  --model M            model name for the provider (kgen --model)
  --budget SEC         ktime budget per benchmark size (default: ktime's)
  --kselect-opt OPT    extra option for kselect (repeatable); likewise
  --kgen-opt, --kcompile-opt, --kverify-opt, --ktime-opt
  -q, --quiet          no per-generation summary
  -h, --help           this text
Environment: KSCI_TASKS (tasks root), KSCI_CACHE (compile cache), KSCIBIN
(directory of the ksci tools; default: next to this script's ../build/bin, then PATH).
Exit status: 0 done; 1 a generation's tools reported bad input (records kept);
2 usage; 3 a tool failed fatally or no parent could be selected.
USAGE
}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=evolve-lib.sh
. "$here/evolve-lib.sh"
comp_opts=() ver_opts=() time_opts=()
while [ $# -gt 0 ]; do
	if evolve_option "$@"; then
		shift "$evolve_shift"
		continue
	fi
	case $1 in
	--kcompile-opt) comp_opts+=("$2"); shift ;;
	--kverify-opt) ver_opts+=("$2"); shift ;;
	--ktime-opt) time_opts+=("$2"); shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "evolve.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
	esac
	shift
done
evolve_check_numbers evolve.sh "$gens" "$pop" "$seed"
[ -n "$archive" ] || archive="runs/$task-$backend.ndjson.gz"
[ -n "$budget" ] && time_opts+=(--budget "$budget")
[ -n "$model" ] && gen_opts+=(--model "$model")

evolve_find_tools evolve.sh kselect kgen kcompile kverify ktime jq gzip

mkdir -p "$(dirname "$archive")"
[ -e "$archive" ] || : >"$archive"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/evolve.XXXXXX")
trap 'rm -rf "$tmp"' EXIT


status=0
while :; do
	last=$(last_generation)
	[ "$last" -ge "$gens" ] && break
	g=$((last + 1))
	out="$tmp/gen.ndjson"
	set +e
	kselect --task "$task" --backend "$backend" --strategy "$strategy" -n "$pop" \
		--seed "$((seed + g))" "${sel_opts[@]}" "$archive" |
		kgen --provider "$generator" --seed "$((seed + g))" --archive "$archive" "${gen_opts[@]}" |
		kcompile "${comp_opts[@]}" |
		kverify "${ver_opts[@]}" |
		ktime "${time_opts[@]}" >"$out"
	rcs=("${PIPESTATUS[@]}")
	set -e
	worst=0
	for rc in "${rcs[@]}"; do [ "$rc" -gt "$worst" ] && worst=$rc; done
	if [ "$worst" -ge 2 ]; then
		echo "evolve.sh: generation $g failed (exit statuses: ${rcs[*]}); archive unchanged" >&2
		exit 3
	fi
	[ "$worst" = 1 ] && status=1
	if [ ! -s "$out" ]; then
		echo "evolve.sh: generation $g produced no records (exit statuses: ${rcs[*]})" >&2
		exit 3
	fi
	# One gzip member per generation, appended in one write under a lock so
	# concurrent runs on the same archive never interleave partial members.
	gzip -c "$out" >"$tmp/gen.gz"
	(
		flock 9
		cat "$tmp/gen.gz" >>"$archive"
	) 9>>"$archive.lock"
	[ "$quiet" = 1 ] || summary "$g"
done
exit "$status"
