#!/usr/bin/env bash
# bench/matmul-reference.sh — how long matmul's device reference takes (the
# judge runs it for every checked call of a candidate at the benchmark
# sizes) and how close it is to reference.c's arithmetic: each REF.cu
# (default data/tasks/matmul/reference.cu) is built with the driver
# bench/matmul-reference.cu, which times its solve at the task's
# bench_cuda sizes and a few ragged ones, and counts the elements whose
# float differs from a one-thread-an-element k-order double sum.
# Exit 1 if an element is outside the task's tolerance or the driver failed
# (a CUDA call named on stderr); a build that fails stops it with nvcc's status.
#   usage: bench/matmul-reference.sh [REF.cu ...]   (on a GPU; needs nvcc)
#   env: CUDA_HOME (default /usr/local/cuda), KSCI_CUDA_ARCH (default sm_90a)
set -euo pipefail
case ${1:-} in -h | --help) sed -n '2,/^\([^#]\|$\)/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ $# -gt 0 ] || set -- "$here/data/tasks/matmul/reference.cu"
CUDA=${CUDA_HOME:-/usr/local/cuda}
arch=${KSCI_CUDA_ARCH:-sm_90a}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ksci-mmref.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
sizes=$(jq -r '.bench_cuda[] | "\(.M) \(.N) \(.K)"' "$here/data/tasks/matmul/task.json" | xargs)
rc=0
for ref in "$@"; do
	"$CUDA/bin/nvcc" -O3 -std=c++17 -gencode "arch=compute_${arch#sm_},code=$arch" -o "$tmp/drv" \
		"$here/bench/matmul-reference.cu" "$ref"
	echo "== $ref ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>&1 | head -n 1))"
	# shellcheck disable=SC2086 # the sizes are words
	"$tmp/drv" $sizes 131 67 257 1000 999 1001 1 97 129 || rc=1
done
exit $rc
