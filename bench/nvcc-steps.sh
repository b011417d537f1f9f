#!/usr/bin/env bash
# bench/nvcc-steps.sh — what running nvcc's steps as two halves at once
# (lib/nvcc_steps.h, kcompile's default) wins over nvcc running them one
# after another ($KSCI_NVCC_STEPS=serial), in kcompile's own wall seconds
# (the record's compile.seconds: the whole compile, for `parallel` with the
# --dryrun that plans it and the build directory, 0.07 s on an H100 machine;
# before the fourteenth session it left those out, as the figures in
# docs/gpu.md up to then did).
# Three modes: serial (nvcc itself), parallel (the two halves, GNU ld's
# link: KSCI_HOST_LD=default) and gold (the two halves and gold's link,
# kcompile's default where ld.gold is there; the same as parallel where not).
# Each task's seed (and, with --mutants N, N kgen mutate children of it,
# all distinct) is compiled with --no-cache, the modes in turn, ROUNDS
# times; printed: the median seconds per mode and each one's ratio to
# serial, and whether every mode gave the same ptxas resources (registers,
# spills, shared memory per kernel) for every source.  Run it on an idle machine.
#   usage: bench/nvcc-steps.sh [-r ROUNDS] [--mutants N] [TASK ...]   (default: 5 rounds; softmax matmul)
#   env: KSCIBIN (default build/gpu/bin, else build/bin), KSCI_TASKS
set -euo pipefail
rounds=5 mutants=0
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) sed -n '2,/^\([^#]\|$\)/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
	-r) rounds=$2; shift ;;
	--mutants) mutants=$2; shift ;;
	*) break ;;
	esac
	shift
done
[ $# -gt 0 ] || set -- softmax matmul
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$here/bench/lib.sh"
BIN=${KSCIBIN:-$here/build/gpu/bin}
[ -x "$BIN/kcompile" ] || BIN=$here/build/bin
export KSCI_TASKS=${KSCI_TASKS:-$here/data/tasks}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ksci-nvcc-steps.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export KSCI_CACHE=$tmp/cache
for task in "$@"; do
	bench_sources "$task" "$mutants" "$BIN" >"$tmp/$task.in"
	for r in $(seq "$rounds"); do
		for mode in serial parallel gold; do
			steps=$([ "$mode" = serial ] && echo serial || echo parallel)
			ld=$([ "$mode" = gold ] && echo gold || echo default)
			KSCI_NVCC_STEPS=$steps KSCI_HOST_LD=$ld "$BIN/kcompile" -j 1 --no-cache <"$tmp/$task.in" >"$tmp/$task.$mode.$r" 2>/dev/null || true
			jq -r --arg m "$mode" --arg t "$task" '[$t, $m, .id, .compile.steps, .compile.ok, .compile.seconds,
				(.compile.resources | tojson)] | @tsv' "$tmp/$task.$mode.$r" >>"$tmp/rows"
		done
	done
done
echo "nvcc: $("${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" --version | tail -n 1); $rounds rounds; $(nproc) CPUs"
awk -F'\t' "$AWK_MED"'
{ s[$1" "$2] = s[$1" "$2] " " $6; if (!seen[$1]++) order[++n] = $1
  if ($5 != "true") bad[$1" "$2]++
  if ($2 != "serial" && $4 != "parallel") fellback[$1]++
  res[$1" "$3" "$2] = $7; ids[$1" "$3] = 1 }
END {
	printf "%-10s %10s %10s %8s %10s %8s %s\n", "task", "serial s", "parallel s", "ratio", "gold s", "ratio", "notes"
	for (i = 1; i <= n; i++) {
		t = order[i]; a = med(s[t" serial"]); b = med(s[t" parallel"]); g = med(s[t" gold"]); diff = 0
		for (k in ids) { split(k, p, " "); if (p[1] == t && (res[k" serial"] != res[k" parallel"] || res[k" serial"] != res[k" gold"])) diff++ }
		note = (diff ? diff " sources with other resources; " : "same resources; ")
		note = note (fellback[t] ? fellback[t] " compiles fell back to nvcc; " : "")
		nb = bad[t" serial"] + bad[t" parallel"] + bad[t" gold"]
		note = note (nb ? "failed compiles: " bad[t" serial"] + 0 " / " bad[t" parallel"] + 0 " / " bad[t" gold"] + 0 : "")
		printf "%-10s %10.3f %10.3f %8.3f %10.3f %8.3f %s\n", t, a, b, b / a, g, g / a, note
	}
}' "$tmp/rows"
