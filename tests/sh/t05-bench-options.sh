#!/usr/bin/env bash
# bench/gpu-throughput.sh (and bench/aa-arms.sh, below) checks its numbers before it starts anything (no
# GPU is needed to reach the check): a value that is not a number exits 2
# with a message naming the option and the value, nothing on stdout.  It used
# them as given; an --aa-gap of 0.0 ran the idle A/A (only "0" turned it off).
. "$(dirname "$0")/lib.sh"

bad() { # expected-stderr option value
	"$ROOT/bench/gpu-throughput.sh" "$2" "$3" matmul </dev/null >"$T/out" 2>"$T/err"
	expect_eq "$2 $3: exit 2" 2 $?
	expect_eq "$2 $3: the message" "$1" "$(cat "$T/err")"
	expect_eq "$2 $3: nothing on stdout" 0 "$(wc -c <"$T/out" | tr -d ' ')"
}
bad 'gpu-throughput: --aa-gap: "x" is not a number of seconds' --aa-gap x
bad 'gpu-throughput: --aa-gap: "-1" is not a number of seconds' --aa-gap -1
bad 'gpu-throughput: --children: "1.5" is not a whole number' --children 1.5
bad 'gpu-throughput: --aa: "" is not a whole number' --aa ''
bad 'gpu-throughput: --latency: "many" is not a whole number' --latency many
bad 'gpu-throughput: --gap: "1s" is not a number of seconds' --gap 1s
bad 'gpu-throughput: --budget: "fast" is not a number of seconds' --budget fast
bad 'gpu-throughput: --cpu-latency: "0.5" is not a whole number' --cpu-latency 0.5
# --cpu-latency where /dev/cpu_dma_latency cannot be held (not root): exit 3,
# said, before anything runs.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && [ -e /dev/cpu_dma_latency ]; then
	setpriv --reuid=65534 --regid=65534 --clear-groups "$ROOT/bench/gpu-throughput.sh" --cpu-latency 0 matmul </dev/null >"$T/out" 2>"$T/err"
	expect_eq "--cpu-latency as nobody: exit 3" 3 $?
	expect_eq "--cpu-latency as nobody: the message" \
		"gpu-throughput: --cpu-latency: cannot hold /dev/cpu_dma_latency here (it needs root and the device)" "$(cat "$T/err")"
fi
# bench/aa-arms.sh the same way: a count or an arm it cannot use exits 2
# before any run.
arms() { # expected-stderr args...
	local want=$1
	shift
	"$ROOT/bench/aa-arms.sh" "$@" matmul </dev/null >"$T/out" 2>"$T/err"
	expect_eq "aa-arms $*: exit 2" 2 $?
	expect_eq "aa-arms $*: the message" "$want" "$(cat "$T/err")"
	expect_eq "aa-arms $*: nothing on stdout" 0 "$(wc -c <"$T/out" | tr -d ' ')"
}
arms 'aa-arms: --copies: "0" is not a whole number above 0' --copies 0
arms 'aa-arms: --rounds: "two" is not a whole number above 0' --rounds two
arms 'aa-arms: --limit: "1.5" is not a whole number above 0' --limit 1.5
arms 'aa-arms: --arm: "wake-cpu=pin" is neither main nor ktime options joined by commas' --arm wake-cpu=pin
arms 'aa-arms: unknown option: --arms' --arms main
"$ROOT/bench/aa-arms.sh" --help >"$T/help" 2>&1
ok "aa-arms --help: its usage" grep -q "usage: bench/aa-arms.sh" "$T/help"
# size-named-once: gpu-throughput's breakdown of a record's time stage (its
# time_went) starts a size at "time SIZE" and at the judge's anchored-size
# line, not at the size's later lines ("time SIZE: the children's CPUs
# woken ..."), which once doubled every size in it.
log='kharness: [0.002 s] time n=4: the candidate and the seed, against the anchor of job 1 (use 2)
kharness: [0.040 s] single calls done: 3.0 us the fastest
kharness: [0.080 s] warmed up in 0.040 s (timed until less than 1 s ago)
kharness: [0.200 s] timed: 4 batches of 6 calls each in 0.120 s
kharness: [0.201 s] time n=4: the children'"'"'s CPUs woken 20 times, 1 not in time
kharness: [0.202 s] time n=8'
jq -cn --arg log "$log" '{id: "lat-new-x", time: {log: $log}}' >"$T/went.nd"
# shellcheck disable=SC1090 # the function, from the bench script itself
. <(sed -n '/^time_went()/,/^}/p' "$ROOT/bench/gpu-throughput.sh")
expect_eq "size-named-once: each size once, in order" \
	"    lat-new-x: | n=4 0.002 single 0.040 warmed 0.080 (0.040 s, timed until less than) timed 0.200 (4) | n=8 0.202" \
	"$(time_went lat-new "$T/went.nd")"
