#!/usr/bin/env bash
# bench/compile-probe.sh — how fast this machine compiles right now: the
# same sources each call, so that two calls (before and after other work,
# or on two machines) say whether nvcc's time moved with the machine's
# state.  On an H200 the same 16 matmul children compiled 30 % slower after
# the A/A passes than before them (docs/gpu.md, twentieth session); this
# tells a slower CPU (the fixed CPU work slows too) from something nvcc
# alone meets (only the compiles slow).
# Prints one line per call, LABEL first:
#   nvcc's own seconds (the records' compile.compiler_seconds), median,
#   min and max over TASK's seed and N kgen mutate children (seed 7: the
#   same sources every call), each compiled alone with `kcompile
#   --no-cache`; the fixed CPU work's seconds (an awk loop, one thread),
#   median of 3; and who used the CPUs meanwhile (bench/cpu-use.sh).
#   usage: bench/compile-probe.sh [-n N] [--label LABEL] TASK   (default N 4, LABEL probe)
#   env: KSCIBIN (default build/gpu/bin), KSCI_CUDA_ARCH; the records under $OUT/compile-probe (or ./gpu-logs/compile-probe)
set -uo pipefail
n=4 label=probe
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) sed -n '2,/^\([^#]\|$\)/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
	-n) n=${2:-}; shift ;;
	--label) label=${2:-}; shift ;;
	-*) echo "compile-probe: unknown option: $1" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
[[ $n =~ ^[0-9]+$ ]] || { echo "compile-probe: -n: \"$n\" is not a whole number" >&2; exit 2; }
[[ $label =~ ^[A-Za-z0-9_.-]+$ ]] || { echo "compile-probe: --label: \"$label\" is not letters, digits, _ . -" >&2; exit 2; }
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_one_task compile-probe "$@"

"$here/bench/cpu-use.sh" snap "$tmp/cpu0"
bench_sources "$task" "$n" "$KSCIBIN" >"$tmp/src.nd"
got=$(wc -l <"$tmp/src.nd")
rec=$out/$label-$task.nd
: >"$rec"
while IFS= read -r l; do
	printf '%s\n' "$l" | kcompile --no-cache >>"$rec" 2>>"$out/$label-$task.err"
done <"$tmp/src.nd"
secs=$(jq -r 'select(.status == "compiled") | .compile.compiler_seconds' "$rec")
ok=$(printf '%s' "$secs" | grep -c .)
read -r med lo hi < <(printf '%s\n' "$secs" | med_min_max)
read -r cpu _ < <(for _ in 1 2 3; do
	s=$(date +%s.%N)
	awk 'BEGIN { for (i = 0; i < 3000000; i++) x += i * i % 7; exit x < 0 }'
	awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN { print b - a }'
done | med_min_max)
"$here/bench/cpu-use.sh" snap "$tmp/cpu1"
printf '%s %s: nvcc median %s s, min %s, max %s over %d of %d compiled; fixed CPU work %s s; %s\n' \
	"$label" "$task" "$med" "$lo" "$hi" "$ok" "$got" "$cpu" "$("$here/bench/cpu-use.sh" report "$tmp/cpu0" "$tmp/cpu1" 3)"
[ "$ok" = "$got" ] || exit 1
