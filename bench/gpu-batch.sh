#!/usr/bin/env bash
# bench/gpu-batch.sh — does a longer timed batch do what more processes per
# role did?  The judge's exchange with a child (request, SIGCONT, "done";
# 0.1–0.2 ms on an H100) is calibrated with one child's empty calls and
# subtracted; if each process's exchange differs from that by tens of µs, a
# 5 ms batch carries an offset of its own of some tenths of a percent — the
# per-process offset docs/gpu.md measured.  A 20 ms batch cuts that share
# by four without the 0.6 s each extra process costs.  One call on a GPU
# machine: the A/A of softmax and matmul with one process per role and
# --batch 0.02, then the cost of a new softmax candidate (bench/gpu-cost.sh).
#   usage: bench/gpu-batch.sh [--batch SEC] [--processes N] [--runs N] [--mm-runs N]
#   env: KSCIBIN (default build/gpu/bin), KSCI_BWRAP; logs under $OUT (or ./gpu-logs)
set -uo pipefail
batch=0.02 procs=1 runs=20 mm=10
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	--batch) batch=$2; shift ;;
	--processes) procs=$2; shift ;;
	--runs) runs=$2; shift ;;
	--mm-runs) mm=$2; shift ;;
	*) echo "gpu-batch: unknown argument: $1" >&2; exit 2 ;;
	esac
	shift
done
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export KSCIBIN=${KSCIBIN:-$here/build/gpu/bin}
out=${OUT:-$here/gpu-logs}
mkdir -p "$out"
echo "== $(nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader 2>&1)"
echo "== softmax A/A, --processes $procs --batch $batch, $runs runs"
"$here/bench/aa.sh" --task softmax --runs "$runs" --processes "$procs" --batch "$batch" --out "$out/aa-softmax" 2>&1 | tail -n 32
echo "== cost of a new softmax candidate, --processes $procs --batch $batch"
for _ in 1 2; do # each a fresh cache, so "cold" is a new candidate both times
	"$here/bench/gpu-cost.sh" --processes "$procs" --batch "$batch" softmax 2>&1 | tail -n 3
done
echo "== matmul A/A, --processes $procs --batch $batch, $mm runs"
"$here/bench/aa.sh" --task matmul --runs "$mm" --processes "$procs" --batch "$batch" --out "$out/aa-matmul" 2>&1 | tail -n 32
