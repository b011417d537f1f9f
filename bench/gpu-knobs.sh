#!/usr/bin/env bash
# bench/gpu-knobs.sh — a task's cuda seed with chosen ktune knob values,
# each variant verified at every test size and timed at the bench sizes
# against the baseline and the seed (kcompile | kverify | ktime), one table:
# per variant and size the median µs, % of the device's measured copy
# bandwidth, speedup over the baseline; with --torch also torch's own
# operation at the same sizes (CUDA events, median of 100 after 10 warm-up;
# bench/torch_ops.py says what each task is compared with).
# --verify-only: compile and verify only (a correctness sweep: one line a
# variant, its status and, when not verified, why).  --file F: the variants
# are F's lines too (bench/seeds/TASK.txt: a covering set that uses every
# listed value of every knob, then the combinations expected to be fastest).
#   usage: bench/gpu-knobs.sh [--torch] [--verify-only] [--file F] TASK ['KNOB=V KNOB=V ...' ...]
#   (one quoted argument a variant; '' is the seed as it is)
#   env: KSCIBIN (default build/gpu/bin), KSCI_BWRAP; records in $OUT (or ./gpu-logs)
set -euo pipefail
case ${1:-} in -h | --help) sed -n '2,/^\([^#]\|$\)/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
torch=0 vonly=0 file=""
while [ $# -gt 0 ]; do
	case $1 in
	--torch) torch=1 ;;
	--verify-only) vonly=1 ;;
	--file) file=$2; shift ;;
	-*) echo "gpu-knobs: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
if [ $# = 0 ] || { [ $# = 1 ] && [ -z "$file" ]; }; then
	echo "usage: bench/gpu-knobs.sh [--torch] [--verify-only] [--file F] TASK ['KNOB=V ...' ...]" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$here/.." && pwd)
export PATH="${KSCIBIN:-$ROOT/build/gpu/bin}:$PATH"
export KSCI_TASKS=${KSCI_TASKS:-$ROOT/data/tasks}
task=$1
shift
if [ -n "$file" ]; then
	mapfile -t extra < <(grep -v '^#' "$file")
	set -- "$@" "${extra[@]}"
fi
out=${OUT:-$PWD/gpu-logs}/knobs
mkdir -p "$out"
seed=$KSCI_TASKS/$task/seed.cu
i=0
for v in "$@"; do
	src=$(cat "$seed")
	for kv in $v; do
		k=${kv%%=*} val=${kv#*=}
		grep -q "^#define $k " "$seed" || { echo "gpu-knobs: $task's seed has no knob $k" >&2; exit 2; }
		src=$(printf '%s\n' "$src" | sed "s/^#define $k [^ ]* /#define $k $val /")
	done
	jq -cn --arg t "$task" --arg s "$src" --arg id "v$i" --arg v "${v:-seed}" \
		'{id: $id, task: $t, backend: "cuda", generation: 1, parents: [], source: $s, status: "generated", note: $v}'
	i=$((i + 1))
done | kcompile -j 8 2>"$out/$task.err" | kverify 2>>"$out/$task.err" |
	if [ "$vonly" = 1 ]; then cat; else ktime 2>>"$out/$task.err"; fi >"$out/$task.nd"
echo "== $task: $(nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader 2>&1)"
if [ "$vonly" = 1 ]; then
	jq -r '"\(.note)\t\(.status)\t\((.verify // .compile).message // "" | .[0:300])"' "$out/$task.nd"
	echo "$task: $(jq -r .status "$out/$task.nd" | sort | uniq -c | xargs)"
	exit 0
fi
jq -r '.note as $v | if .status != "timed" then "\($v)\t\(.status)\t\((.time // .verify // .compile).message // "" | .[0:200])"
	else .time.sizes[] | "\($v)\t\(.size | to_entries | map("\(.value)") | join("x"))\t\(.candidate.median_us * 100 | round / 100) us\t\(.pct_peak_bw // 0 | . * 10 | round / 10) % of copy bw\t\(.speedup_vs_baseline * 1000 | round / 1000)x baseline (\(.baseline.median_us * 100 | round / 100) us)\tseed \(.seed.median_us * 100 | round / 100) us" end' "$out/$task.nd"
if [ "$torch" = 1 ]; then
	python3 "$here/torch_ops.py" "$KSCI_TASKS/$task/task.json" | awk -F'\t' '{ print $1 "\t" $2 "\t" $3 " us (median of 100, 8 inputs in turn; " $4 ")" }'
fi