# stages-summed: gpu-throughput's line of the new records' stages — the
# compile's and the time stage's median (min-max) and how many records timed
# their sizes with how many batches a role, under which stopping rule (the
# mean's where a size names none); records of other passes left out.
{
	jq -cn '{id: "lat-new-a", compile: {seconds: 1.0}, time: {seconds: 0.5, sizes: [{candidate: {n: 4}, stop_stat: "paired"}, {candidate: {n: 4}, stop_stat: "paired"}]}}'
	jq -cn '{id: "lat-new-b", compile: {seconds: 3.0}, time: {seconds: 0.7, sizes: [{candidate: {n: 6}, stop_stat: "paired"}, {candidate: {n: 4}, stop_stat: "paired"}]}}'
	jq -cn '{id: "lat-new-c", compile: {seconds: 2.0}, time: {seconds: 0.6, sizes: [{candidate: {n: 4}, stop_stat: "paired"}, {candidate: {n: 4}, stop_stat: "paired"}]}}'
	jq -cn '{id: "lat-new-d", compile: {seconds: 1.5}, time: {seconds: 0.9, sizes: [{candidate: {n: 8}}, {candidate: {n: 8}}]}}'
	jq -cn '{id: "lat-cached-a", compile: {seconds: 0}, time: {seconds: 0.3, sizes: [{candidate: {n: 4}}]}}'
} >"$T/stages.nd"
# shellcheck source=bench/lib.sh # med_min_max, med_range
. "$ROOT/bench/lib.sh"
# shellcheck disable=SC1090 # the function, from the bench script itself
. <(sed -n '/^stages()/,/^}/p' "$ROOT/bench/gpu-throughput.sh")
expect_eq "stages-summed: medians, ranges and the batches by rule" \
	"  stages, median (min-max): compile 1.75 (1.00-3.00) s, time 0.65 (0.50-0.90) s; batches a role at the sizes: 4/4 x2 (paired), 6/4 x1 (paired), 8/8 x1 (mean)" \
	"$(stages lat-new- "$T/stages.nd")"
# outside-the-stages: gpu-throughput's line of the seconds a record of the
# pass spent outside its three stages — its latency less their seconds,
# the pass's records paired with the records after the warm one, in order.
printf 'new\t2.000\ttimed\nnew\t3.000\ttimed\ncached\t0.500\ttimed\nnew\t1.600\ttimed\n' >"$T/lat.tsv"
{
	jq -cn '{id: "warm", compile: {seconds: 9}, time: {seconds: 9}}'
	jq -cn '{id: "a", compile: {seconds: 1.5}, verify: {seconds: 0.1}, time: {seconds: 0.3}}'
	jq -cn '{id: "b", compile: {seconds: 2.0}, verify: {seconds: 0.1}, time: {seconds: 0.5}}'
	jq -cn '{id: "c", verify: {seconds: 0.1}, time: {seconds: 0.3}}'
	jq -cn '{id: "d", compile: {seconds: 1.0}, time: {seconds: 0.5}}'
} >"$T/lat.nd"
# shellcheck disable=SC1090 # the function, from the bench script itself
. <(sed -n '/^outside()/,/^}/p' "$ROOT/bench/gpu-throughput.sh")
expect_eq "outside-the-stages: the new records' (0.1, 0.4, 0.1)" \
	"  outside the three stages (latency less compile, verify and time), median (min-max): 0.100 (0.100-0.400) s" \
	"$(outside new "$T/lat.tsv" "$T/lat.nd")"
