#!/usr/bin/env bash
# bench/gpu-throughput.sh — candidates per minute on one GPU through
# kcompile -j | kverify | ktime, and what one candidate waits for.  Per task
# (default softmax matmul): the seed is compiled, verified and timed once
# (the task's own objects are then in the compile cache, as in any search
# after its first generation); kgen's offline mutate writes N children of
# it (default 64; where its knob space has fewer, they are used again in
# turn), each made distinct by a comment so each is compiled; then
#   new     the N children through kcompile -j CORES | kverify | ktime
#   cached  the same N again (compiles served from the cache; verify and time redone)
# Prints per pass: candidates per minute end to end, the statuses, and the
# median per-record seconds (compile + verify + time, from the records'
# stage seconds; the first record, which starts the judges, apart).
# --aa N first streams N copies of the seed itself through one pipeline (an
# A/A with the long-lived judge and its anchors: every speedup_vs_seed
# should be 1.00) and prints per size max |speedup-1|, copies within 1 %,
# and the CV of the candidate's median, for anchored and re-anchoring
# records, and the children's wake-ups (their child_clock_us.to_request:
# the A/A's error followed the candidate's and the seed's difference) with
# how often ktime woke their CPUs first (--wake-cpu; cpu_wakes).  --aa-gap SEC: then N copies more, each sent SEC after the one
# before, so each finds the GPU idle (the judge's warm-up from idle, with
# its clock check: the reasons its log gives are counted).  --kb also runs
# bench/kb/kb_cost.py (KernelBench-style cost).
# --latency N: the latency of one candidate on a warm judge, alone: one
# pipeline is kept open (its judges warmed by the seed, given a comment of
# its own so that it is compiled and timed: anchors set), N children are sent
# one at a time, each only after the record before came out, and the wall
# time from write to record is taken; then the same N again (cached compile,
# verify and time redone).  Prints median, min and max of each, how many
# records measured an anchor, the new records' compile and time stages
# (median, min-max) with the batches a role they timed each size with and
# under which stopping rule, and who used the CPUs over the pass
# (bench/cpu-use.sh).  --gap SEC:
# wait SEC after each record before the next is sent (default 0: at once),
# so that each finds the judges idle, their spares made.
# --cpu-latency US: hold the CPUs' wake-up latency at US microseconds for the
# run (/dev/cpu_dma_latency, root): the A/A's error follows the wake-up of
# each role's continued child (docs/gpu.md, eighteenth session; on an H200
# VM, which has no cpuidle driver, holding it at 0 changed nothing:
# nineteenth session); exit 3 where it cannot be held.
#   usage: bench/gpu-throughput.sh [--children N] [--budget SEC] [--aa N] [--aa-gap SEC] [--latency N] [--gap SEC] [--new-only] [--fresh-judge] [--kb]
#                                  [--cpu-latency US] [--ktime-opt OPT] [TASK ...]
#   env: KSCIBIN (default build/gpu/bin), KSCI_BWRAP; records, and what it prints (summary.txt), under $OUT/throughput (or ./gpu-logs/throughput)
set -uo pipefail
children=64 budget="" fresh="" kb=0 aa=0 aagap=0 lat=0 gap=0 kopts=() passes="new cached" cpulat=""
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) sed -n '2,/^\([^#]\|$\)/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
	--children) children=$2; shift ;;
	--budget) budget=$2; shift ;;
	--fresh-judge) fresh=--fresh-judge ;;
	--kb) kb=1 ;;
	--new-only) passes=new ;;
	--aa) aa=$2; shift ;;
	--aa-gap) aagap=$2; shift ;;
	--latency) lat=$2; shift ;;
	--gap) gap=$2; shift ;;
	--cpu-latency) cpulat=$2; shift ;;
	--ktime-opt) kopts+=("$2"); shift ;;
	-*) echo "gpu-throughput: unknown option: $1" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
