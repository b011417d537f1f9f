#!/usr/bin/env bash
# bench/aa-arms.sh — A/A runs in interleaved arms, to compare ways of timing
# on one machine in one call (docs/gpu.md, "Throughput", nineteenth session).
# For each round, each task and each arm in turn: one
#   bench/gpu-throughput.sh --aa N --children 1 --new-only [--ktime-opt OPT ...] TASK
# (N copies of the task's seed through one pipeline: every speedup_vs_seed
# should be 1.00).  An arm is "main" (ktime's defaults) or ktime options
# joined by commas ("--wake-cpu=off", "--wake-cpu=pin,--budget=1").  No run
# starts after --limit SEC; the rounds so far are what it reports.  At the
# end, per arm: sizes, sizes with a copy more than 1 % off, the worst copy per
# size (range and median), the children's wake-ups (median of the candidate's
# and the seed's per size, by their own clocks), the largest candidate - seed
# wake-up difference per size (median and max), and the timed batches whose
# child saw its request on another CPU than the one woken for it.
# Rows per copy and size: $OUT/aa-arms/rows.txt.
#   usage: bench/aa-arms.sh [--copies N] [--rounds N] [--limit SEC] [--arm ARM ...] [TASK ...]
#   (default: --copies 20 --rounds 2 --limit 420, arms main and --wake-cpu=off, tasks matmul softmax)
#   env: KSCIBIN (default build/gpu/bin), KSCI_BWRAP
set -uo pipefail
copies=20 rounds=2 limit=420 arms=()
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) sed -n '2,/^\([^#]\|$\)/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
	--copies) copies=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--limit) limit=$2; shift ;;
	--arm) arms+=("$2"); shift ;;
	-*) echo "aa-arms: unknown option: $1" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
for v in "copies:$copies" "rounds:$rounds" "limit:$limit"; do
	if ! [[ ${v#*:} =~ ^[0-9]+$ ]] || [ "${v#*:}" -eq 0 ]; then
		echo "aa-arms: --${v%%:*}: \"${v#*:}\" is not a whole number above 0" >&2
		exit 2
	fi
done
for a in "${arms[@]}"; do
	[ "$a" = main ] || [[ $a =~ ^--[a-z-]+(=[^,]*)?(,--[a-z-]+(=[^,]*)?)*$ ]] ||
		{ echo "aa-arms: --arm: \"$a\" is neither main nor ktime options joined by commas" >&2; exit 2; }
done
[ ${#arms[@]} -gt 0 ] || arms=(main --wake-cpu=off)
[ $# -gt 0 ] || set -- matmul softmax
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${OUT:-$here/gpu-logs}/aa-arms
mkdir -p "$out"
: >"$out/rows.txt"
start=$SECONDS i=0
for ((r = 1; r <= rounds; r++)); do
	for task in "$@"; do
		for arm in "${arms[@]}"; do
			if [ $((SECONDS - start)) -ge "$limit" ]; then
				echo "aa-arms: --limit $limit s reached; no more runs"
				break 3
			fi
			i=$((i + 1))
			opts=()
			if [ "$arm" != main ]; then
				IFS=, read -ra o <<<"$arm"
				for x in "${o[@]}"; do opts+=(--ktime-opt "$x"); done
			fi
			d=$out/run$i
			echo "== round $r, $task, arm $arm ($((SECONDS - start)) s)"
			OUT=$d "$here/bench/gpu-throughput.sh" --aa "$copies" --children 1 --new-only "${opts[@]}" "$task" >"$d.txt" 2>&1
			echo "   exit $?"
			sed -n '/A\/A/,/warm-ups/p' "$d.txt" | grep -v '^  warm-ups' | cut -c1-160
			[ -f "$d/throughput/$task-aa.nd" ] &&
				jq -r --arg arm "$arm" --arg run "$i" 'select(.status == "timed") | .id as $id | .time.sizes[] |
					[$arm, $run, $id, (.size | tostring), .speedup_vs_seed,
					 (.candidate.child_clock_us.to_request // -1), (.seed.child_clock_us.to_request // -1),
					 ([.candidate, .seed, .baseline | .woken_cpu.batches // 0] | add),
					 ([.candidate, .seed, .baseline | .woken_cpu.elsewhere // 0] | add)] | @tsv' \
					"$d/throughput/$task-aa.nd" >>"$out/rows.txt"
		done
	done
done
echo "== per arm (rows: $out/rows.txt)"
jq -R -s -r 'def med: sort | if length == 0 then null else .[(length / 2 | floor)] end;
	def r2: . * 100 | round / 100;
	[split("\n")[] | select(length > 0) | split("\t") |
	 {arm: .[0], size: "\(.[1]) \(.[3])", r: (.[4] | tonumber), cw: (.[5] | tonumber), sw: (.[6] | tonumber),
	  wb: (.[7] | tonumber), we: (.[8] | tonumber)}] | group_by(.arm)[] | .[0].arm as $arm |
	[group_by(.size)[] | {worst: ([.[] | .r - 1 | fabs] | max * 100), off: ([.[] | select((.r - 1 | fabs) > 0.01)] | length),
	  wake: ([.[] | .cw, .sw | select(. >= 0)] | med), diff: ([.[] | select(.cw >= 0 and .sw >= 0) | .cw - .sw | fabs] | max),
	  wb: ([.[] | .wb] | add), we: ([.[] | .we] | add)}] |
	"\($arm): sizes \(length), above 1 % \([.[] | select(.off > 0)] | length); worst copy per size \([.[] | .worst] | min | r2)-\([.[] | .worst] | max | r2) %, median \([.[] | .worst] | med | r2) %; wake-up \([.[] | .wake // empty] | min // 0 | round)-\([.[] | .wake // empty] | max // 0 | round) us; largest difference per size median \([.[] | .diff // empty] | med // 0 | round) us, max \([.[] | .diff // empty] | max // 0 | round) us; batches woken first \([.[] | .wb] | add), seen on another CPU \([.[] | .we] | add)"' \
	"$out/rows.txt"