expect_eq "outside-the-stages: the cached record's (0.1)" \
	"  outside the three stages (latency less compile, verify and time), median (min-max): 0.100 (0.100-0.100) s" \
	"$(outside cached "$T/lat.tsv" "$T/lat.nd")"
# bench/gpu-throughput.sh --help: the whole header, to its env line (a fixed
# line range once cut the last line off when the header grew).
"$ROOT/bench/gpu-throughput.sh" --help >"$T/help" 2>&1
expect_eq "gpu-throughput --help: ends with its env line" \
	"env: KSCIBIN (default build/gpu/bin), KSCI_BWRAP; records, and what it prints (summary.txt), under \$OUT/throughput (or ./gpu-logs/throughput)" \
	"$(tail -n 1 "$T/help" | sed 's/^ *//')"
# help-prints-whole-header: every bench and helper script whose --help is its
# opening comment prints that comment whole, and nothing after it.  Five
# printed a fixed range of lines that the header had since outgrown or
# shrunk from: nvcc-steps.sh's lost its env line, gpu-arena.sh's its usage
# and env lines, aa-arms.sh, ptxas-split.sh and check-under-load.sh printed
# their first line of code.
n=0
for f in "$ROOT"/bench/*.sh "$ROOT"/scripts/*.sh; do
	grep -q -- "--help) sed -n '2," "$f" || continue
	n=$((n + 1))
	expect_eq "help-prints-whole-header: ${f#"$ROOT"/}" \
		"$(awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$f")" \
		"$(bash "$f" --help 2>&1)"
done
ok "help-prints-whole-header: found the scripts ($n)" test "$n" -ge 15
# bench/cpu-use.sh: a process busy between two snaps is named with its CPU
# seconds; one started after the first snap is not (it was not alive in
# both).  No clock decides it: the second snap is taken once the busy
# process's own CPU ticks have grown by 20 (0.2 s at 100 Hz).
cu=$ROOT/bench/cpu-use.sh
ticks() { awk '{ l = $0; sub(/.*\) /, "", l); split(l, f, " "); print f[12] + f[13] }' "/proc/$1/stat"; }
sh -c 'while :; do :; done' &
busy=$!
"$cu" snap "$T/s0"
sh -c 'while :; do :; done' &
late=$!
t0=$(ticks "$busy")
while [ "$(ticks "$busy")" -lt $((t0 + 20)) ]; do sleep 0.05; done
"$cu" snap "$T/s1"
kill "$busy" "$late"
wait "$busy" "$late" 2>/dev/null
"$cu" report "$T/s0" "$T/s1" 1000 >"$T/rep"
expect_eq "cpu-use report: exit 0" 0 $?
ok "cpu-use report: the busy process named, with its seconds" grep -Eq "sh \($busy\) [0-9]+\.[0-9]{2} s" "$T/rep"
ok "cpu-use report: CPUs busy on average, of nproc, and stolen" grep -Eq "^CPUs busy on average [0-9]+\.[0-9]{2} of $(nproc), stolen [0-9]+\.[0-9]{2};" "$T/rep"
ok "cpu-use report: a process born after the first snap not named" sh -c "! grep -q '($late)' '$T/rep'"
# cpu-use-snap-process-gone-mid-read: a process that ended between the glob
# and the read (here a stat that is a dangling link) made cat fail, and under
# pipefail the whole snap said "cannot write" and exited 2, though it was
# whole (seen on an H200 in the twenty-first session).
mkdir -p "$T/proc/1" "$T/proc/2"
cp /proc/stat "$T/proc/stat"
cat "/proc/$$/stat" >"$T/proc/1/stat"
ln -s "$T/proc/gone" "$T/proc/2/stat"
KSCI_PROC=$T/proc "$cu" snap "$T/s-gone" 2>"$T/err"
expect_eq "cpu-use-snap-process-gone-mid-read: exit 0, nothing said" "0 " "$? $(cat "$T/err")"
expect_eq "cpu-use-snap-process-gone-mid-read: the machine's line and the live process's" "2 $$" \
	"$(wc -l <"$T/s-gone" | tr -d ' ') $(sed -n 2p "$T/s-gone" | cut -d' ' -f1)"
"$cu" report "$T/s0" "$T/nothing" >"$T/out" 2>"$T/err"
expect_eq "cpu-use report of a missing snap: exit 2" 2 $?
expect_eq "cpu-use report of a missing snap: the message" "cpu-use: $T/nothing is not a snap of bench/cpu-use.sh" "$(cat "$T/err")"
"$cu" report "$T/s0" "$T/s1" many >"$T/out" 2>"$T/err"
expect_eq "cpu-use report N not a number: exit 2" 2 $?
expect_eq "cpu-use report N not a number: the message" 'cpu-use: N: "many" is not a whole number' "$(cat "$T/err")"
"$cu" snap >"$T/out" 2>"$T/err"
expect_eq "cpu-use snap without a FILE: exit 2" 2 $?
"$cu" sample >"$T/out" 2>"$T/err"
expect_eq "cpu-use with an unknown word: exit 2, usage on stderr" "2 yes" "$? $(grep -q 'bench/cpu-use.sh snap FILE' "$T/err" && echo yes)"
# med_min_max (bench/lib.sh): what gpu-throughput's latency lines and
# compile-probe print, median of an odd and an even count, blank lines
# skipped, none at all.
. "$ROOT/bench/lib.sh"
expect_eq "med_min_max: odd count" "2.00 0.50 9.00" "$(printf '9\n0.5\n2\n' | med_min_max)"
expect_eq "med_min_max: even count, blank lines skipped" "2.37 1.96 4.50" "$(printf '2.531\n\n4.5\n1.962\n2.2\n' | med_min_max)"
expect_eq "med_min_max: none" "- - -" "$(printf '' | med_min_max)"
expect_eq "med_min_max 3: three places (cicc-probe's figures)" "2.367 1.962 4.500" "$(printf '2.531\n4.5\n1.962\n2.203\n' | med_min_max 3)"
# bench/compile-probe.sh: the same sources each call, each compiled alone;
# nvcc's seconds from the records, a compile that fails makes exit 1 and is
# counted.  Fake kgen and kcompile (KSCIBIN): kgen writes N children, kcompile
# answers each with its compiler_seconds from a list (or a failure).
pb=$T/probe-bin
mkdir -p "$pb"
cat >"$pb/kgen" <<'FAKE'
#!/usr/bin/env bash
n=0
while [ $# -gt 0 ]; do [ "$1" = --children ] && n=$2; shift; done
read -r _
for i in $(seq 1 "$n"); do printf '{"id":"c%d","status":"generated","source":"// %d"}\n' "$i" "$i"; done
FAKE
cat >"$pb/kcompile" <<'FAKE'
#!/usr/bin/env bash
[ "$1" = --no-cache ] || { echo "fake kcompile: not --no-cache" >&2; exit 9; }
k=$(($(cat "$PROBE_STATE" 2>/dev/null || echo 0) + 1)); echo "$k" >"$PROBE_STATE"
s=$(sed -n "${k}p" "$PROBE_SECS")
read -r l
if [ "$s" = fail ]; then printf '%s\n' "$l" | jq -c '.status = "error"'
else printf '%s\n' "$l" | jq -c --argjson s "$s" '.status = "compiled" | .compile = {seconds: ($s + 0.1), compiler_seconds: $s}'; fi
FAKE
chmod +x "$pb/kgen" "$pb/kcompile"
printf '%s\n' 1.5 0.5 2.5 1 >"$T/secs"
PROBE_STATE=$T/probe-n PROBE_SECS=$T/secs KSCIBIN=$pb OUT=$T/po "$ROOT/bench/compile-probe.sh" -n 3 --label before matmul >"$T/out" 2>"$T/err"
expect_eq "compile-probe: exit 0" 0 $?
ok "compile-probe: median, min, max of nvcc's seconds, the count, the CPU work and use" grep -Eq \
	'^before matmul: nvcc median 1\.25 s, min 0\.50, max 2\.50 over 4 of 4 compiled; fixed CPU work [0-9.]+ s; CPUs busy on average ' "$T/out"
expect_eq "compile-probe: every record kept, the label in the name" 4 "$(wc -l <"$T/po/compile-probe/before-matmul.nd")"
printf '%s\n' 2 fail 3 >"$T/secs"
rm -f "$T/probe-n"
PROBE_STATE=$T/probe-n PROBE_SECS=$T/secs KSCIBIN=$pb OUT=$T/po "$ROOT/bench/compile-probe.sh" -n 2 matmul >"$T/out" 2>"$T/err"
expect_eq "compile-probe: a compile that fails: exit 1" 1 $?
ok "compile-probe: a compile that fails: counted apart" grep -Eq '^probe matmul: nvcc median 2\.50 s, min 2\.00, max 3\.00 over 2 of 3 compiled;' "$T/out"
printf '%s\n' fail fail >"$T/secs"
rm -f "$T/probe-n"
PROBE_STATE=$T/probe-n PROBE_SECS=$T/secs KSCIBIN=$pb OUT=$T/po "$ROOT/bench/compile-probe.sh" -n 1 matmul >"$T/out" 2>"$T/err"
expect_eq "compile-probe: none compiled: exit 1" 1 $?
ok "compile-probe: none compiled: no figures, the count" grep -Eq '^probe matmul: nvcc median - s, min -, max - over 0 of 2 compiled;' "$T/out"
probe_bad() { # expected-stderr args...
	local want=$1
	shift
	KSCIBIN=$pb OUT=$T/po "$ROOT/bench/compile-probe.sh" "$@" >"$T/out" 2>"$T/err"
	expect_eq "compile-probe $*: exit 2" 2 $?
	expect_eq "compile-probe $*: the message" "$want" "$(cat "$T/err")"
}
probe_bad 'compile-probe: -n: "two" is not a whole number' -n two matmul
probe_bad 'compile-probe: --label: "a b" is not letters, digits, _ . -' --label 'a b' matmul
probe_bad 'compile-probe: one TASK, not 2' matmul softmax
probe_bad "compile-probe: no task nosuch (no $ROOT/data/tasks/nosuch/seed.cu)" nosuch
"$ROOT/bench/compile-probe.sh" --help >"$T/help" 2>&1
expect_eq "compile-probe --help: ends with its env line" \
	"env: KSCIBIN (default build/gpu/bin), KSCI_CUDA_ARCH; the records under \$OUT/compile-probe (or ./gpu-logs/compile-probe)" \
	"$(tail -n 1 "$T/help" | sed 's/^ *//')"