# Numbers are checked before anything starts: they were used as given, and
# an --aa-gap of 0.0 ran the idle pass (only the text "0" turned it off).
count() { [[ $2 =~ ^[0-9]+$ ]] || { echo "gpu-throughput: $1: \"$2\" is not a whole number" >&2; exit 2; }; }
seconds() { [[ $2 =~ ^[0-9]+([.][0-9]+)?$ ]] || { echo "gpu-throughput: $1: \"$2\" is not a number of seconds" >&2; exit 2; }; }
count --children "$children"
count --aa "$aa"
count --latency "$lat"
seconds --aa-gap "$aagap"
seconds --gap "$gap"
[ -z "$budget" ] || seconds --budget "$budget"
[ -z "$cpulat" ] || count --cpu-latency "$cpulat"
idle=$(awk -v g="$aagap" 'BEGIN { print (g > 0) }')
[ $# -gt 0 ] || set -- softmax matmul
# Each latency candidate is a distinct child: with fewer children the rest
# of the N had no record to send and the pipe waited for ever.
if [ "$lat" -gt "$children" ]; then
	echo "gpu-throughput: --latency $lat needs --children $lat or more (has $children)" >&2
	exit 2
fi
# The request holds while the file stays open: for the whole run.
if [ -n "$cpulat" ]; then
	if ! { exec {qos}>/dev/cpu_dma_latency && printf '%x' "$cpulat" >&"$qos"; } 2>/dev/null; then
		echo "gpu-throughput: --cpu-latency: cannot hold /dev/cpu_dma_latency here (it needs root and the device)" >&2
		exit 3
	fi
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$here/bench/lib.sh" # med_min_max, med_range
export PATH="${KSCIBIN:-$here/build/gpu/bin}:$PATH"
export KSCI_TASKS=${KSCI_TASKS:-$here/data/tasks}
out=${OUT:-$here/gpu-logs}/throughput
mkdir -p "$out"
# What it prints is also kept beside the records: a device call returns only
# the tail of the output, and a long run's figures were lost to it.
exec > >(tee "$out/summary.txt")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ksci-tput.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
jobs=$(nproc)

# summary FILE SECONDS LABEL
summary() {
	local n
	n=$(wc -l <"$1")
	echo "$3: $n candidates in $2 s = $(awk -v n="$n" -v s="$2" 'BEGIN { printf "%.1f", n * 60 / s }') per minute;" \
		"$(jq -r .status "$1" | sort | uniq -c | xargs)"
	jq -s -r 'def med: sort | if length == 0 then null else .[(length / 2 | floor)] end;
		def r2: . * 100 | round / 100;
		(.[1:]) as $w |
		"  per record (median of records 2..\(length)): compile \([$w[] | .compile.seconds // 0] | med | r2) s, verify \([$w[] | .verify.seconds // 0] | med | r2) s, time \([$w[] | .time.seconds // 0] | med | r2) s, all three \([$w[] | (.compile.seconds // 0) + (.verify.seconds // 0) + (.time.seconds // 0)] | med | r2) s; first record \(.[0] | (.compile.seconds // 0) + (.verify.seconds // 0) + (.time.seconds // 0) | r2) s; judges started: verify \([.[] | .verify.judge.started // 0] | max), time \([.[] | .time.judge.started // 0] | max)",
		([.[] | .time.retime // empty] | select(length > 0) |
			"  timed before (ktime --retime confirm): \(map(select(.agreed)) | length) of \(length) confirmed; |diff| median \([.[] | .diff_pct // empty] | med | r2) %, max \([.[] | .diff_pct // empty] | max | r2) %")' "$1"
}

# aa_copies TASK NAME: $aa copies of the task's timed seed, each made
# distinct by a comment naming it (so each is compiled and timed anew: a
# copy with another pass's source would only be confirmed, ktime --retime),
# ids NAME-0...
aa_copies() {
	jq -c --argjson n "$aa" --arg name "$2" 'select(.status == "timed") | . as $s | range($n) |
		{id: "\($name)-\(.)", task: $s.task, backend: $s.backend, generation: 0, parents: [],
		 source: ($s.source + "\n// A/A copy \($name)-\(.)\n"), status: "generated"}' "$out/$1-seed.nd"
}

# aa_report TASK NAME LABEL: per size max |speedup-1|, copies within 1 %,
# the CV of the candidate's median; and how each size's warm-up ended (the
# judge's log: its reason and seconds).
aa_report() {
	local f=$out/$1-$2.nd
	echo "$1 A/A, $3: $(jq -r .status "$f" | sort | uniq -c | xargs)"
	jq -s -r 'def cv: (add / length) as $m | ((map(. - $m | . * .) | add) / length | sqrt) / $m * 100;
		def r2: . * 100 | round / 100;
		def med: sort | if length == 0 then null else .[(length / 2 | floor)] end;
		[.[] | select(.status == "timed") | .time.sizes[] | {s: (.size | tostring), r: .speedup_vs_seed,
			c: .candidate.median_us, a: (.anchor.cached // false),
			cw: .candidate.child_clock_us.to_request, sw: .seed.child_clock_us.to_request,
			wa: (.cpu_wakes.asked // 0), wl: (.cpu_wakes.late // 0),
			wb: ([.candidate, .seed, .baseline | .woken_cpu.batches // 0] | add),
			we: ([.candidate, .seed, .baseline | .woken_cpu.elsewhere // 0] | add)}] | group_by(.s)[] |
		"  \(.[0].s): max |r-1| \([.[] | .r - 1 | fabs] | max * 100 | r2) %, within 1 % \([.[] | select((.r - 1 | fabs) <= 0.01)] | length)/\(length), anchored \([.[] | select(.a)] | length) (max |r-1| \([.[] | select(.a) | .r - 1 | fabs] | (max // 0) * 100 | r2) %), CV of the candidate median \([.[] | .c] | cv | r2) %, ratios \([.[] | .r | . * 10000 | round / 10000] | join(" "))",
		"    wake-ups by the children'"'"'s clocks (median over copies): candidate \([.[] | .cw // empty] | med // 0 | round) us, seed \([.[] | .sw // empty] | med // 0 | round) us, largest |candidate - seed| \([.[] | select(.cw and .sw) | .cw - .sw | fabs] | max // 0 | round) us; CPUs woken first \([.[] | .wa] | add), \([.[] | .wl] | add) not in time; of the timed batches woken first \([.[] | .wb] | add), \([.[] | .we] | add) seen on another CPU"' "$f"
	jq -r '.time.log // "" | split("\n")[] | capture("warmed up in (?<s>[0-9.]+) s \\((?<w>[^0-9]*)") | "\(.w)\t\(.s)"' "$f" |
		awk -F'\t' '{ n[$1]++; s[$1] += $2 } END { for (w in n) printf "  warm-ups %s: %d, mean %.3f s\n", w, n[w], s[w] / n[w] }'
}

# time_went PREFIX FILE: per record of FILE whose id starts with PREFIX, where
# its time stage went, size by size, from the judge's log.
time_went() {
	jq -r --arg p "$1" 'select(.id | startswith($p)) | "    \(.id): \([.time.log // "" | split("\n")[] |
		capture("\\[(?<t>[0-9.]+) s\\] (?<m>.*)") |
		if (.m | test("^time [^:]*$|^time [^:]*: ")) and (.m | test(": the children.s CPUs woken|: CPU warm-ups") | not) then "| \(.m | capture("^time (?<s>[^:]*)").s) \(.t)"
		elif (.m | test("^single calls done")) then "single \(.t)"
		elif (.m | test("^warmed up in")) then "warmed \(.t) (\(.m | capture("warmed up in (?<w>[0-9.]+) s [(](?<why>[^0-9(]*)") | "\(.w) s, \(.why | rtrimstr(" "))"))"
		elif (.m | test("^timed: ")) then "timed \(.t) (\(.m | capture("timed: (?<n>[0-9]+) batches").n))"
		else empty end] | join(" "))"' "$2"
}

# warm_record FILE: the latency pass's first record, from FILE's first (the
# seed's): the seed with a comment of its own, so that it is compiled,
# verified and timed, and the pipeline's judges are warm as a search's are
# after its first candidate — device context, references and anchors.  The
# seed itself, served from the caches, left the anchors to the first child
# measured (its time stage 1.47 s against 0.53-0.58 for a child timed
# beside anchors, docs/gpu.md twenty-first and twenty-second sessions).
warm_record() {
	head -n 1 "$1" | jq -c '{id: "lat-seed", task, backend, generation: 0, parents: [],
		source: (.source + "\n// the latency pass'"'"'s first record: compiled and timed, to warm the judges\n"),
		status: "generated"}'
}

# lat_record PASS: the latency pass's record for the child on stdin: its id
# prefixed with lat-PASS-, and its source given a comment of its own, so that
# the throughput passes after it, which stream the same children, compile
# each of them anew (with the children's own sources, the first N of them
# were served from the compile cache the latency pass had filled, in every
# run with --latency from 611db09 to the twenty-second session); the cached
# pass sends the same source again.
lat_record() {
	jq -c --arg p "$1" '.id = "lat-\($p)-" + .id | .source += "// the latency pass'"'"'s copy\n"'
}

# anchors_measured PREFIX FILE: how many records of FILE whose id starts with
# PREFIX measured an anchor at some size (the rest were timed beside one),
# and why (docs/record.md, time.sizes[].anchor).
anchors_measured() {
	jq -s -r --arg p "$1" '[.[] | select(.id | startswith($p))] | length as $n |
		[.[] | [.time.sizes // [] | .[] | .anchor | select(. != null and (.cached | not)) | .why] | unique | join(" + ") |
			select(. != "")] as $m |
		"  records that measured an anchor: \($m | length) of \($n)\(if ($m | length) > 0 then
			" (" + ($m | group_by(.) | map("\(.[0]) \(length)") | join(", ")) + ")" else "" end)"' "$2"
}

# stages PREFIX FILE: for the records of FILE whose id starts with PREFIX,
# the median (min-max) of their compile and time stages, and how many timed
# each size with how many batches a role (4/4: both sizes at the GPU's fewest)
# under which stopping rule (their sizes' stop_stat; "mean" where none).
stages() {
	local c t
	c=$(jq -r --arg p "$1" 'select(.id | startswith($p)) | .compile.seconds // empty' "$2" | med_range)
	t=$(jq -r --arg p "$1" 'select(.id | startswith($p)) | .time.seconds // empty' "$2" | med_range)
	printf '  stages, median (min-max): compile %s s, time %s s; batches a role at the sizes: %s\n' "$c" "$t" \
		"$(jq -s -r --arg p "$1" '[.[] | select(.id | startswith($p)) | [.time.sizes // [] | .[]] | select(length > 0) |
			"\(map(.candidate.n) | join("/")) \(map(.stop_stat // "mean") | unique | join("+"))"] |
			group_by(.) | sort_by(-length) | map("\(.[0] | split(" ")[0]) x\(length) (\(.[0] | split(" ")[1]))") | join(", ")' "$2")"
}

# outside PASS TSV ND: the seconds each record of PASS spent outside its
# three stages (its latency, TSV's line, less its compile, verify and time
# seconds, ND's record after the first): the pipe's own cost, the tools'
# reading and writing of the record and the judges' work before or after a
# job — median (min-max).
outside() {
	printf '  outside the three stages (latency less compile, verify and time), median (min-max): %s s\n' "$(
		paste <(awk -F'\t' '{ print $1 "\t" $2 }' "$2") <(jq -r '(.compile.seconds // 0) + (.verify.seconds // 0) + (.time.seconds // 0)' "$3" | tail -n +2) |
			awk -F'\t' -v p="$1" '$1 == p { printf "%.3f\n", $2 - $3 }' | med_range 3)"
}

# latency TASK: the seed, then $lat children of $tmp/kids.nd, then the same
# again, one at a time through one open pipeline; seconds from write to record.
latency() {
	local lf=$out/$1-latency.nd line t0 t1 i rec pass
	coproc LAT { kcompile | kverify $fresh | ktime $fresh ${budget:+--budget "$budget"} "${kopts[@]}"; } 2>"$out/$1-latency.err"
	local lat_job=$LAT_PID # unset by bash once the coprocess ends
	: >"$lf"
	local lt=$out/$1-latency.tsv # pass, seconds from write to record, status: kept
	: >"$lt"
	for i in $(seq 0 $((2 * lat))); do
		pass=$([ "$i" -le "$lat" ] && echo new || echo cached)
		if [ "$i" = 0 ]; then
			rec=$(warm_record "$out/$1-seed.nd")
		else
			rec=$(sed -n "$(((i - 1) % lat + 1))p" "$tmp/kids.nd" | lat_record "$pass")
		fi
		[ "$i" = 0 ] || sleep "$gap"
		t0=$(date +%s.%N)
		printf '%s\n' "$rec" >&"${LAT[1]}"
		IFS= read -r line <&"${LAT[0]}" || { echo "$1 latency: the pipeline ended early (see $out/$1-latency.err)"; break; }
		t1=$(date +%s.%N)
		printf '%s\n' "$line" >>"$lf"
		# Who else used the CPUs while the candidates compiled, from after
		# the seed's record (the judges up) to the last record.
		[ "$i" = 0 ] && "$here/bench/cpu-use.sh" snap "$tmp/cpu0"
		[ "$i" = $((2 * lat)) ] && "$here/bench/cpu-use.sh" snap "$tmp/cpu1"
		[ "$i" = 0 ] || printf '%s\t%s\t%s\n' "$pass" \
			"$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')" "$(printf '%s' "$line" | jq -r .status)" >>"$lt"
	done
	local fd=${LAT[1]}
	exec {fd}>&-
	wait "$lat_job" 2>/dev/null
	for p in new cached; do
		awk -F'\t' -v p="$p" '$1 == p { print $2 }' "$lt" >"$tmp/lat-$p"
		[ -s "$tmp/lat-$p" ] || continue
		read -r m lo hi < <(med_min_max <"$tmp/lat-$p")
		printf '%s latency, one candidate at a time on a warm judge, %s: median %s s, min %s, max %s over %d; %s\n' "$1" "$p" \
			"$m" "$lo" "$hi" "$(wc -l <"$tmp/lat-$p")" "$(awk -F'\t' -v p="$p" '$1 == p { print $3 }' "$lt" | sort | uniq -c | xargs)"
		anchors_measured "lat-$p-" "$lf"
		outside "$p" "$lt" "$lf"
		[ "$p" = cached ] || stages "lat-$p-" "$lf" # a cached record keeps its sizes from before
	done
	jq -s -r 'def r2: . * 100 | round / 100; .[1:][] | "  \(.id): compile \(.compile.seconds // 0 | r2) (cached \(.compile.cached // false)) verify \(.verify.seconds // 0 | r2) (\(.verify.candidate_child // "-")) time \(.time.seconds // 0 | r2) s (\(.time.candidate_child // "-"), lock wait \(.time.gpu_wait_s // 0 | r2), batches \([.time.sizes // [] | .[] | .candidate.n] | join("/")))\(if .time.retime then ", retime \(.time.retime.mode) agreed \(.time.retime.agreed) diff \(.time.retime.diff_pct // "-" | if type == "number" then r2 else . end) % (candidate \(.time.retime.candidate.then_us // 0 | r2) -> \(.time.retime.candidate.now_us // 0 | r2) us, seed \(.time.retime.seed.then_us // 0 | r2) -> \(.time.retime.seed.now_us // 0 | r2) us, \(.time.retime.batches // "-") batches)" else "" end)"' "$lf" | head -n $((2 * lat))
	[ -s "$tmp/cpu1" ] && echo "  CPU use over the pass: $("$here/bench/cpu-use.sh" report "$tmp/cpu0" "$tmp/cpu1")"
	rm -f "$tmp/cpu0" "$tmp/cpu1"
	# Where each record's time stage went, size by size (each size: its
	# start, its single calls, its warm-up's end with the warm-up's seconds
	# and why it stopped, its timing's end with the batches a role).
	for pass in new cached; do
		echo "  where the $pass records' time went (judge log, seconds from the job's start; each size: start, single, warmed (s, why), timed (batches)):"
		time_went "lat-$pass" "$lf"
	done
	# Where the last cached record's time stage went, by the judge's own clock.
	echo "  the last record's judge log (time):"
	jq -s -r '.[-1].time.log // "(none)"' "$lf" | grep -E 'ready|single calls done|first guess|warmed up|timed:' | sed 's/^/    /'
}

for task in "$@"; do
	export KSCI_CACHE="$tmp/cache-$task"
	echo "== $task: $(nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader 2>&1); $(nproc) CPUs: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)${cpulat:+; CPU wake-up latency held at $cpulat us}"
	jq -cn --arg t "$task" --rawfile s "$KSCI_TASKS/$task/seed.cu" \
		'{id: "seed", task: $t, backend: "cuda", generation: 0, parents: [], source: $s, status: "generated"}' |
		kcompile | kverify $fresh | ktime $fresh ${budget:+--budget "$budget"} "${kopts[@]}" >"$out/$task-seed.nd" 2>"$out/$task-seed.err"
	if [ "$aa" -gt 0 ]; then
		aa_copies "$task" aa | kcompile -j "$jobs" 2>"$out/$task-aa.err" | kverify $fresh 2>>"$out/$task-aa.err" |
			ktime $fresh ${budget:+--budget "$budget"} "${kopts[@]}" >"$out/$task-aa.nd" 2>>"$out/$task-aa.err"
		aa_report "$task" aa "$aa copies of the seed through one pipeline"
		if [ "$idle" = 1 ]; then
			aa_copies "$task" aagap | while IFS= read -r l; do
				printf '%s\n' "$l"
				sleep "$aagap"
			done | kcompile 2>"$out/$task-aagap.err" | kverify $fresh 2>>"$out/$task-aagap.err" |
				ktime $fresh ${budget:+--budget "$budget"} "${kopts[@]}" >"$out/$task-aagap.nd" 2>>"$out/$task-aagap.err"
			aa_report "$task" aagap "$aa copies of the seed, one every $aagap s (the GPU idle before each)"
		fi
	fi
	jq -c 'select(.status == "timed") | {status: "selected", task, backend, generation: 1, parents: [.id], base: .,
		inspirations: [], strategy: {name: "best", seed: 1}, child: 0}' "$out/$task-seed.nd" |
		kgen --seed 1 --children "$children" 2>"$out/$task-kgen.err" >"$tmp/gen.nd"
	# Where the knob space holds fewer than N (softmax: 15), they are used
	# again in turn; the comment makes every source distinct, so each is compiled.
	jq -s -c --arg t "$task" --argjson n "$children" 'if length == 0 then empty else
		. as $k | range($n) | $k[. % ($k | length)] + {id: "tput-\(.)"} | .source += "\n// throughput child \(.id) of \($t)\n"
		end' "$tmp/gen.nd" >"$tmp/kids.nd"
	if [ "$(wc -l <"$tmp/kids.nd")" -lt "$children" ]; then
		echo "$task: kgen wrote $(wc -l <"$tmp/kids.nd") children, not $children (see $out/$task-kgen.err)"
		continue
	fi
	if [ "$lat" -gt 0 ]; then
		latency "$task"
	fi
	for pass in $passes; do
		t0=$(date +%s.%N)
		kcompile -j "$jobs" <"$tmp/kids.nd" 2>"$out/$task-$pass.err" | kverify $fresh 2>>"$out/$task-$pass.err" |
			ktime $fresh --retime "$([ "$pass" = new ] && echo full || echo confirm)" ${budget:+--budget "$budget"} "${kopts[@]}" >"$out/$task-$pass.nd" 2>>"$out/$task-$pass.err"
		t1=$(date +%s.%N)
		summary "$out/$task-$pass.nd" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')" "$task $pass${fresh:+ ($fresh)}"
	done
	if [ "$kb" = 1 ]; then
		echo "$task KernelBench-style cost (bench/kb/kb_cost.py, one candidate):"
		python3 "$here/bench/kb/kb_cost.py" --task "$task" --runs 1 2>"$out/$task-kb.err" | sed 's/^/  /' ||
			{ echo "  failed:"; tail -n 5 "$out/$task-kb.err"; }
	fi
done
