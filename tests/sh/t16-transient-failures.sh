#!/usr/bin/env bash
# t16-transient-failures: failures of the machine, not of the candidate.
# - full-cache-fs-cached-compile-error-for-ever: a compile that failed
#   because the compile cache's file system was full was cached as the
#   source's compile_error, for ever (lib/compile.c: transient failures are
#   passed on, marked, and never stored).
# - killed-kverify-left-harness-running: kill -9 of kverify left its harness
#   (and the kernel in it) running for ever, since only kverify enforced the
#   deadline (lib/proc.c: the child dies with its caller).
# - trusted-role-compile-timeout-blamed-on-candidate: under load (t23 in a
#   run of scripts/check-under-load.sh) the task's own reference compiled
#   past its deadline inside kverify, and the candidate's record came out
#   `crashed` like any crash of its own, so the fix pass would send it to
#   the model; now the stage is marked transient and says why.
# - judge-device-failure-was-the-candidate's-crash: a judge whose own device
#   or arena could not be set up answered `crashed` for the candidate; it
#   answers crashed with transient (lib/harness.c machine_fault, unit test
#   t_harness), which kverify passes on, says, and exits 1 for.
. "$(dirname "$0")/lib.sh"

rec() { jq -cn --rawfile s "$1" '{task: "rowsum", backend: "c", generation: 1, parents: [], source: $s, status: "generated"}'; }
rec "$ROOT/data/tasks/rowsum/seed.c" >"$T/good.nd"

# --- full-cache-fs-cached-compile-error-for-ever ---
# A 12 KiB tmpfs holds the source and the wrapper but not the .so; then the
# same file system is made larger and the same source compiled again.
if unshare -m true 2>/dev/null; then
	mkdir -p "$T/small"
	# shellcheck disable=SC2016 # expanded by the inner bash, from its arguments
	unshare -m bash -c '
		mount -t tmpfs -o size=12k tmpfs "$1" || exit 99
		KSCI_CACHE="$1" kcompile <"$2" >"$3/full.nd" 2>"$3/full.err"
		echo $? >"$3/full.rc"
		mount -o remount,size=4m "$1"
		KSCI_CACHE="$1" kcompile <"$2" >"$3/roomy.nd" 2>"$3/roomy.err"
		echo $? >"$3/roomy.rc"
		find "$1/compile" -name result.json | wc -l >"$3/entries"
	' _ "$T/small" "$T/good.nd" "$T"
	if [ -s "$T/full.rc" ]; then
		expect_eq "full cache fs: kcompile exits 1 (a record it could not process)" 1 "$(cat "$T/full.rc")"
		ok "full cache fs: compile_error marked transient, the reason named" \
			jq -e '.status == "compile_error" and .compile.transient == true and (.compile.message | test("No space left on device.*not cached"))' "$T/full.nd"
		ok "full cache fs: said on stderr, with the key" grep -q "kcompile: compile: No space left on device (key [0-9a-f]*): not cached" "$T/full.err"
		expect_eq "full cache fs, then room: compiled, not a cached failure" "compiled false" \
			"$(jq -r '"\(.status) \(.compile.cached)"' "$T/roomy.nd")"
		expect_eq "full cache fs, then room: kcompile exits 0" 0 "$(cat "$T/roomy.rc")"
		expect_eq "only the good compile's entry is in the cache" 1 "$(cat "$T/entries")"
	else
		echo "# SKIP full-cache-fs: cannot mount a tmpfs here"
	fi
else
	echo "# SKIP full-cache-fs: no mount namespace here (unshare -m)"
fi

# --- killed-kverify-left-harness-running ---
# A kernel that never returns; kverify's own deadline is far away, so only
# the death of kverify can end the harness.
printf 'void solve(const float* x, float* y, int rows, int cols) { (void)x; (void)y; (void)rows; (void)cols; for (volatile int i = 0;; i++) ; }\n' >"$T/hang.c"
rec "$T/hang.c" | kcompile >"$T/hang.nd"
# gone PID...: 0 once none of them is left, polling up to 30 s (the death
# signal is immediate; the bound only keeps a broken build from hanging).
gone() {
	local i
	for ((i = 0; i < 300; i++)); do
		local alive=0 p
		for p in "$@"; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ "$alive" = 0 ] && return 0
		sleep 0.1
	done
	return 1
}
# kids PID: the pids of every process below PID.
kids() {
	local c
	for c in $(pgrep -P "$1"); do
		echo "$c"
		kids "$c"
	done
}
for mode in unsafe sandboxed; do
	if [ "$mode" = sandboxed ] && ! bwrap --unshare-all --ro-bind / / true 2>/dev/null; then
		echo "# SKIP killed-kverify, sandboxed: bubblewrap cannot run here"
		continue
	fi
	flag=$([ "$mode" = unsafe ] && echo --unsafe-no-sandbox)
	# shellcheck disable=SC2086 # flag is one word or none
	kverify $flag --timeout 600 <"$T/hang.nd" >"$T/kv.nd" 2>/dev/null &
	kv=$!
	# Wait (bounded) until the harness and its candidate child are running.
	for ((i = 0; i < 300; i++)); do
		below=$(kids "$kv")
		[ "$(echo "$below" | grep -c .)" -ge 2 ] && break
		sleep 0.1
	done
	ok "killed kverify ($mode): its harness was running" test -n "$below"
	kill -9 "$kv"
	wait "$kv" 2>/dev/null
	# shellcheck disable=SC2086 # a list of pids
	ok "killed kverify ($mode): everything below it is gone" gone $below
