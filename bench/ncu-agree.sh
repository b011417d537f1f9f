#!/usr/bin/env bash
# bench/ncu-agree.sh — agreement of ktime's timing with Nsight Compute's
# gpu__time_duration, on a GPU machine with ncu.  For each task named, the
# task's CUDA seed is timed by ktime as usual; then the same harness job
# (candidate only) is run directly under ncu — outside the sandbox, whose
# fresh network namespace ncu cannot reach into — and the median kernel
# duration ncu reports is compared with ktime's median.
# Prints one line per task and size: ktime median, ncu median, ratio.
set -euo pipefail
usage() { echo "usage: bench/ncu-agree.sh [TASK ...]   (default: softmax matmul; env KSCIBIN, NCU)"; }
case ${1:-} in -h | --help) usage; exit 0 ;; esac
[ $# -gt 0 ] || set -- softmax matmul
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=${KSCIBIN:-$here/build/bin}
NCU=${NCU:-ncu}
export KSCI_TASKS=${KSCI_TASKS:-$here/data/tasks}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ksci-ncu.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for task in "$@"; do
	jq -cn --arg t "$task" --rawfile s "$KSCI_TASKS/$task/seed.cu" \
		'{task: $t, backend: "cuda", generation: 0, parents: [], source: $s, status: "generated"}' >"$tmp/in.json"
	"$BIN/kcompile" <"$tmp/in.json" | "$BIN/kverify" >"$tmp/v.json"
	KSCI_JOB_DUMP=$tmp/job.json "$BIN/ktime" --budget 0.5 <"$tmp/v.json" >"$tmp/t.json"
	# Candidate only, one size at a time, so every profiled kernel is the candidate's.
	nsizes=$(jq '.time.sizes | length' "$tmp/t.json")
	for ((k = 0; k < nsizes; k++)); do
		size=$(jq -c ".time.sizes[$k].size" "$tmp/t.json")
		jq -c --argjson k "$k" 'del(.baseline, .seed) | .budget_s = 0.3 | .only_size = $k' "$tmp/job.json" >"$tmp/job1.json"
		"$NCU" --target-processes all --clock-control none --cache-control all \
			--metrics gpu__time_duration.sum --launch-skip 10 --launch-count 30 --csv \
			--log-file "$tmp/ncu.csv" "$BIN/kharness-cuda" <"$tmp/job1.json" >"$tmp/h.out" 2>"$tmp/ncu.err" || {
			echo "$task $size: ncu failed: $(tail -n 3 "$tmp/ncu.err")"
			continue
		}
		python3 - "$tmp/ncu.csv" "$tmp/t.json" "$k" "$task" "$size" <<'PY'
import csv, json, statistics, sys
rows = [l for l in open(sys.argv[1]) if l.startswith('"')]
d = []
for r in csv.DictReader(rows):
    if r.get("Metric Name") == "gpu__time_duration.sum":
        v = float(r["Metric Value"].replace(",", ""))
        unit = r.get("Metric Unit", "")
        d.append(v / 1000 if unit == "nsecond" or unit == "ns" else v * 1000 if unit in ("msecond", "ms") else v)
# A solve may launch several kernels: sum durations per call is not known here,
# so report the per-launch median and the count.
t = json.load(open(sys.argv[2]))["time"]["sizes"][int(sys.argv[3])]["candidate"]
if not d:
    print("%s %s: ncu reported no kernels" % (sys.argv[4], sys.argv[5]))
else:
    m = statistics.median(d)
    print("%s %s: ktime median %.2f us (events, L2 flushed), ncu gpu__time_duration median %.2f us over %d launches, ratio %.3f"
          % (sys.argv[4], sys.argv[5], t["median_us"], m, len(d), t["median_us"] / m))
PY
	done
done
