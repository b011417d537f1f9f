#!/usr/bin/env bash
# bench/gpu-all.sh — everything docs/gpu.md reports, in one run on a GPU
# machine: make check-gpu, cost per candidate (default budget and 0.3 s), and
# agreement with Nsight Compute.  Logs go to $OUT (or ./gpu-logs).
#   usage: bench/gpu-all.sh      (env: KSCIBIN, default build/gpu/bin when present)
set -uo pipefail
case ${1:-} in -h | --help) sed -n '2,/^\([^#]\|$\)/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ -z "${KSCIBIN:-}" ]; then
	if [ -x "$here/build/gpu/bin/kharness-cuda" ]; then KSCIBIN=$here/build/gpu/bin; else KSCIBIN=$here/build/bin; fi
fi
export KSCIBIN KSCI_TASKS="$here/data/tasks"
out=${OUT:-$here/gpu-logs}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv 2>&1 | tee "$out/gpu.txt"
"$here/tests/gpu/run.sh" 2>&1 | tee "$out/check-gpu.log"
"$here/bench/gpu-cost.sh" matmul softmax 2>&1 | tee "$out/cost.log"
"$here/bench/gpu-cost.sh" --budget 0.3 matmul softmax 2>&1 | tee "$out/cost-0.3.log"
"$here/bench/ncu-agree.sh" softmax matmul 2>&1 | tee "$out/ncu.log"
