#!/usr/bin/env bash
# tests/gpu/attacks.sh — `make check-gpu`: cuda candidates that attack the
# judge (kverify, ktime and the harness behind them), not the machine: the
# cuda mirror of tests/sh/t14-judge-attacks.sh, on the axpy task of
# tests/gpu/tasks.  Each kernel (tests/gpu/attacks/*.cu) is correct wherever
# its attack fails, so only a working attack changes the verdict:
#    1 forge        at its first benchmark call, searches its own memory for
#                   the verdict tag and nonces, prints forged "speedup 1000"
#                   verdicts on stdout and stderr, _exit(0)   -> ktime crashed
#    2 patchref     a wrong kernel (+1) whose constructor patches any other
#                   loaded ksci_call (dl_iterate_phdr)        -> kverify wrong
#    3 memo-ptr     returns without launching for an output pointer seen
#                   before                -> ktime wrong, or timed with no hit
#    4 memo-sample  copies its stored output when 64 sampled x elements
#                   match the last call's -> ktime wrong, or timed with no hit
#    5 memo-count   real kernel on one call in four, zeros otherwise
#                                                             -> ktime wrong
#    6 mutate       writes into x at benchmark sizes -> ktime wrong (input)
#    7 flood        3 MB on stdout and stderr, then correct
#                                   -> verified, timed, logs under 64 KB
#    8 procs        fork, process_vm_readv, PTRACE_ATTACH and kill on its
#                   parent, then correct  -> all =-1 in the log, verified
#    9 side stream  tests/gpu/sidestream.cu (the same kernel run.sh times):
#                   the work on a non-blocking stream -> ktime wrong (cross-check,
#                   in each of 3 attempts)
#   10 persist      a persistent kernel left spinning on its own stream past
#                   "done"      -> ktime timeout (or wrong, busy probe), not timed
#   11 testsize     right at the test sizes, garbage from n = 2^20
#                                          -> verified, ktime wrong
#   12 hog          a 50 ms busy kernel on a non-blocking stream after each
#                   correct call     -> ktime wrong (cross-check or busy probe),
#                   each attempt ended after two batches (beyond doubt)
#   12b hogslow     the same under --stop-slower 0.5 (as the pipelines run)
#                                    -> ktime slow, beyond doubt
#   13 skipwrite    stops launching after its first call at a benchmark size,
#                   on axpy_loose (a tolerance any finite z passes)
#                                    -> ktime wrong (NaN: the judge's poison)
# Each goes through kcompile | kverify | ktime --budget 0.5; for each: every
# stage's record comes out, the status is the failure (or the containment)
# listed, and the attack's side effect did not happen (its ATTACK lines in
# the stage's log).  Written for the judge that computes its verdict in a
# process that never loads candidate code and runs each role in a child
# under seccomp (lib/harness.c, lib/judge/kid.h).
# Without a GPU (or with --compile-only) only the kcompile checks run.
# Ends with "N passed, N failed"; exit status 1 on any failure.
set -euo pipefail
usage() { echo "usage: tests/gpu/attacks.sh [-h] [--compile-only]   (env: KSCIBIN, KSCI_CACHE)"; }
compile_only=0
case ${1:-} in
-h | --help) usage; exit 0 ;;
--compile-only) compile_only=1 ;;
"") ;;
*) usage >&2; exit 2 ;;
esac
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$here/../.." && pwd)
BIN=${KSCIBIN:-$ROOT/build/bin}
export PATH="$BIN:$PATH"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ksci-gpuatk.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export KSCI_CACHE=${KSCI_CACHE:-$tmp/cache}
# The tasks, and axpy_loose: axpy with a tolerance any finite output passes.
mkdir -p "$tmp/tasks"
cp -r "$here/tasks/axpy" "$tmp/tasks/axpy"
cp -r "$here/tasks/axpy" "$tmp/tasks/axpy_loose"
python3 -c 'import json,sys; t=json.load(open(sys.argv[1])); t["name"]="axpy_loose"; t["tolerance"]={"f32": {"atol": 1e30, "rtol": 1e30}}; json.dump(t, open(sys.argv[1], "w"))' \
	"$tmp/tasks/axpy_loose/task.json"
