#!/bin/bash
# seventeenth session, call 1: --stop-stat median on matmul then softmax (A/A back to back and idle, latency 16)
export KSCI_BWRAP=$(sh tests/gpu/carried-bwrap.sh .carry) KSCIBIN=$PWD/build/gpu/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
start=$(date +%s)
for t in matmul softmax; do
	left=$(( 575 - ($(date +%s) - start) ))
	[ $left -gt 120 ] || { echo "no time left for $t"; break; }
	timeout $left bash bench/gpu-throughput.sh --aa 20 --aa-gap 3.5 --children 16 --latency 16 --gap 1 --new-only \
		--ktime-opt --stop-stat=median $t > $OUT/median-$t.txt 2>$OUT/median-$t.err
	echo "$t rc=$? at $(( $(date +%s) - start )) s"
done
