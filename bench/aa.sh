#!/usr/bin/env bash
# bench/aa.sh — A/A calibration of ktime's timing method.  A kernel timed
# against an identical copy of itself must come out at 1.00: the candidate's
# source is exactly the seed's, so every difference ktime reports between them
# is the method's own noise.  With --source FILE, FILE is both candidate and
# seed (the seed is replaced in a private copy of the task).  The record goes
# through kcompile | kverify | ktime R times; per benchmark size the table
# gives each run's speedup_vs_seed, max |speedup-1|, how many runs are within
# 1 %, and the coefficient of variation over the runs of the candidate's and
# the seed's median.  --kb also runs bench/aa/kb_loop.py (torch, CUDA events,
# KernelBench style) and puts its A/A figures in the same table.
#
# Note: candidate and seed with the same text have the same compile-cache key,
# so ktime loads one shared object for both: the A/A is the same machine code at
# the same address, with separate buffers, interleaved in rotating order.
set -euo pipefail
usage() {
	cat <<'EOF'
usage: bench/aa.sh [--task NAME] [--backend cuda|c] [--runs N] [--budget SEC] [--min-runs N] [--processes N] [--batch SEC] [--arena MB]
                   [--warmup N] [--source FILE] [--baseline-too] [--out DIR] [--kb] [-h]

A/A calibration: time a kernel against an identical copy of itself (candidate
source = seed source) with kcompile | kverify | ktime, N times, and report per
benchmark size each run's speedup_vs_seed, max |speedup-1|, runs within 1 %, and
the CV (stddev/mean) over the runs of the candidate's and the seed's median_us.
Targets: |speedup-1| <= 1 % in every run (20 of 20); CV <= 0.3 % (over 10 runs).

  --task NAME     task under $KSCI_TASKS (default softmax)
  --backend B     cuda (default) or c
  --runs N        pipeline runs (default 20; 2..1000)
  --budget SEC    ktime --budget per size (default: ktime's, 1 s)
  --min-runs N    ktime --min-runs: batches per role at least (default: ktime's)
  --processes N   ktime --processes: processes per role (default: ktime's)
  --batch SEC     ktime --batch: seconds per timed batch (default: ktime's)
  --arena MB      ktime --arena: the arena's budget in MiB (default: ktime's)
  --source FILE   kernel used as both candidate and seed instead of the task's
                  seed (default for --backend c --task softmax:
                  bench/aa/softmax_mt.c, two OpenMP threads)
  --baseline-too  the baseline is the same kernel too, so all three participants
                  are identical (separates the effect of who runs before whom in
                  ktime's rotation from the noise; speedup_vs_baseline is then
                  an A/A figure as well, but is not in the table)
  --out DIR       keep the raw NDJSON there: runs.ndjson (one ktime record per
                  run), kb.ndjson, stderr.log, in.json
  --kb            also run bench/aa/kb_loop.py (python3 + torch + CUDA GPU)
  --warmup N      N runs first that the statistics leave out (default 0); their
                  speedups and medians are printed, marked w1, w2 ...: the first
                  ktime on a freshly started GPU machine has timed every role
                  6-10 % off the runs after it (docs/gpu.md)
  --pause SEC     wait SEC seconds between runs (default 0), to tell effects
                  of back-to-back runs from the method's own spread
  -h, --help      this text

env: KSCIBIN (tools; default build/gpu/bin when it has kharness-cuda, else
build/bin), KSCI_TASKS, KSCI_CACHE, KSCI_BWRAP.  Last line: "aa: PASS" or
"aa: FAIL (reason)"; exit 0 on PASS, 1 on FAIL, 2 on a usage error.
EOF
}
die() { echo "aa: $*" >&2; exit 2; }

task=softmax backend=cuda runs=20 budget="" minruns="" procs="" batch="" arena="" source="" out="" kb=0 basetoo=0 pause=0 warmup=0
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) usage; exit 0 ;;
	--task) [ $# -ge 2 ] || die "--task needs a value"; task=$2; shift ;;
	--backend) [ $# -ge 2 ] || die "--backend needs a value"; backend=$2; shift ;;
	--runs) [ $# -ge 2 ] || die "--runs needs a value"; runs=$2; shift ;;
	--budget) [ $# -ge 2 ] || die "--budget needs a value"; budget=$2; shift ;;
	--min-runs) [ $# -ge 2 ] || die "--min-runs needs a value"; minruns=$2; shift ;;
	--processes) [ $# -ge 2 ] || die "--processes needs a value"; procs=$2; shift ;;
	--batch) [ $# -ge 2 ] || die "--batch needs a value"; batch=$2; shift ;;
	--arena) [ $# -ge 2 ] || die "--arena needs a value"; arena=$2; shift ;;
	--warmup) [ $# -ge 2 ] || die "--warmup needs a value"; warmup=$2; shift ;;
	--pause) [ $# -ge 2 ] || die "--pause needs a value"; pause=$2; shift ;;
	--source) [ $# -ge 2 ] || die "--source needs a value"; source=$2; shift ;;
	--out) [ $# -ge 2 ] || die "--out needs a value"; out=$2; shift ;;
	--kb) kb=1 ;;
	--baseline-too) basetoo=1 ;;
	*) usage >&2; die "unknown argument: $1" ;;
	esac
	shift