# bench_bad SCRIPT EXPECTED-STDERR ARGS...: bench/SCRIPT.sh refuses ARGS
# before it builds or runs anything: exit 2, the message, nothing on stdout.
bench_bad() {
	local name=$1 want=$2
	shift 2
	OUT=$T/bad "$ROOT/bench/$name.sh" "$@" >"$T/out" 2>"$T/err"
	expect_eq "$name $*: exit 2" 2 $?
	expect_eq "$name $*: the message" "$want" "$(cat "$T/err")"
	expect_eq "$name $*: nothing on stdout" 0 "$(wc -c <"$T/out" | tr -d ' ')"
}
# bench/cicc-probe.sh: its counts, CPU list and task are checked before
# nvcc runs (exit 2, named).
cm_bad() { bench_bad cicc-probe "$@"; }
cm_bad 'cicc-probe: -r: "0" is not a whole number above 0' -r 0
cm_bad 'cicc-probe: --cpus: "all" is not a CPU list' --cpus all
cm_bad 'cicc-probe: unknown option: --rounds' --rounds 3
cm_bad 'cicc-probe: one of --per-cpu, --race and --prefix' --per-cpu --race
cm_bad 'cicc-probe: one of --per-cpu, --race and --prefix' --race --prefix

cm_bad 'cicc-probe: --source: no file /nonexistent.cu' --source /nonexistent.cu matmul
# bench/compile-sandbox.sh: each arm in every round, the ratios within a
# round, and the wrapper that drops bubblewrap's options.  A fake kcompile
# (KSCIBIN) runs $KSCI_BWRAP with kcompile's sandbox options where it was not
# given --unsafe-no-sandbox, and answers with seconds by arm: the fake bwrap
# (KSCI_BWRAP) writes the arguments it got.
sb=$T/sandbox-bin
mkdir -p "$sb"
cp "$pb/kgen" "$sb/kgen"
cat >"$sb/kcompile" <<'FAKE'
#!/usr/bin/env bash
arm=none
if [[ " $* " != *" --unsafe-no-sandbox "* ]]; then
	"$KSCI_BWRAP" --unshare-all --unshare-user --uid 65534 --gid 65534 --die-with-parent --size 1073741824 --tmpfs /tmp --bind /c /c -- nvcc || exit 9
	arm=$BW_ARM
