#!/usr/bin/env bash
# bench/gpu-batch.sh — the judge's A/A and cost at given ktime settings, in
# one call on a GPU machine: the A/A of softmax (with the KernelBench-style
# loop beside it, --kb) and of matmul, the cost of a new softmax candidate
# (bench/gpu-cost.sh, twice, each with a fresh cache) and, with --checks,
# tests/gpu/run.sh and tests/gpu/attacks.sh.  First written to ask whether
# a longer timed batch does what more processes per role did (docs/gpu.md,
# "one process per role and 20 ms batches"); --arena and --warmup came with
# the arena's size (docs/gpu.md, "the arena's size").
#   usage: bench/gpu-batch.sh [--batch SEC] [--processes N] [--arena MB] [--runs N]
#                             [--mm-runs N] [--warmup N] [--kb] [--checks]
#   env: KSCIBIN (default build/gpu/bin), KSCI_BWRAP; logs under $OUT (or ./gpu-logs)
set -uo pipefail
batch=0.02 procs=1 runs=20 mm=10 arena="" warmup=0 kb="" checks=0
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) sed -n '2,/^\([^#]\|$\)/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
	--batch) batch=$2; shift ;;
	--processes) procs=$2; shift ;;
	--arena) arena=$2; shift ;;
	--runs) runs=$2; shift ;;
	--mm-runs) mm=$2; shift ;;
	--warmup) warmup=$2; shift ;;
	--kb) kb=--kb ;;
	--checks) checks=1 ;;
	*) echo "gpu-batch: unknown argument: $1" >&2; exit 2 ;;
	esac
	shift
done
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export KSCIBIN=${KSCIBIN:-$here/build/gpu/bin}
out=${OUT:-$here/gpu-logs}
mkdir -p "$out"
set_=(--processes "$procs" --batch "$batch" ${arena:+--arena "$arena"})
start=$SECONDS
echo "== $(nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,memory.used,memory.total --format=csv,noheader 2>&1)"
echo "== softmax A/A, ${set_[*]}, $runs runs after $warmup left out"
"$here/bench/aa.sh" --task softmax --runs "$runs" --warmup "$warmup" "${set_[@]}" $kb --out "$out/aa-softmax" 2>&1 | tail -n 90
echo "== at $((SECONDS - start)) s: cost of a new softmax candidate, ${set_[*]}"
for _ in 1 2; do # each a fresh cache, so "cold" is a new candidate both times
	"$here/bench/gpu-cost.sh" --processes "$procs" --batch "$batch" ${arena:+--arena "$arena"} softmax 2>&1 | tail -n 3
done
echo "== at $((SECONDS - start)) s: matmul A/A, ${set_[*]}, $mm runs"
"$here/bench/aa.sh" --task matmul --runs "$mm" "${set_[@]}" --out "$out/aa-matmul" 2>&1 | tail -n 32
if [ "$checks" = 1 ]; then
	echo "== at $((SECONDS - start)) s: tests/gpu/run.sh, tests/gpu/attacks.sh"
	"$here/tests/gpu/run.sh" 2>&1 | tail -n 3
	"$here/tests/gpu/attacks.sh" 2>&1 | grep -E "^not ok|passed" | tail -n 20
fi
echo "== done at $((SECONDS - start)) s"