done
case $backend in cuda | c) ;; *) die "--backend: \"$backend\" is not cuda or c" ;; esac
[[ $warmup =~ ^[0-9]{1,2}$ ]] || die "--warmup: \"$warmup\" is not a whole number of runs (0..99)"
[[ $pause =~ ^[0-9]{1,3}$ ]] || die "--pause: \"$pause\" is not a whole number of seconds (0..999)"
if ! [[ $runs =~ ^[0-9]{1,4}$ ]] || [ "$runs" -lt 2 ] || [ "$runs" -gt 1000 ]; then
	die "--runs: \"$runs\" is outside 2..1000"
fi

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ -z "${KSCIBIN:-}" ]; then
	if [ -x "$here/build/gpu/bin/kharness-cuda" ]; then KSCIBIN=$here/build/gpu/bin; else KSCIBIN=$here/build/bin; fi
fi
BIN=$KSCIBIN
tasks=${KSCI_TASKS:-$here/data/tasks}
[ -f "$tasks/$task/task.json" ] || die "no task $task under $tasks"
# seed/baseline: "file", or per back end "file" or {"file", "libs"} (docs/task.md).
role_file() {
	jq -r --arg r "$1" --arg b "$backend" '.[$r] | if type == "object" then .[$b] else . end
		| if type == "object" then .file else . end // empty' "$tasks/$task/task.json"
}
seedname=$(role_file seed)
[ -n "$seedname" ] || die "task $task has no $backend seed"
if [ -z "$source" ] && [ "$backend" = c ] && [ "$task" = softmax ]; then
	source=$here/bench/aa/softmax_mt.c
fi
[ -n "$source" ] || source=$tasks/$task/$seedname
[ -f "$source" ] || die "--source: $source: no such file"
for t in kcompile kverify ktime; do [ -x "$BIN/$t" ] || die "$BIN/$t not built (make -j2)"; done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ksci-aa.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if [ -n "$out" ]; then mkdir -p "$out"; else out=$tmp/out && mkdir "$out"; fi
: >"$out/runs.ndjson"
: >"$out/stderr.log"

# A private copy of the task whose seed is the A/A kernel, so ktime's seed and
# the candidate are the same text whatever --source says.
mkdir "$tmp/tasks"
cp -R "$tasks/$task" "$tmp/tasks/$task"
cp "$source" "$tmp/tasks/$task/$seedname"
if [ "$basetoo" = 1 ]; then
	basename=$(role_file baseline)
	[ -n "$basename" ] || die "task $task has no $backend baseline"
	cp "$source" "$tmp/tasks/$task/$basename"
fi
export KSCI_TASKS=$tmp/tasks
jq -cn --arg t "$task" --arg b "$backend" --rawfile s "$source" \
	'{id: "aa", task: $t, backend: $b, generation: 0, parents: [], source: $s, status: "generated"}' >"$out/in.json"

