#!/usr/bin/env bash
# bench/gpu-offline.sh — the offline search a user with no model key gets:
# evolve.sh with kgen's mutate on a task's cuda seed (compose and the race at
# their defaults), stopped after M minutes; then per benchmark size the
# fastest timed candidate (µs, % of the copy bandwidth, its id, generator
# and knob values), the compositions, and the archive's best; then the table
# of docs/tasks.md: per size torch µs, baseline µs, seed µs, the best's µs,
# its % of the copy bandwidth and of the fp32 peak, its speed-up over torch
# and over the baseline, and the run's minutes.  --torch times torch's own
# operation first, in the same call (bench/torch_ops.py); without it the
# torch column is empty.
# --resume ARCHIVE goes on from a copy of an earlier run's archive (the
# table's minutes are then this run's: add the earlier run's).
#   usage: bench/gpu-offline.sh [--minutes M] [--population P] [--strategy S] [--torch] [--resume ARCHIVE] TASK
#   env: KSCIBIN (default build/gpu/bin), KSCI_BWRAP; the archive in $OUT (or ./gpu-logs)
set -euo pipefail
minutes=8 pop=16 strategy=tournament torch=0 resume=""
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) sed -n '2,/^\([^#]\|$\)/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
	--torch) torch=1 ;;
	--minutes) minutes=$2; shift ;;
	--population) pop=$2; shift ;;
	--strategy) strategy=$2; shift ;;
	--resume) resume=$2; shift ;;
	-*) echo "gpu-offline: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
[ $# = 1 ] || { echo "usage: bench/gpu-offline.sh [--minutes M] [--population P] [--strategy S] [--torch] [--resume ARCHIVE] TASK" >&2; exit 2; }
task=$1
here=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$here/.." && pwd)
export KSCIBIN=${KSCIBIN:-$ROOT/build/gpu/bin}
export PATH="$KSCIBIN:$PATH"
out=${OUT:-$PWD/gpu-logs}
mkdir -p "$out"
arc=$out/$task-offline.ndjson.gz
rm -f "$arc"
[ -z "$resume" ] || cp "$resume" "$arc"
echo "== $task: $(nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader 2>&1)"
tt=$out/$task-torch.tsv
: >"$tt"
if [ "$torch" = 1 ]; then
	python3 "$here/torch_ops.py" "${KSCI_TASKS:-$ROOT/data/tasks}/$task/task.json" >"$tt" || echo "torch: failed" >&2
	cat "$tt"
fi
t0=$(date +%s)
# Every 20 s, the stages running then (which pass a generation is in, and for
# how long): a run cut short by its call's limit still shows where it was.
(while sleep 20; do
	ps -eo etimes=,args= | awk -v t="$(date +%T)" '$2 ~ /(^|\/)k(select|gen|compile|verify|time|harness-cuda)$/ { a = $2; sub(/.*\//, "", a); s = s " " a "(" $1 "s" ($3 ~ /^--/ ? " " $3 : "") ")" } END { if (s != "") print t " running:" s }'
done) &
watch=$!
"$ROOT/pipelines/evolve.sh" --task "$task" --backend cuda --generations 1000 --population "$pop" \
	--strategy "$strategy" --max-minutes "$minutes" --archive "$arc" 2>&1 |
	while IFS= read -r l; do printf '%s %s\n' "$(date +%T)" "$l"; done # as it goes: a run cut short still shows where its time went
run=$(($(date +%s) - t0))
kill "$watch" 2>/dev/null || true
echo "run: $run s"
nd=$out/$task-offline.nd
gzip -dc "$arc" >"$nd"
echo "per generation: records, and seconds summed over them in compile / verify / time (the race's last round's):"
jq -rs 'group_by(.generation)[] | "  g\(.[0].generation): \(length) records, compile \(map(.compile.seconds // 0) | add | . * 10 | round / 10) s, verify \(map(.verify.seconds // 0) | add | . * 10 | round / 10) s, time \(map(.time.seconds // 0) | add | . * 10 | round / 10) s"' "$nd"
echo "statuses: $(jq -r .status "$nd" | sort | uniq -c | xargs)"
echo "fastest per size (µs, % of copy bandwidth, id, generator, knobs):"
jq -r 'select(.status == "timed") | .id as $i | .origin.generator as $g | .time.sizes[] |
	[(.size | to_entries | map("\(.value)") | join("x")), .candidate.median_us, (.pct_peak_bw // 0), $i, $g] | @tsv' "$nd" |
	sort -t$'\t' -k1,1 -k2,2n | awk -F'\t' '$1 != p { print; p = $1 }' |
	while IFS=$'\t' read -r size us pct id gen; do
		knobs=$(jq -r --arg i "$id" 'select(.id == $i) | .source' "$nd" | awk '/^#define [A-Z_]+ [^ ]+ +\/\/ ktune:/ { printf "%s=%s ", $2, $3 }')
		printf '  %s\t%.2f us\t%.1f %%\t%s\t%s\t%s\n' "$size" "$us" "$pct" "$id" "$gen" "$knobs"
	done
echo "compositions: $(jq -r 'select(.origin.generator == "compose") | "\(.id) \(.status) g\(.generation) [\(.time.sizes // [] | map(.candidate.median_us * 100 | round / 100 | tostring) | join(", "))]"' "$nd" | paste -sd ';')"
summary=$(kselect --summary --task "$task" --backend cuda "$nd")
echo "best: $(jq -c .best <<<"$summary")"
best=$(jq -r '.best.id // empty' <<<"$summary")
[ -n "$best" ] || { echo "table: no timed candidate"; exit 0; }
echo "table (the archive's best $best; torch from the same call):"
echo "  size | torch us | baseline us | seed us | best us | % of copy bw | % of fp32 peak | vs torch | vs baseline | run min"
jq -r --arg i "$best" --rawfile tt "$tt" --argjson run "$run" 'select(.id == $i) | .time.sizes[] |
	(.size | to_entries | map("\(.value)") | join("x")) as $s |
	([$tt | split("\n")[] | split("\t") | select(length > 2 and .[1] == $s) | .[2] | tonumber?] | first) as $t |
	def r2: . * 100 | round / 100;
	"  \($s) | \($t // "-") | \(.baseline.median_us | r2) | \(.seed.median_us | r2) | \(.candidate.median_us | r2) | \(.pct_peak_bw // 0 | . * 10 | round / 10) | \(.pct_peak_flops // "-" | if type == "number" then . * 10 | round / 10 else . end) | \(if $t then ($t / .candidate.median_us | r2 | tostring) + "x" else "-" end) | \(.speedup_vs_baseline | . * 1000 | round / 1000)x | \($run / 60 * 10 | round / 10)"' "$nd"