fi
case $arm in none) s=1 ;; full) s=1.1 ;; nouser) s=0.9 ;; hosttmp) s=1 ;; esac
while read -r l; do printf '%s\n' "$l" | jq -c --argjson s "$s" '.status = "compiled" | .compile = {compiler_seconds: $s, sandbox: "fake"}'; done
FAKE
cat >"$T/fake-bwrap" <<'FAKE'
#!/bin/sh
echo "$BW_ARM $*" >>"$BW_LOG"
FAKE
chmod +x "$sb/kgen" "$sb/kcompile" "$T/fake-bwrap"
BW_LOG=$T/bw.log KSCI_BWRAP=$T/fake-bwrap KSCIBIN=$sb OUT=$T/so "$ROOT/bench/compile-sandbox.sh" -r 2 -n 1 matmul >"$T/out" 2>"$T/err"
expect_eq "compile-sandbox: exit 0" 0 $?
expect_eq "compile-sandbox: every arm, each source, every round" 16 "$(wc -l <"$T/so/compile-sandbox/matmul.tsv")"
ok "compile-sandbox: the arm that is slower, always" grep -q '^full/none: median ratio 1.100, slower in 4 of 4 (one-sided sign test p 0.062)$' "$T/out"
ok "compile-sandbox: the arm that is faster, never slower" grep -q '^nouser/none: median ratio 0.900, slower in 0 of 4 ' "$T/out"
ok "compile-sandbox: the medians" grep -q '^full     compiler seconds median/min/max 1.100 1.100 1.100$' "$T/out"
expect_eq "compile-sandbox: full passes bubblewrap's options as they are" \
	"full --unshare-all --unshare-user --uid 65534 --gid 65534 --die-with-parent --size 1073741824 --tmpfs /tmp --bind /c /c -- nvcc" \
	"$(grep -m 1 '^full ' "$T/bw.log")"
