#!/usr/bin/env bash
# bench/c/omp-plain.sh — the floor a machine sets for the c back end's A/A
# of a 2-thread kernel: bench/c/omp-plain.c (no judge, no sandbox, one
# process, A and B the same kernel interleaved call by call) run as P
# processes per size, plainly and pinned to two CPUs of their own (taskset
# + OMP_PROC_BIND), judged by bench/aa.sh's criterion: |B/A - 1| <= 1 % in
# every process, CV of each role's median across processes <= 0.3 %.
#   usage: bench/c/omp-plain.sh [-p PROCESSES] [-n CALLS]   (default 10, 100)
set -euo pipefail
procs=10 calls=100
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-p) procs=$2; shift ;;
	-n) calls=$2; shift ;;
	*) echo "omp-plain.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ksci-omp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
gcc -std=gnu11 -O3 -march=native -fopenmp -o "$tmp/omp-plain" "$here/bench/c/omp-plain.c" "$here/bench/aa/softmax_mt.c" -lm
echo "$(nproc) CPUs; $(lscpu | sed -n 's/^Model name: *//p'); threads per core $(lscpu | sed -n 's/^Thread(s) per core: *//p')"
last=$(($(nproc) - 1))
for how in plain pinned; do
	for size in "2048 1024" "256 8192"; do
		for _ in $(seq "$procs"); do
			# shellcheck disable=SC2086 # rows cols
			if [ "$how" = pinned ]; then
				OMP_PROC_BIND=true taskset -c "$((last - 1)),$last" "$tmp/omp-plain" $size "$calls"
			else
				"$tmp/omp-plain" $size "$calls"
			fi
		done | awk -v how="$how" '{ r = $11; a[NR] = $3; b[NR] = $5; d = r - 1; if (d < 0) d = -d
			if (d <= 0.01) ok++; if (d > max) max = d; rs = rs sprintf(" %.3f", r); size = $1 }
			function cv(v, k,   i, m, s) { for (i = 1; i <= k; i++) m += v[i]; m /= k
				for (i = 1; i <= k; i++) s += (v[i] - m) ^ 2; return 100 * sqrt(s / (k - 1)) / m }
			END { printf "%-6s %-9s within 1 %%: %d/%d, max %.2f %%, CV of the median A %.2f %% B %.2f %%, median A %.0f us; ratios%s\n",
				how, size, ok, NR, 100 * max, cv(a, NR), cv(b, NR), a[1], rs }'
	done
done