export KSCI_TASKS=$tmp/tasks
pass=0 fail=0
if [ "$compile_only" = 0 ] && ! nvidia-smi -L >/dev/null 2>&1; then
	echo "# no NVIDIA GPU here: the kcompile checks only"
	compile_only=1
fi

# record NAME FILE: a generated cuda candidate record for FILE on stdout, of
# the task $task (axpy unless set).
record() {
	python3 -c 'import json,sys; print(json.dumps({"id": "atk-" + sys.argv[1], "task": sys.argv[3],
 "backend": "cuda", "generation": 0, "parents": [], "source": open(sys.argv[2]).read(), "status": "generated"}))' "$1" "$2" "${task:-axpy}"
}
# rec FILE EXPR: the Python expression EXPR with r = the last record of FILE
# (None when there is none), g(k, ...) = r's value at the keys ("" when
# missing) and nums(v) = the numbers anywhere in v outside "log" fields.
rec() {
	python3 -c '
import json, sys
try:
    lines = [l for l in open(sys.argv[1], errors="replace").read().splitlines() if l.strip()]
except OSError:
    lines = []
r = json.loads(lines[-1]) if lines else None
def g(*ks):
    v = r
    for k in ks:
        if not isinstance(v, dict) or k not in v:
            return ""
        v = v[k]
    return v
def nums(v):
    if isinstance(v, bool):
        return []
    if isinstance(v, (int, float)):
        return [v]
    if isinstance(v, dict):
        return [x for k, w in v.items() if k != "log" for x in nums(w)]
    if isinstance(v, list):
        return [x for w in v for x in nums(w)]
    return []
v = eval(sys.argv[2])
print(str(v).lower() if isinstance(v, bool) else v)' "$1" "$2"
}
# st NAME STAGE (c, v or t): the status of NAME's record after that stage.
st() { rec "$tmp/$1.$2.json" 'g("status") if r else "(no record)"'; }
# msg NAME KEY (verify or time): that object's message, one line.
msg() { rec "$tmp/$1.t.json" "str(g(\"$2\", \"message\")).replace(\"\\n\", \" \")[:300]"; }
# logof NAME KEY: the record's verify.log or time.log (the judge's stderr,
# with the tail of each child's own output).
logof() { rec "$tmp/$1.t.json" "g(\"$2\", \"log\")"; }