expect_eq "compile-sandbox: nouser drops the namespaces" \
	"nouser --die-with-parent --size 1073741824 --tmpfs /tmp --bind /c /c -- nvcc" "$(grep -m 1 '^nouser ' "$T/bw.log")"
ok "compile-sandbox: hosttmp binds a directory at /tmp instead of the tmpfs" grep -Eq \
	'^hosttmp --unshare-all --unshare-user --uid 65534 --gid 65534 --die-with-parent --bind /[^ ]*/hosttmp /tmp --bind /c /c -- nvcc$' "$T/bw.log"
cs_bad() { bench_bad compile-sandbox "$@"; }
cs_bad 'compile-sandbox: -r: "0" is not a whole number above 0' -r 0 matmul
cs_bad 'compile-sandbox: -n: "x" is not a whole number' -n x matmul
cs_bad 'compile-sandbox: one TASK, not 0'
cs_bad "compile-sandbox: no task nosuch (no $ROOT/data/tasks/nosuch/seed.cu)" nosuch
# bench/nvcc-prefix.sh: its counts checked before anything is built or run.
np_bad() { bench_bad nvcc-prefix "$@"; }
np_bad 'nvcc-prefix: -r: "0" is not a whole number above 0' -r 0
np_bad 'nvcc-prefix: -r: "" is not a whole number above 0' -r
np_bad 'nvcc-prefix: --mutants: "two" is not a whole number' --mutants two
np_bad 'nvcc-prefix: unknown option: --rounds' --rounds 3
cm_bad "cicc-probe: no task nosuch (no $ROOT/data/tasks/nosuch/seed.cu)" nosuch
# latency-pass-warms-anchors: gpu-throughput's latency pass starts with the
# seed to warm its judges, but the seed itself was served from the time
# cache, so the first child measured the anchors (its time stage 1.47 s
# against 0.53-0.58, twenty-first session) inside the figures of a "warm
# judge".  Its first record is now the seed with a comment of its own; and
# the pass says how many of its records measured an anchor.
# shellcheck disable=SC1090 # the functions, from the bench script itself
. <(sed -n '/^warm_record()/,/^}/p; /^anchors_measured()/,/^}/p' "$ROOT/bench/gpu-throughput.sh")
jq -cn '{id: "matmul-seed", task: "matmul", backend: "cuda", source: "__global__ void k() {}\n", status: "timed", time: {}}' >"$T/seed.nd"
warm_record "$T/seed.nd" >"$T/warm.nd"
expect_eq "latency-pass-warms-anchors: the first record, generated, its own id" "lat-seed generated matmul cuda" \
	"$(jq -r '"\(.id) \(.status) \(.task) \(.backend)"' "$T/warm.nd")"