echo "A/A: task $task, backend $backend, kernel ${source#"$here"/} as candidate and seed$([ "$basetoo" = 0 ] || echo " and baseline"), $runs runs, ktime --budget ${budget:-(the default: 0.5 GPU, 1 CPU)}${minruns:+ --min-runs $minruns}${procs:+ --processes $procs}${batch:+ --batch $batch}${arena:+ --arena $arena}$([ "$pause" = 0 ] || echo ", $pause s between runs")$([ "$warmup" = 0 ] || echo ", $warmup warm-up runs first (left out)")"
fail=""
: >"$out/warmup.ndjson"
for ((i = 1 - warmup; i <= runs; i++)); do
	[ "$i" = $((1 - warmup)) ] || [ "$pause" = 0 ] || sleep "$pause"
	label=$i dest=$out/runs.ndjson
	[ "$i" -ge 1 ] || label=w$((i + warmup)) dest=$out/warmup.ndjson
	# Other work on the host shows in the timings (most of all on c): the
	# 1-minute load average when the run starts goes in the table.
	load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo -)
	t0=$(date +%s.%N)
	if ! "$BIN/kcompile" <"$out/in.json" 2>>"$out/stderr.log" | "$BIN/kverify" 2>>"$out/stderr.log" |
		"$BIN/ktime" --retime full ${budget:+--budget "$budget"} ${minruns:+--min-runs "$minruns"} ${procs:+--processes "$procs"} ${batch:+--batch "$batch"} ${arena:+--arena "$arena"} >"$tmp/run.json" 2>>"$out/stderr.log"; then
		fail="run $label: a tool failed: $(tail -n 1 "$out/stderr.log")"
		break
	fi
	# The run's wall seconds (kcompile from the cache after run 1, kverify,
	# ktime: what a cached candidate costs) go in the record as aa_wall_s.
	jq -c --argjson w "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')" '. + {aa_wall_s: $w}' "$tmp/run.json" >>"$dest"
	st=$(jq -r .status "$tmp/run.json")
	if [ "$st" != timed ]; then
		fail="run $label: status $st: $(jq -r '[.time, .verify, .compile, .error | objects | .message // empty][0] // "" | .[:200]' "$tmp/run.json")"
		break
	fi
	if [ "$(jq '.time.sizes | length' "$tmp/run.json")" = 0 ]; then
		fail="run $label: ktime timed no benchmark size"
		break
	fi
	if [ "$i" = $((1 - warmup)) ]; then
		jq -r '["run"] + [.time.sizes[].size | [.[] | tostring] | join("x")] + ["geomean", "load"] | @tsv' "$tmp/run.json" |
			awk -F'\t' '{ printf "%-4s", $1; for (k = 2; k <= NF; k++) printf " %12s", $k; print "" }'
	fi
	jq -r --arg i "$label" --arg l "$load" '[$i, .time.sizes[].speedup_vs_seed, .time.speedup_vs_seed, $l] | @tsv' "$tmp/run.json" |
		awk -F'\t' '{ printf "%-4s", $1; for (k = 2; k < NF; k++) printf " %12.4f", $k; printf " %12s\n", $NF }'
	[ "$i" -ge 1 ] || jq -r --arg i "$label" '"\($i)   left out; median us, candidate / seed:" + ([.time.sizes[] |
		" \(.candidate.median_us * 100 | round / 100) / \(.seed.median_us * 100 | round / 100)"] | join(","))' "$tmp/run.json"
done
if [ -n "$fail" ]; then
	echo "aa: FAIL ($fail)"
	exit 1
fi
echo "(speedup_vs_seed = seed median / candidate median, per run; load: 1-minute load average at the run's start)"

: >"$out/kb.ndjson"
kbnote=""
if [ "$kb" = 1 ]; then
	case $task in softmax | matmul) op=$task ;; *) op=all ;; esac
	if ! python3 "$here/bench/aa/kb_loop.py" --op "$op" >"$out/kb.ndjson" 2>>"$out/stderr.log"; then
		kbnote="kb loop did not run: $(tail -n 1 "$out/stderr.log")"
	fi
fi