# check DESC CMD...: one check; CMD's output is shown when it fails.
check() {
	local desc=$1 out
	shift
	if out=$("$@" 2>&1); then
		pass=$((pass + 1))
		printf 'ok   %s\n' "$desc"
	else
		fail=$((fail + 1))
		printf 'FAIL %s\n' "$desc"
		[ -z "$out" ] || printf '%s\n' "$out" | tail -n 8 | sed 's/^/     | /'
	fi
}
# is DESC WANT GOT: GOT is WANT.
same() { [ "$1" = "$2" ] || { printf 'want: %s\ngot:  %s\n' "$1" "$2"; return 1; }; }
is() { check "$1" same "$2" "$3"; }
# one_of DESC GOT WANT...: GOT is one of the WANTs.
one_of() {
	local desc=$1 got=$2 w
	shift 2
	for w in "$@"; do
		[ "$got" = "$w" ] && { check "$desc" true; return 0; }
	done
	check "$desc (got $got, want one of: $*)" false
}
# has NAME KEY PATTERN: the record's KEY.log has PATTERN (its ATTACK lines
# are shown when it does not).
has() {
	local l
	l=$(logof "$1" "$2")
	grep -q -- "$3" <<<"$l" || {
		echo "no \"$3\" in $2.log; its ATTACK lines:"
		grep ATTACK <<<"$l" | head -n 5
		return 1
	}
}
# hasnt NAME KEY PATTERN: the record's KEY.log does not have PATTERN.
hasnt() {
	local l
	l=$(logof "$1" "$2")
	if grep -q -- "$3" <<<"$l"; then
		grep -- "$3" <<<"$l" | head -n 5 || true
		return 1
	fi
}
# came_out NAME: one record out of each stage that ran.
came_out() {
	local s n
	for s in c v t; do
		[ "$compile_only" = 1 ] && [ "$s" != c ] && continue
		n=$(grep -c . "$tmp/$1.$s.json" || true)
		[ "$n" = 1 ] || { echo "$n records out of the $s stage (kcompile, kverify, ktime)"; return 1; }
	done
}
# stages NAME FILE [ktime options...]: NAME's record through kcompile,
# kverify and ktime --budget 0.5; each stage's records in $tmp/NAME.{c,v,t}.json,
# its stderr in .err; ktime's seconds in $ktime_s.  Then the checks that
# every candidate gets: the records came out, and it compiled.
ktime_s=0
stages() {
	local name=$1 file=$2 t0=$SECONDS t1
	shift 2
	record "$name" "$file" >"$tmp/$name.in"
	kcompile <"$tmp/$name.in" >"$tmp/$name.c.json" 2>"$tmp/$name.c.err" || true
	if [ "$compile_only" = 0 ]; then
		kverify <"$tmp/$name.c.json" >"$tmp/$name.v.json" 2>"$tmp/$name.v.err" || true
		t1=$SECONDS
		ktime --budget 0.5 --timeout 120 "$@" <"$tmp/$name.v.json" >"$tmp/$name.t.json" 2>"$tmp/$name.t.err" || true
		ktime_s=$((SECONDS - t1))
		echo "# $name: $(st "$name" c) -> $(st "$name" v) -> $(st "$name" t) in $((SECONDS - t0)) s (ktime $ktime_s s); $(msg "$name" time)"
	else
		echo "# $name: $(st "$name" c) in $((SECONDS - t0)) s"
	fi
	check "$name: the record comes out of every stage" came_out "$name"
	is "$name: compiled" compiled "$(st "$name" c)"
	[ "$(st "$name" c)" = compiled ] || tail -n 5 "$tmp/$name.c.err" | sed 's/^/     | /'
	[ "$(st "$name" c)" = compiled ] || rec "$tmp/$name.c.json" 'str(g("compile", "log"))[-1500:]' | sed 's/^/     | /'
}
# gpu: whether the device stages ran (not --compile-only).
gpu() { [ "$compile_only" = 0 ]; }
A=$here/attacks

# 1. Forged verdict: the child dies at its first benchmark call having printed
# a verdict with every nonce-like string it found; the verdict is read from
# the judge's stdout only, and the child never sees the nonce.
stages forge "$A/forge.cu"
if gpu; then
	is "forge: verified by kverify (honest at the test sizes)" verified "$(st forge v)"
	is "forge: ktime crashed (not timed)" crashed "$(st forge t)"
	is "forge: no time.speedup_vs_baseline, no 1000 anywhere in time or verify outside their logs" "false 0" \
		"$(rec "$tmp/forge.t.json" '"%s %d" % (str("speedup_vs_baseline" in (g("time") or {})).lower(),
			sum(x == 1000 for x in nums([g("time"), g("verify")])))')"
	check "forge: the attack ran to its end (its log)" has forge time "ATTACK forge: .* forged verdicts printed"
fi

# 2. Reference patch: the reference is loaded only by the judge, never in the
# candidate's child, so there is nothing to patch.
stages patchref "$A/patchref.cu"
if gpu; then
	is "patchref: kverify wrong (the reference was out of reach)" wrong "$(st patchref v)"
	check "patchref: the constructor ran and patched nothing (its log)" has patchref verify "ATTACK patch: .* 0 ksci_call patched"
	check "patchref: no ksci_call of another object was patched" hasnt patchref verify "ATTACK patch: patched"
fi

