#!/usr/bin/env bash
# bench/gpu-chunk.sh — what spread.sh's chunk costs on a GPU (docs/cluster.md):
# N distinct kgen mutate children of TASK's seed through spread.sh on G
# GPUs, once with --chunk 1 (the default before the eighth session: a job,
# its judges and its anchors for every record) and once with the default
# (about two jobs a slot); each pass gets its own copies of the children
# (a comment makes them distinct), so each compiles anew. Prints per pass
# the jobs, the wall time, candidates a minute and the statuses, then the
# ratio of the rates.
#   usage: bench/gpu-chunk.sh [--children N] [--gpus G] [--backend cuda|c] [--budget S] [TASK]
#   env: KSCIBIN (default build/gpu/bin), KSCI_BWRAP; records under $OUT (or ./gpu-logs)
set -euo pipefail
children=32 gpus=1 backend=cuda budget=""
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) sed -n '2,/^\([^#]\|$\)/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
	--children) children=$2; shift ;;
	--gpus) gpus=$2; shift ;;
	--backend) backend=$2; shift ;;
	--budget) budget=$2; shift ;;
	-*) echo "gpu-chunk: unknown option: $1" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
task=${1:-softmax}
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_setup chunk
ext=cu
[ "$backend" = c ] && ext=c
g=$gpus
[ "$backend" = c ] && g=0
bopt=()
[ -n "$budget" ] && bopt=(--budget "$budget")

# The seed, timed, for kgen to mutate.
jq -cn --arg t "$task" --arg b "$backend" --rawfile s "$KSCI_TASKS/$task/seed.$ext" \
	'{id: "seed", task: $t, backend: $b, generation: 0, parents: [], source: $s, status: "generated"}' |
	kcompile 2>"$out/seed.err" | kverify 2>>"$out/seed.err" | ktime "${bopt[@]}" >"$tmp/seed.nd" 2>>"$out/seed.err"
[ "$(jq -r .status "$tmp/seed.nd")" = timed ] || { echo "gpu-chunk: the seed is $(jq -r .status "$tmp/seed.nd")"; exit 1; }
jq -c '{status: "selected", task, backend, generation: 1, parents: [.id], base: .,
	inspirations: [], strategy: {name: "best", seed: 1}, child: 0}' "$tmp/seed.nd" |
	kgen --seed 1 --children "$children" 2>"$out/kgen.err" >"$tmp/gen.nd"

declare -A r
for pass in one default; do
	jq -s -c --arg p "$pass" --argjson n "$children" 'if length == 0 then empty else
		. as $k | range($n) | $k[. % ($k | length)] + {id: "\($p)-\(.)"} | .source += "\n// chunk pass \($p), child \(.)\n"
		end' "$tmp/gen.nd" >"$tmp/kids-$pass.nd"
	n=$(wc -l <"$tmp/kids-$pass.nd")
	copt=()
	[ "$pass" = one ] && copt=(--chunk 1)
	t0=$(date +%s.%N)
	"$here/pipelines/spread.sh" --work "$tmp/w-$pass" --gpus "$g" "${copt[@]}" --kcompile-opt "-j$cores" "${bopt[@]}" \
		--out "$out/$pass.nd" "$tmp/kids-$pass.nd" 2>"$out/$pass.err" || echo "gpu-chunk: spread.sh exit $? ($pass)"
	s=$(since "$t0")
	r[$pass]=$(rate "$n" "$s")
	echo "$task, $pass ($(cat "$tmp/w-$pass/params"), $(awk -F '\t' 'NR > 1' "$tmp/w-$pass/joblog" | wc -l) jobs):" \
		"$n candidates in $s s = ${r[$pass]} a minute; $(jq -r .status "$out/$pass.nd" 2>/dev/null | sort | uniq -c | xargs)"
done
echo "$task: the default over --chunk 1: $(awk -v a="${r[one]}" -v b="${r[default]}" 'BEGIN { printf "%.2f", b / a }')x"
