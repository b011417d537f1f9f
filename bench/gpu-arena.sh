#!/usr/bin/env bash
# bench/gpu-arena.sh — does the arena's size move the run-to-run spread of
# absolute times?  Every call of a timed batch has arrays of its own in the
# judge's arena (8 GiB on a GPU by default), a new placement in device memory
# for every ktime process; docs/gpu.md found softmax 4096x4096's median moving
# from run to run by more than the 0.3 % the judge issue allows, and the first
# run on a fresh machine by 6-10 %.  One call on a GPU machine: first a few
# runs at the default (the fresh machine's first runs), then the A/A of
# softmax with each arm's settings in turn, round by round (so drift affects
# every arm alike), until the rounds are done or the deadline comes; then per
# arm and size the candidate's and seed's medians, their CV over the runs, the
# ratio's spread, and what a run cost (kcompile cached, kverify, ktime).
# An arm is bench/aa.sh options (--arena MB, --batch SEC, --budget SEC,
# --min-runs N ...); arms are separated by ";".
#   usage: bench/gpu-arena.sh [--arms "OPTS;OPTS;..."] [--rounds N] [--fresh N] [--deadline SEC]
#   env: KSCIBIN (default build/gpu/bin), KSCI_BWRAP; logs under $OUT (or ./gpu-logs)
set -uo pipefail
arms="--arena 8192;--arena 1024;--arena 24576" rounds=6 fresh=3 deadline=480
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) sed -n '2,/^\([^#]\|$\)/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
	--arms) arms=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--fresh) fresh=$2; shift ;;
	--deadline) deadline=$2; shift ;;
	*) echo "gpu-arena: unknown argument: $1" >&2; exit 2 ;;
	esac
	shift
done
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export KSCIBIN=${KSCIBIN:-$here/build/gpu/bin}
out=${OUT:-$here/gpu-logs}/arena
mkdir -p "$out"
start=$SECONDS
echo "== $(nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,memory.used --format=csv,noheader 2>&1)"
if [ "$fresh" -ge 2 ]; then
	echo "== fresh machine: $fresh runs at the default arena"
	"$here/bench/aa.sh" --task softmax --runs "$fresh" --out "$out/fresh" 2>&1 | tail -n 8
fi
IFS=';' read -r -a arm <<<"$arms"
for ((r = 1; r <= rounds; r++)); do
	for ((a = 0; a < ${#arm[@]}; a++)); do
		if [ $((SECONDS - start)) -ge "$deadline" ]; then
			echo "== deadline ($deadline s) reached in round $r"
			break 2
		fi
		# shellcheck disable=SC2086 # an arm is options, split on purpose
		"$here/bench/aa.sh" --task softmax --runs 2 ${arm[a]} --out "$out/a$a-r$r" >"$out/a$a-r$r.txt" 2>&1 ||
			{ echo "== arm $a (${arm[a]}) round $r: $(tail -n 1 "$out/a$a-r$r.txt")"; }
	done
	echo "== round $r done at $((SECONDS - start)) s"
done
# One line per arm, size: runs, candidate median of medians, CV cand, CV seed,
# ratio sd, max |ratio-1|, calls per batch.
summ() { # $1 label, rest: runs.ndjson files
	local label=$1
	shift
	[ $# -gt 0 ] || return 0
	cat "$@" | jq -r --arg l "$label" '(.aa_wall_s // 0) as $w | .time.sizes[] | [$l, (.size | map(tostring) | join("x")),
		.candidate.median_us, .seed.median_us, .speedup_vs_seed, (.candidate.calls_per_batch // 0), $w] | @tsv'
}
{
	[ -f "$out/fresh/runs.ndjson" ] && summ fresh "$out/fresh/runs.ndjson"
	for ((a = 0; a < ${#arm[@]}; a++)); do
		files=("$out"/a"$a"-r*/runs.ndjson)
		[ -e "${files[0]}" ] && summ "${arm[a]}" "${files[@]}"
	done
} >"$out/medians.tsv"
echo "== per arm and size (runs; cand median us; CV cand; CV seed; ratio sd; max |r-1|; calls/batch; s per run (both sizes); medians); every run: $out/medians.tsv"
awk -F'\t' '
	{ k = $1 "\t" $2; if (!(k in n)) order[++m] = k; n[k]++; c[k] += $3; c2[k] += $3 * $3; s[k] += $4; s2[k] += $4 * $4
	  r[k] += $5; r2[k] += $5 * $5; d = $5 - 1; if (d < 0) d = -d; if (d > mx[k]) mx[k] = d; cpb[k] = $6; w[k] += $7
	  list[k] = list[k] sprintf(" %.1f", $3) }
	function cv(a, a2, k) { mu = a / n[k]; v = a2 / n[k] - mu * mu; if (v < 0) v = 0; return (n[k] > 1 ? 100 * sqrt(v * n[k] / (n[k] - 1)) / mu : 0) }
	END { for (i = 1; i <= m; i++) { k = order[i]; mr = r[k] / n[k]; vr = r2[k] / n[k] - mr * mr; if (vr < 0) vr = 0
		printf "%s\t%d runs\t%.2f us\tCV %.2f %%\t%.2f %%\tratio sd %.2f %%\tmax %.2f %%\t%s calls\t%.2f s\t[%s ]\n", k, n[k], c[k] / n[k],
			cv(c[k], c2[k], k), cv(s[k], s2[k], k), (n[k] > 1 ? 100 * sqrt(vr * n[k] / (n[k] - 1)) : 0), 100 * mx[k], cpb[k], w[k] / n[k], list[k] } }' "$out/medians.tsv"
echo "== done at $((SECONDS - start)) s"