# 3, 4. Memoisation by pointer or by sampled contents (both honest at the test
# sizes).  With fresh inputs and poisoned outputs for every call, a memo that
# hits serves a stale answer (wrong); a memo that never hits leaves an honest
# kernel, timed, whose log shows no hit, and calling that wrong would be a
# false alarm.  The attack works only when ktime times it with hits.
hits() { logof "$1" time | grep -c "ATTACK $1: hit" || true; }
memo_ok() { # NAME: wrong, or timed with no hit in the log
	local s
	s=$(st "$1" t)
	echo "status $s, $(hits "$1") hits logged"
	[ "$s" = wrong ] || { [ "$s" = timed ] && [ "$(hits "$1")" = 0 ]; }
}
for n in memo-ptr memo-sample; do
	stages "$n" "$A/$n.cu"
	if gpu; then
		is "$n: verified by kverify (honest at the test sizes)" verified "$(st "$n" v)"
		check "$n: ktime wrong, or timed without a memo hit ($(memo_ok "$n" | head -n 1))" memo_ok "$n"
		check "$n: the memo was armed at a benchmark size (its log)" has "$n" time "ATTACK $n: armed"
	fi
done

# 5. Memoisation by call count: three calls in four are zeros.
stages memo-count "$A/memo-count.cu"
if gpu; then
	is "memo-count: verified by kverify (honest at the test sizes)" verified "$(st memo-count v)"
	is "memo-count: ktime wrong, with no speedup in the record" "wrong false" \
		"$(st memo-count t) $(rec "$tmp/memo-count.t.json" '"speedup_vs_baseline" in (g("time") or {})')"
fi

# 6. Input mutation at benchmark sizes.
stages mutate "$A/mutate.cu"
if gpu; then
	is "mutate: verified by kverify (honest at the test sizes)" verified "$(st mutate v)"
	is "mutate: ktime wrong" wrong "$(st mutate t)"
	is "mutate: the message says the input was modified, naming x" "true x" \
		"$(rec "$tmp/mutate.t.json" '"input argument was modified" in str(g("time", "message"))') $(rec "$tmp/mutate.t.json" 'g("time", "mismatch", "arg")')"
fi

# 7. Flood: the verdict is not lost behind 3 MB, and the logs stay small.
stages flood "$A/flood.cu"
if gpu; then
	is "flood: verified (the verdict is not hidden)" verified "$(st flood v)"
	is "flood: timed (the verdict is not hidden)" timed "$(st flood t)"
	is "flood: verify.log and time.log each under 64 KB" "true true" \
		"$(rec "$tmp/flood.t.json" 'len(str(g("verify", "log")).encode()) < 65536') $(rec "$tmp/flood.t.json" 'len(str(g("time", "log")).encode()) < 65536')"
fi

# 8. Other processes: fork, process_vm_readv, PTRACE_ATTACH and kill on the
# parent (the judge), each refused by the child's seccomp filter.
stages procs "$A/procs.cu"
if gpu; then
	is "procs: verified" verified "$(st procs v)"
	is "procs: timed (the judge lived through the attempts)" timed "$(st procs t)"
	for k in verify time; do
		for call in fork process_vm_readv ptrace kill; do
			check "procs: $call on the parent failed (the $k log says $call=-1)" has procs "$k" "ATTACK $call=-1"
		done
		check "procs: no forked child ran (no fork=child in the $k log)" hasnt procs "$k" "fork=child"
	done
fi

# 9. Side stream: the kernel of run.sh's side-stream case, the same check.
stages sidestream "$here/sidestream.cu"
if gpu; then
	is "sidestream: verified" verified "$(st sidestream v)"
	is "sidestream: ktime wrong" wrong "$(st sidestream t)"
	check "sidestream: the message is the timing cross-check's" grep -q "cross-check" <<<"$(msg sidestream time)"
	# A failed cross-check is timed again (an honest kernel failed it once
	# while 16 nvcc started beside the judge); the cheat fails every time.
	check "sidestream: condemned only after 3 attempts (the message)" grep -q "in each of 3 attempts" \
		<<<"$(msg sidestream time)"
	check "sidestream: attempts 1 and 2 timed again (the judge's log)" grep -q "attempt 2 of 3 failed" \
		<<<"$(logof sidestream time)"
