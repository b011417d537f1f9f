#!/usr/bin/env bash
# bench/gpu-cost.sh — seconds per candidate for compile + verify + time on a
# GPU machine, cold (empty compile cache: the candidate, reference, baseline
# and seed are all compiled) and cached (same candidate again), for each task
# named.  Prints one line per run: task, cold/cached, per-stage and total
# seconds, and whether every timed size met the SEM rule.
set -euo pipefail
usage() { echo "usage: bench/gpu-cost.sh [--budget SEC] [--processes N] [--batch SEC] [--arena MB] [TASK ...]   (default: matmul softmax; env KSCIBIN)"; }
budget="" procs="" batch="" arena=""
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) usage; exit 0 ;;
	--budget) budget=$2; shift ;;
	--processes) procs=$2; shift ;;
	--batch) batch=$2; shift ;;
	--arena) arena=$2; shift ;;
	*) break ;;
	esac
	shift
done
[ $# -gt 0 ] || set -- matmul softmax
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=${KSCIBIN:-$here/build/bin}
export KSCI_TASKS=${KSCI_TASKS:-$here/data/tasks}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ksci-cost.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# Three runs per task:
#   first   empty cache: candidate, reference(s), baseline and seed all compiled
#           (once per task and machine in a real search);
#   cold    a new candidate (the seed plus a unique comment) with the task's own
#           files already compiled: what each new child of a search costs;
#   cached  the same candidate again (its compile served from the cache).
for task in "$@"; do
	export KSCI_CACHE="$tmp/cache-$task"
	for run in first cold cached; do
		nonce=""
		[ "$run" = first ] || nonce=$(printf '\n// cost probe %s\n' "$task-$$")
		jq -cn --arg t "$task" --rawfile s "$KSCI_TASKS/$task/seed.cu" --arg n "$nonce" \
			'{id: "cost", task: $t, backend: "cuda", generation: 0, parents: [], source: ($s + $n), status: "generated"}' >"$tmp/in.json"
		t0=$(date +%s.%N)
		"$BIN/kcompile" <"$tmp/in.json" | "$BIN/kverify" | "$BIN/ktime" ${budget:+--budget "$budget"} ${procs:+--processes "$procs"} ${batch:+--batch "$batch"} ${arena:+--arena "$arena"} >"$tmp/out.json"
		t1=$(date +%s.%N)
		python3 -c 'import json,sys
r = json.load(open(sys.argv[1])); t = r.get("time", {})
conv = all(s.get("converged") for s in t.get("sizes", []))
print("%-8s %-6s compile %5.2f s  verify %5.2f s  time %5.2f s  total %5.2f s  status %s  sem-rule-met %s  runs %s" % (
  r["task"], sys.argv[2], r["compile"]["seconds"], r["verify"]["seconds"], t.get("seconds", 0),
  float(sys.argv[4]) - float(sys.argv[3]), r["status"], conv, [s["candidate"]["n"] for s in t.get("sizes", [])]))' \
			"$tmp/out.json" "$run" "$t0" "$t1"
	done
done
