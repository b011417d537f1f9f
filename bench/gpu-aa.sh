#!/usr/bin/env bash
# bench/gpu-aa.sh — the A/A figures docs/gpu.md reports, in one run on a GPU
# machine, with the device's state beside every run: softmax from a cold
# machine (the runs right after it started), the GPU then held busy for
# --heat seconds, softmax again (--runs, ktime --budget 2, with the
# KernelBench-style loop), and matmul.  Logs go to $OUT (or ./gpu-logs).
#   usage: bench/gpu-aa.sh [--cold N] [--runs N] [--heat SEC] [--matmul N]
#   env: KSCIBIN (default build/gpu/bin), KSCI_BWRAP (a carried bwrap)
set -uo pipefail
cold=6 runs=20 heat=30 mm=12
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) sed -n '2,/^\([^#]\|$\)/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
	--cold) cold=$2; shift ;;
	--runs) runs=$2; shift ;;
	--heat) heat=$2; shift ;;
	--matmul) mm=$2; shift ;;
	*) echo "gpu-aa: unknown argument: $1" >&2; exit 2 ;;
	esac
	shift
done
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export KSCIBIN=${KSCIBIN:-$here/build/gpu/bin}
out=${OUT:-$here/gpu-logs}
mkdir -p "$out"
smi() { nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw,clocks_event_reasons.active --format=csv,noheader 2>&1; }
echo "== start: $(smi)"
if [ "$cold" -ge 2 ]; then
	echo "== softmax, cold machine, $cold runs"
	"$here/bench/aa.sh" --task softmax --runs "$cold" --budget 2 --out "$out/aa-softmax-cold" 2>&1 | tail -n 40
fi
if [ "$heat" -gt 0 ]; then
	echo "== heat: $heat s of SGEMM (torch) before: $(smi)"
	python3 -c "
import time, torch
a = torch.randn(8192, 8192, device='cuda')
t = time.time()
while time.time() - t < $heat:
    b = a @ a
    torch.cuda.synchronize()
" 2>&1 | tail -n 3
	echo "== after: $(smi)"
fi
if [ "$runs" -ge 2 ]; then
	echo "== softmax, $runs runs, --budget 2, with the KernelBench-style loop"
	"$here/bench/aa.sh" --task softmax --runs "$runs" --budget 2 --kb --out "$out/aa-softmax" 2>&1 | tail -n 60
fi
if [ "$mm" -ge 2 ]; then
	echo "== matmul, $mm runs"
	"$here/bench/aa.sh" --task matmul --runs "$mm" --out "$out/aa-matmul" 2>&1 | tail -n 40
fi
echo "== end: $(smi)"
