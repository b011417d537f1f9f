#!/usr/bin/env bash
# bench/c/omp-variants.sh — the c back end's A/A with a 2-thread kernel
# (bench/aa/softmax_mt.c) under several builds of the tools, interleaved
# round by round, on a machine with cores to spare (a GPU machine's CPU).
# Each build is a directory of tools (make gpu-bundle B=...); per build and
# size it prints the runs' speedup_vs_seed, the candidate's and seed's
# medians (us) and their fastest batch.
#   usage: bench/c/omp-variants.sh [--rounds N] NAME=BINDIR ...
#   env: KSCI_BWRAP; logs under $OUT (or ./gpu-logs)
set -uo pipefail
rounds=4
[ "${1:-}" = --rounds ] && { rounds=$2; shift 2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${OUT:-$here/gpu-logs}/c-omp
mkdir -p "$out"
for ((r = 1; r <= rounds; r++)); do
	for v in "$@"; do
		name=${v%%=*} dir=${v#*=}
		KSCIBIN=$dir "$here/bench/aa.sh" --backend c --task softmax --runs 2 \
			--source "$here/bench/aa/softmax_mt.c" --out "$out/$name-r$r" >"$out/$name-r$r.txt" 2>&1
	done
done
for v in "$@"; do
	name=${v%%=*}
	cat "$out/$name"-r*/runs.ndjson 2>/dev/null | jq -r --arg n "$name" '.time.sizes[] |
		[$n, (.size | [.[]] | map(tostring) | join("x")), (.speedup_vs_seed * 1000 | round / 1000),
		 (.candidate.median_us | round), (.seed.median_us | round), (.candidate.min_us | round), (.seed.min_us | round)] | @tsv'
done | sort -s -k1,2 | awk -F'\t' '{k = $1 " " $2; if (k != last) { if (last != "") print line; line = k ":"; last = k }
	line = line sprintf("  %s (%s/%s, min %s/%s)", $3, $4, $5, $6, $7) } END { print line }'