fi

# 10. A persistent kernel left spinning past "done": the child's device sync
# at the end of the batch waits for it, so the judge's deadline (a little
# under --timeout 30) passes; timeout is expected, wrong (the busy probe) is
# the other acceptable outcome; timed never.  Then a correct kernel must
# still time normally: the spinner died with its child.
stages persist "$A/persist.cu" --timeout 30
if gpu; then
	is "persist: verified by kverify (honest at the test sizes)" verified "$(st persist v)"
	one_of "persist: ktime timeout (or wrong: the busy probe), not timed" "$(st persist t)" timeout wrong
	check "persist: the spinner was launched (its log)" has persist time "ATTACK persist: spinner launched at n=[0-9]*: no error"
	check "persist: ktime returned soon after its --timeout (30 s; took $ktime_s s, at most 45)" test "$ktime_s" -le 45
	stages good-after-persist "$here/good.cu"
	is "persist: the GPU is free afterwards (good.cu verified, timed)" "verified timed" \
		"$(st good-after-persist v) $(st good-after-persist t)"
fi

# 11. Right only at the test sizes.
stages testsize "$A/testsize.cu"
if gpu; then
	is "testsize: verified by kverify (the test sizes)" verified "$(st testsize v)"
	is "testsize: ktime wrong" wrong "$(st testsize t)"
	check "testsize: wrong at a benchmark size (the message)" grep -q "benchmark size" <<<"$(msg testsize time)"
fi

# 12. Hog: 50 ms of busy kernel on a side stream after each correct call.
# Its batches are long (the batch size is set by the fastest role: some 32
# calls of 50 ms), so four batches each, not ktime's default ten.
stages hog "$A/hog.cu" --min-runs 4 --max-runs 4
if gpu; then
	is "hog: verified by kverify (correct results)" verified "$(st hog v)"
	is "hog: ktime wrong, with no speedup in the record" "wrong false" \
		"$(st hog t) $(rec "$tmp/hog.t.json" '"speedup_vs_baseline" in (g("time") or {})')"
	check "hog: caught by the timing cross-check or the busy probe (the message)" \
		grep -Eq "cross-check|still busy" <<<"$(msg hog time)"
	# hog-attempt-ends-early: each attempt stops after the candidate's
	# first two batches (stats_xcheck_far), not after its 4 rounds.
	is "hog: each of its 3 attempts ended after the candidate's first two batches (its log)" 3 \
		"$(logof hog time | grep -c 'the attempt ends')"
fi
# hog-slow-under-stop-slower: with early rejection on (the pipelines pass
# --stop-slower 0.5) the same hog ends `slow` beyond doubt after two batches,
# before the cross-check's three attempts (which take 74 s).
stages hogslow "$A/hog.cu" --min-runs 4 --max-runs 4 --stop-slower 0.5
if gpu; then
	is "hogslow: ktime slow, beyond doubt, with no speedup in the record" "slow true false" \
		"$(st hogslow t) $(rec "$tmp/hogslow.t.json" 'g("time", "slow", "beyond_doubt")') $(rec "$tmp/hogslow.t.json" '"speedup_vs_baseline" in (g("time") or {})')"
	check "hogslow: no attempt ended by the cross-check first (its log)" hasnt hogslow time 'the attempt ends'
fi

# 13. Skip the write, where the other calls' outputs would pass: only the
# poison in one sector of every KiB of z shows it (skipped-write-stale-output-
# within-tolerance, the mirror of t14's).
task=axpy_loose stages skipwrite "$A/skipwrite.cu"
if gpu; then
	is "skipwrite: verified by kverify (honest at the test sizes)" verified "$(st skipwrite v)"
	is "skipwrite: ktime wrong" wrong "$(st skipwrite t)"
	check "skipwrite: NaN where it never wrote (the message)" grep -q "NaN (element never written" <<<"$(msg skipwrite time)"
	check "skipwrite: the attack skipped (its log)" has skipwrite time "ATTACK skipwrite: skipped"
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
