#!/usr/bin/env bash
# bench/nvcc-prefix.sh — what the device half's prefix (the wrapper's header
# part preprocessed once per host and header set, kcompile's default:
# docs/tools/kcompile.md, "The prefix") wins over nvcc's own device
# preprocessing ($KSCI_NVCC_PREFIX=off), in kcompile's own wall seconds per
# compile (the record's compile.seconds); with --dlink, what the device link
# beside the halves (kcompile's default, "early") wins over the device link
# after them on the joined object ($KSCI_NVCC_DLINK=joined, nvcc's order).
# Each task's seed (and, with
# --mutants N, N kgen mutate children of it, all distinct) is compiled
# with --no-cache, -j 1, both ways in each round, which first alternating,
# ROUNDS times, after one compile that makes the prefix.  Printed per task:
# each way's median, min and max seconds; the median of the per-source,
# per-round ratios (the default way over the other), the rounds-and-sources
# where the default way was faster, a one-sided sign test; how the default
# way was taken (steps_prefix or steps_dlink: all `cached` or `early`, or
# why not); whether every source gave the same ptxas
# resources both ways.  The seconds go to $OUT/nvcc-prefix/nvcc-prefix.tsv
# (task, source, round, way, seconds, how, resources).  Run it on an
# idle machine.
#   usage: bench/nvcc-prefix.sh [-r ROUNDS] [--mutants N] [--dlink] [TASK ...]   (default: 7 rounds; softmax matmul gemm_f16)
#   env: KSCIBIN (default build/gpu/bin; build/bin on a machine without a GPU), KSCI_TASKS, OUT (default gpu-logs)
set -euo pipefail
rounds=7 mutants=0 A=prefix B=nvcc F=steps_prefix
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) sed -n '2,/^\([^#]\|$\)/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
	-r) rounds=${2:-}; [ $# -lt 2 ] || shift ;;
	--mutants) mutants=${2:-}; [ $# -lt 2 ] || shift ;;
	--dlink) A=early B=joined F=steps_dlink ;;
	-*) echo "nvcc-prefix: unknown option: $1" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "nvcc-prefix: -r: \"$rounds\" is not a whole number above 0" >&2; exit 2; }
[[ $mutants =~ ^[0-9]+$ ]] || { echo "nvcc-prefix: --mutants: \"$mutants\" is not a whole number" >&2; exit 2; }
[ $# -gt 0 ] || set -- softmax matmul gemm_f16
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_setup nvcc-prefix
BIN=$KSCIBIN
tsv=$out/nvcc-prefix.tsv
: >"$tsv"
for task in "$@"; do
	bench_sources "$task" "$mutants" "$BIN" >"$tmp/$task.in"
	# The prefix made (and the compile cache's entries, which --no-cache ignores).
	head -n 1 "$tmp/$task.in" | "$BIN/kcompile" -j 1 --no-cache >/dev/null 2>&1 || true
	for r in $(seq "$rounds"); do
		ways="$A $B"
		[ $((r % 2)) = 0 ] && ways="$B $A"
		for way in $ways; do
			case $way in
			prefix | nvcc) env=KSCI_NVCC_PREFIX=$([ "$way" = nvcc ] && echo off || echo on) ;;
			*) env=KSCI_NVCC_DLINK=$way ;;
			esac
			env "$env" "$BIN/kcompile" -j 1 --no-cache <"$tmp/$task.in" >"$tmp/out" 2>/dev/null || true
			jq -r --arg t "$task" --arg r "$r" --arg w "$way" --arg f "$F" '[$t, (.id // "seed"), $r, $w, .compile.seconds,
				(.compile[$f] // "-") + (if .compile[$f + "_why"] then ": " + .compile[$f + "_why"] else "" end),
				(.compile.resources | tojson)] | @tsv' "$tmp/out" >>"$tsv"
		done
	done
done
echo "nvcc: $("${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" --version | tail -n 1); $rounds rounds; $(nproc) CPUs"
for task in "$@"; do
	for way in $A $B; do
		printf '%s %-6s median, min, max s: %s\n' "$task" "$way" \
			"$(awk -F'\t' -v t="$task" -v w="$way" '$1 == t && $4 == w { print $5 }' "$tsv" | med_min_max 3)"
	done
done
awk -F'\t' -v A="$A" -v B="$B" -v F="$F" "$AWK_MED$AWK_SIGN_P"'
{ k = $1 "\t" $2 "\t" $3; s[k, $4] = $5; if (!seen[k]++) keys[++n] = k; if (!tk[$1]++) order[++nt] = $1
  if ($4 == A) how[$1, $6]++
  res[$1, $2, $4] = $7; srcs[$1, $2] = 1 }
END {
	for (i = 1; i <= nt; i++) { t = order[i]; r = ""; b = 0; m = 0
		for (j = 1; j <= n; j++) { split(keys[j], a, "\t"); if (a[1] != t) continue
			x = s[keys[j], A] / s[keys[j], B]; r = r " " x; b += x < 1; m++ }
		h = ""; for (q in how) { split(q, c, SUBSEP); if (c[1] == t) h = h (h ? "; " : "") how[q] " " c[2] }
		d = 0; for (q in srcs) { split(q, c, SUBSEP); if (c[1] == t && res[t, c[2], A] != res[t, c[2], B]) d++ }
		printf "%s %s/%s: median ratio %.3f, %s faster in %d of %d (one-sided sign test p %.3f); %s: %s; %s\n",
			t, A, B, med(r), A, b, m, sign_p(b, m), F, h, d ? d " sources with other resources" : "same resources" } }' "$tsv"