done

# --- trusted-role-compile-timeout-blamed-on-candidate ---
# A compiler killed by a signal (as the deadline does) for the reference
# only (its source names the reference), in kverify, on a fresh cache.
cat >"$T/killed-cc" <<'SH'
#!/bin/sh
grep -q "rowsum reference" candidate.c 2>/dev/null && kill -KILL $$ # run in the build directory
exec cc "$@"
SH
chmod +x "$T/killed-cc"
rec "$ROOT/data/tasks/rowsum/seed.c" | KSCI_CACHE=$T/cache-t KSCI_CC=$T/killed-cc kcompile --unsafe-no-sandbox >"$T/tc.nd" 2>/dev/null
KSCI_CACHE=$T/cache-t KSCI_CC=$T/killed-cc kverify --unsafe-no-sandbox <"$T/tc.nd" >"$T/tv.nd" 2>"$T/tv.err"
ok "the reference's compile killed: the record is written on, its stage marked transient" \
	jq -e '.status == "crashed" and .verify.transient == true' "$T/tv.nd"
ok "…and the message says whose compile failed and why" \
	jq -e '.verify.message | test("reference of task rowsum does not compile .*killed by a signal")' "$T/tv.nd"
KSCI_CACHE=$T/cache-t kverify --unsafe-no-sandbox <"$T/tc.nd" >"$T/tv2.nd" 2>/dev/null
expect_eq "nothing of it was kept: with a working compiler the same record verifies" verified "$(jq -r .status "$T/tv2.nd")"
# --- cc1-killed-cached-as-compile-error ---
# The OOM killer takes cc1, not the driver: gcc exits 1 saying so, which was
# cached as the source's compile error.
cat >"$T/cc1-killed" <<'SH'
#!/bin/sh
[ "$1" = --version ] && exec cc --version
echo "cc: fatal error: Killed signal terminated program cc1" >&2
echo "compilation terminated." >&2
exit 1
SH
chmod +x "$T/cc1-killed"
rec "$ROOT/data/tasks/rowsum/seed.c" | KSCI_CACHE=$T/cache-k KSCI_CC=$T/cc1-killed kcompile --unsafe-no-sandbox >"$T/k1.nd" 2>/dev/null
ok "cc1 killed: compile_error, transient" jq -e '.status == "compile_error" and .compile.transient == true' "$T/k1.nd"
rec "$ROOT/data/tasks/rowsum/seed.c" | KSCI_CACHE=$T/cache-k kcompile --unsafe-no-sandbox >"$T/k2.nd" 2>/dev/null
expect_eq "cc1 killed: not cached, the source compiles next time" "compiled false" "$(jq -r '"\(.status) \(.compile.cached)"' "$T/k2.nd")"
# shellcheck source=pipelines/evolve-passes.sh
. "$ROOT/pipelines/evolve-passes.sh"
jq -c '.status = "crashed" | .verify = {ok: false, status: "error", message: "its own crash"}' "$T/tc.nd" >"$T/own.nd"
cat "$T/tv.nd" "$T/own.nd" >"$T/fixin.nd"
passes_fix_input "$T/fixin.nd" "$T/fixout.nd"
expect_eq "the fix pass takes the candidate's own crash, not the machine's" "its own crash" "$(jq -r .verify.message "$T/fixout.nd")"
# --- judge-device-failure-was-the-candidate's-crash ---
# A judge (KSCI_HARNESS_DIR) that answers as lib/harness.c's machine_fault.
mkdir -p "$T/hdir"
cat >"$T/hdir/kharness" <<'SH'
#!/bin/sh
n=$(jq -r .nonce)
printf 'KSCI-RESULT %s {"ok":false,"status":"crashed","transient":true,"message":"the judge'"'"'s device did not start: creating the CUDA context: out of memory (the machine'"'"'s, not the candidate'"'"'s)"}\n' "$n"
SH
chmod +x "$T/hdir/kharness"
KSCI_CACHE=$T/cache-t kcompile --unsafe-no-sandbox <"$T/good.nd" >"$T/hc.nd" 2>/dev/null
KSCI_CACHE=$T/cache-t KSCI_HARNESS_DIR=$T/hdir kverify --unsafe-no-sandbox --fresh-judge <"$T/hc.nd" >"$T/hv.nd" 2>"$T/hv.err"
expect_eq "the judge's device failed: kverify exits 1" 1 $?
ok "...the record written on, crashed, its stage transient" jq -e '.status == "crashed" and .verify.transient == true' "$T/hv.nd"
ok "...said on stderr" grep -q "kverify: .*the judge's device did not start: creating the CUDA context" "$T/hv.err"
cat "$T/hv.nd" "$T/own.nd" >"$T/fixin2.nd"
passes_fix_input "$T/fixin2.nd" "$T/fixout2.nd"
expect_eq "...the fix pass leaves it alone" "its own crash" "$(jq -r .verify.message "$T/fixout2.nd" | xargs)"
done_testing