expect_eq "latency-pass-warms-anchors: the seed's source and more (a source of its own)" "true true" \
	"$(jq -r --slurpfile s "$T/seed.nd" '"\(.source | startswith($s[0].source)) \(.source != $s[0].source)"' "$T/warm.nd")"
{
	jq -cn '{id: "lat-new-a", time: {sizes: [{anchor: {cached: false, why: "used"}}, {anchor: {cached: true, uses: 1}}]}}'
	jq -cn '{id: "lat-new-b", time: {sizes: [{anchor: {cached: true, uses: 2}}, {anchor: {cached: true, uses: 2}}]}}'
	jq -cn '{id: "lat-new-c", time: {sizes: [{anchor: {cached: false, why: "none yet"}}, {anchor: {cached: false, why: "none yet"}}]}}'
	jq -cn '{id: "lat-new-d", status: "compile_error"}'
	jq -cn '{id: "lat-cached-a", time: {sizes: [{anchor: {cached: false, why: "old"}}]}}'
} >"$T/lat.nd"
expect_eq "latency-pass-warms-anchors: records that measured an anchor, and why" \
	"  records that measured an anchor: 2 of 4 (none yet 1, used 1)" "$(anchors_measured lat-new- "$T/lat.nd")"
expect_eq "latency-pass-warms-anchors: none measured" \
	"  records that measured an anchor: 0 of 1" "$(anchors_measured lat-new-b "$T/lat.nd")"
# latency-children-compiled-again: the latency pass ran before the
# throughput passes with the same children's sources, so 16 of the "new"
# pass's 64 were compile-cache hits.  Its records now carry a source of their
# own — the same for its new and its cached pass.
# shellcheck disable=SC1090 # the function, from the bench script itself
. <(sed -n '/^lat_record()/,/^}/p' "$ROOT/bench/gpu-throughput.sh")
kid='{"id":"tput-3","task":"matmul","backend":"cuda","source":"k()\n// throughput child tput-3 of matmul\n","status":"generated"}'
expect_eq "latency-children-compiled-again: the id, by pass" "lat-new-tput-3 lat-cached-tput-3" \
	"$(printf '%s\n' "$kid" | lat_record new | jq -r .id) $(printf '%s\n' "$kid" | lat_record cached | jq -r .id)"
expect_eq "latency-children-compiled-again: a source not the throughput child's" false \
	"$(printf '%s\n' "$kid" | lat_record new | jq --argjson k "$kid" '.source == $k.source')"
expect_eq "latency-children-compiled-again: the same source in both latency passes" true \
	"$(jq -n --argjson a "$(printf '%s\n' "$kid" | lat_record new)" --argjson b "$(printf '%s\n' "$kid" | lat_record cached)" '$a.source == $b.source')"
done_testing