# One row per (method, size): the ratios and both sides' medians over the runs
# (kb: the repeats, ratio B/A), then the same statistics for every row.
jq -nr --slurpfile runs "$out/runs.ndjson" --slurpfile kb "$out/kb.ndjson" '
def mean: add / length;
def sd: mean as $m | map((. - $m) * (. - $m)) | add / (length - 1) | sqrt;
def cv: sd / mean;
def pct: . * 100 * 100 | round / 100;
([range(0; $runs[0].time.sizes | length) as $k
  | {method: "ktime", size: ($runs[0].time.sizes[$k].size | [.[] | tostring] | join("x")),
     r: [$runs[].time.sizes[$k].speedup_vs_seed],
     a: [$runs[].time.sizes[$k].seed.median_us],
     b: [$runs[].time.sizes[$k].candidate.median_us],
     conv: ([$runs[].time.sizes[$k].converged | select(.)] | length)}]
 + [$kb[] | {method: "kb", size: (.op + ":" + .size), r: .ratio, a: .a_median_us, b: .b_median_us, conv: null}])[]
| (.r | map(. - 1 | fabs) | max) as $dev
| [.method, .size, (.r | length), ($dev | pct), ([.r[] | select(. - 1 | fabs <= 0.01 + 1e-12)] | length),
   (.b | cv | pct), (.a | cv | pct), (.b | mean * 100 | round / 100), (.a | mean * 100 | round / 100),
   (if .conv == null then "-" else "\(.conv)/\(.r | length)" end)] | @tsv' >"$tmp/stats.tsv"

printf '\n%-6s %-20s %5s %9s %9s %8s %8s %13s %13s %9s\n' method size runs 'max|r-1|' 'within1%' 'CV cand' 'CV seed' 'cand us mean' 'seed us mean' converged
awk -F'\t' '{printf "%-6s %-20s %5d %8.2f%% %5d/%-3d %7.2f%% %7.2f%% %13.2f %13.2f %9s\n", $1, $2, $3, $4, $5, $3, $6, $7, $8, $9, $10}' "$tmp/stats.tsv"
[ ! -s "$out/kb.ndjson" ] || echo "(kb: bench/aa/kb_loop.py, ratio B/A of the median over 100 trials, runs = repeats; cand = B, seed = A)"
# Per run and size, the device's state while the roles were timed (time's
# device_state: NVML after every batch), beside the three medians: whether a
# run that is off in absolute time is off because the clock was.
if jq -e 'select(.time.sizes[0].device_state) | true' "$out/runs.ndjson" >/dev/null 2>&1; then
	printf '
%-4s %-12s %10s %10s %10s %16s %7s %7s %s
' run size 'cand us' 'seed us' 'base us' 'SM MHz med(min-max)' 'temp C' 'power W' limits
	jq -r '[input_line_number] as $i | .time.sizes[] | [$i[0], (.size | [.[] | tostring] | join("x")),
		.candidate.median_us, .seed.median_us, (.baseline.median_us // 0),
		"\(.device_state.sm_mhz.median // "-")(\(.device_state.sm_mhz.min // "-")-\(.device_state.sm_mhz.max // "-"))",
		(.device_state.temp_c.median // 0), (.device_state.power_w.median // 0),
		((.device_state.limits // []) | join(",") | if . == "" then "-" else . end)] | @tsv' "$out/runs.ndjson" |
		awk -F'\t' '{printf "%-4s %-12s %10.2f %10.2f %10.2f %19s %7.0f %7.0f %s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9}'
fi
echo "targets: |speedup-1| <= 1 % in 20 of 20 runs; CV of each size's median <= 0.3 % over 10 runs"
[ -z "$kbnote" ] || echo "$kbnote"
[ "$runs" -ge 20 ] || echo "note: $runs runs, fewer than the targets' 20 (within-1 % asked of all $runs, CV over $runs)"

# The verdict is on ktime's rows; kb rows are the comparison.
reason=$(awk -F'\t' '$1 == "ktime" {
	if ($5 < $3) r = r sprintf("; %s: %d of %d runs outside 1 %% (max %.2f %%)", $2, $3 - $5, $3, $4)
	if ($6 > 0.3) r = r sprintf("; %s: CV cand %.2f %%", $2, $6)
	if ($7 > 0.3) r = r sprintf("; %s: CV seed %.2f %%", $2, $7)
} END { print substr(r, 3) }' "$tmp/stats.tsv")
if [ -z "$reason" ]; then
	echo "aa: PASS"
else
	echo "aa: FAIL ($reason)"
	exit 1
fi
