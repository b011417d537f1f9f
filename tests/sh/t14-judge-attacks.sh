#!/usr/bin/env bash
# Candidates that attack the judge itself (kverify, ktime and the harness
# behind them), not the machine (t12). Each kernel, in tests/sh/attacks/, is
# correct wherever its attack fails, so only a working attack changes the
# verdict:
#   1 forged verdict     searches its own memory for the verdict tag and the
#                        nonce, prints a forged "ok, speedup 1000" line, exits 0
#   2 reference patch    a wrong kernel whose constructor rewrites the
#                        reference's ksci_call to jump to its own
#   3 memo by pointer    returns at once for an output pointer it has seen
#   4 memo by samples    copies its last y when 64 sampled x elements match
#   5 memo by call count computes on one call in four, writes zeros otherwise
#   6 input mutation     writes into x after computing y
#   7 stdout/stderr flood  3 MB each, then correct results
#   8 fork               forks and says whether it could
#   9 kill the judge     kill(getppid(), SIGKILL) and kill(-1, SIGKILL)
#  10 ptrace             process_vm_readv and PTRACE_ATTACH on its parent
#  11 spin threads       leaves two threads spinning forever
#  12 skip the write     stops writing y after the check before timing
# For each: the record comes out, its status is the failure (or the
# containment) listed, and the attack's side effect is checked from outside.
# Written for the judge that computes its verdict in a process that never
# loads candidate code, runs each kernel in a child under seccomp, and gives
# every timed call fresh inputs. The judge that ran candidates in its own
# process (docs/harness.md, "Known limits") fails 1, 2, 4, 7, 8 and 10.
. "$(dirname "$0")/lib.sh"

skip_without_bwrap

# A private copy of the tasks: if an attack got out, the damage stays here.
mkdir -p "$T/tasks"
cp -r "$ROOT/data/tasks/rowsum" "$T/tasks/"
export KSCI_TASKS=$T/tasks
mark=ksp$(printf '%08x' "$$$RANDOM" | tail -c 8) # the spin threads' name
hostpidns=$(readlink /proc/self/ns/pid)

# cand NAME: the record of tests/sh/attacks/NAME.c, the test's values filled in.
cand() {
	sed -e "s|@MARK@|$mark|g" -e "s|@HOSTPIDNS@|$hostpidns|g" "$here/attacks/$1.c" >"$T/$1.c"
	jq -cn --arg n "$1" --rawfile s "$T/$1.c" \
		'{task: "rowsum", backend: "c", generation: 1, parents: [], source: $s, status: "generated", name: $n}'
}
names="forge patchref memo-ptr memo-sample memo-count mutate flood fork killjudge ptrace spin"
for n in $names; do cand "$n"; done >"$T/in.ndjson"
# get FILE NAME JQ: JQ applied to the record named NAME in FILE.
get() { jq -r --arg n "$2" "select(.name == \$n) | $3" "$1"; }
# out NAME FILE: exactly one record named NAME came out.
out() { test "$(jq -c --arg n "$1" 'select(.name == $n)' "$2" | wc -l)" = 1; }
# logs FILE NAME STAGE PATTERN: the stage's log (the kernel's output) matches.
logs() {
	local l
	l=$(get "$1" "$2" ".$3.log // \"\"")
	grep ATTACK <<<"$l" | head -n 5 # shown when the check fails
	grep -q -- "$4" <<<"$l"
}
# in_out STAGE IN OUT: as many records out as in.
in_out() { expect_eq "$1: every record in comes out" "$(wc -l <"$2")" "$(wc -l <"$3")"; }

kcompile <"$T/in.ndjson" >"$T/c.ndjson" 2>"$T/c.err"
expect_eq "every attacking candidate compiles" "$(echo "$names" | wc -w) compiled" \
	"$(jq -r .status "$T/c.ndjson" | sort | uniq -c | xargs)"

# kverify: all but the two that get a run of their own (kill, spin).
jq -c 'select(.name != "killjudge" and .name != "spin")' "$T/c.ndjson" >"$T/v.in"
kverify --timeout 30 <"$T/v.in" >"$T/v.ndjson" 2>"$T/v.err"
expect_eq "kverify exits 0" 0 $?
in_out kverify "$T/v.in" "$T/v.ndjson"
vst() { get "$T/v.ndjson" "$1" .status; }

# 2. Reference patch: alone with the reference, the constructor can reach it.
ok "reference patch: the record comes out of kverify" out patchref "$T/v.ndjson"
expect_eq "reference patch: the wrong kernel is wrong (the reference was out of its reach)" wrong "$(vst patchref)"
not_ok_is "reference patch: no ksci_call of another object was patched (its log)" \
	logs "$T/v.ndjson" patchref verify "ATTACK patch: patched"

# 6. Input mutation.
ok "input mutation: the record comes out of kverify" out mutate "$T/v.ndjson"
expect_eq "input mutation: wrong" wrong "$(vst mutate)"
ok "input mutation: the message says the input was modified, naming x" \
	jq -e -s 'map(select(.name == "mutate"))[0].verify | (.message | test("input")) and .mismatch.arg == "x"' "$T/v.ndjson"

# 7. Flood: the verdict is not lost behind 3 MB, and the log stays small.
ok "stdout/stderr flood: the record comes out of kverify" out flood "$T/v.ndjson"
expect_eq "stdout/stderr flood: verified (the verdict is not hidden)" verified "$(vst flood)"
ok "stdout/stderr flood: verify.log under 64 KB" \
	jq -e -s 'map(select(.name == "flood"))[0] | (.verify.log // "") | utf8bytelength < 65536' "$T/v.ndjson"

# 8. Fork.
ok "fork: the record comes out of kverify" out fork "$T/v.ndjson"
expect_eq "fork: verified" verified "$(vst fork)"
ok "fork: refused (the log says fork=-1)" logs "$T/v.ndjson" fork verify "ATTACK fork=-1"
not_ok_is "fork: no child ran (no fork=child in the log)" logs "$T/v.ndjson" fork verify "fork=child"

# 10. ptrace and process_vm_readv on the parent.
ok "ptrace: the record comes out of kverify" out ptrace "$T/v.ndjson"
expect_eq "ptrace: verified" verified "$(vst ptrace)"
ok "ptrace: process_vm_readv on the parent failed (log)" logs "$T/v.ndjson" ptrace verify "ATTACK process_vm_readv=-1"
ok "ptrace: PTRACE_ATTACH on the parent failed (log)" logs "$T/v.ndjson" ptrace verify "ATTACK ptrace=-1"

# 9. Kill the judge: a run of its own, so its exit status is its own. The
# kills should fail (verified); a judge that ends the child for trying
# (crashed) is the worst acceptable; either way kverify carries on.
jq -c 'select(.name == "killjudge")' "$T/c.ndjson" >"$T/k.in"
kverify --timeout 30 <"$T/k.in" >"$T/k.ndjson" 2>"$T/k.err"
expect_eq "kill the judge: kverify lives and exits 0" 0 $?
ok "kill the judge: the record comes out of kverify" out killjudge "$T/k.ndjson"
kst=$(get "$T/k.ndjson" killjudge .status)
echo "# kill the judge: status $kst"
ok "kill the judge: verified (the kills failed), or at worst crashed" \
	sh -c "[ '$kst' = verified ] || [ '$kst' = crashed ]"

# 11. Spin threads: a run of its own, timed against its --timeout.
jq -c 'select(.name == "spin")' "$T/c.ndjson" >"$T/s.in"
t0=$SECONDS
kverify --timeout 20 <"$T/s.in" >"$T/s.ndjson" 2>"$T/s.err"
src=$? took=$((SECONDS - t0))
expect_eq "spin threads: kverify exits 0, the record comes out" "0 1" "$src $(jq -c 'select(.name == "spin")' "$T/s.ndjson" | wc -l)"
expect_eq "spin threads: verified" verified "$(get "$T/s.ndjson" spin .status)"
echo "# spin threads: kverify took $took s"
ok "spin threads: kverify returned within its --timeout (20 s)" test "$took" -lt 20
gone() { for _ in $(seq 50); do pgrep -w -x "$mark" >/dev/null || return 0; sleep 0.1; done; return 1; }
ok "spin threads: none left running afterwards" gone

# ktime on the four that attack only at benchmark sizes (kverify checks only
# test sizes by default, so it rightly passes 1, 3, 4 and 5), and on the
# flood, which ktime judges on its own: it goes in as verified whatever
# kverify said above. Fixed run counts keep it cheap and repeatable.
for n in forge memo-ptr memo-sample memo-count; do
	expect_eq "$n: verified by kverify (honest at the test sizes), so ktime takes it" verified "$(vst "$n")"
done
{
	jq -c 'select(.name == ("forge", "memo-ptr", "memo-sample", "memo-count"))' "$T/v.ndjson"
	jq -c 'select(.name == "flood") | .status = "verified"' "$T/c.ndjson"
} >"$T/t.in"
ktime --budget 1 --min-runs 6 --max-runs 6 --timeout 60 <"$T/t.in" >"$T/t.ndjson" 2>"$T/t.err"
expect_eq "ktime exits 0" 0 $?
in_out ktime "$T/t.in" "$T/t.ndjson"
tst() { get "$T/t.ndjson" "$1" .status; }

# 1. Forged verdict: the child dies at its first benchmark call, having
# printed a verdict with every nonce it could find; nothing it printed counts.
ok "forged verdict: the record comes out of ktime" out forge "$T/t.ndjson"
expect_eq "forged verdict: crashed (not timed)" crashed "$(tst forge)"
expect_eq "forged verdict: no time.speedup_vs_baseline, no 1000 in time or verify outside their logs" "false 0" \
	"$(get "$T/t.ndjson" forge '(.time // {} | has("speedup_vs_baseline") | tostring) + " " +
		([.time, .verify | select(. != null) | del(.log) | .. | numbers | select(. == 1000)] | length | tostring)')"

# 3, 4. Memoisation by pointer or by sampled contents (kverify alone passes
# both: they cheat only at benchmark sizes). With fresh inputs and poisoned
# outputs for every call, a memo that hits serves a stale answer (wrong); a
# memo that never hits (new inputs agree with the samples nowhere, output
# buffers never repeat) leaves an honest kernel, timed, whose log shows no
# hit, and calling that wrong would be a false alarm. The attack works only
# when ktime times it with hits.
hits() { get "$T/t.ndjson" "$1" '.time.log // ""' | grep -c "ATTACK $1: hit"; }
memo_ok() { # NAME: wrong, or timed with no hit in the log
	local st
	st=$(tst "$1")
	echo "status $st, $(hits "$1") hits logged"
	[ "$st" = wrong ] || { [ "$st" = timed ] && [ "$(hits "$1")" = 0 ]; }
}
for n in memo-ptr memo-sample; do
	what="memoisation by pointer"
	[ "$n" = memo-sample ] && what="memoisation by sampled contents"
	echo "# $what: $(memo_ok "$n" | head -n 1)"
	ok "$what: the record comes out of ktime" out "$n" "$T/t.ndjson"
	ok "$what: wrong, or timed without a memo hit" memo_ok "$n"
done

# 5. Memoisation by call count: three calls in four are zeros.
ok "memoisation by call count: the record comes out of ktime" out memo-count "$T/t.ndjson"
expect_eq "memoisation by call count: wrong, with no speedup in the record" "wrong false" \
	"$(tst memo-count) $(get "$T/t.ndjson" memo-count '.time // {} | has("speedup_vs_baseline")')"

# skipped-write-stale-output-within-tolerance: timed outputs are poisoned by
# sectors (one 32-byte sector in every KiB, where the child cannot know), not
# whole; the rest holds another call's outputs. With a tolerance so loose
# that those pass, a kernel that stops writing after the check before timing
# must still be wrong (the judge checks its single calls and one call of
# every batch): the poison it never wrote over is what shows it.
mkdir -p "$T/tasks/rowsum_loose"
cp "$T/tasks/rowsum/"*.c "$T/tasks/rowsum_loose/"
jq '.name = "rowsum_loose" | .tolerance = {f32: {atol: 1e30, rtol: 1e30}}' "$T/tasks/rowsum/task.json" \
	>"$T/tasks/rowsum_loose/task.json"
cand skip-write | jq -c '.task = "rowsum_loose"' | kcompile | kverify --timeout 30 |
	ktime --budget 1 --min-runs 6 --max-runs 6 --timeout 60 >"$T/loose.ndjson" 2>"$T/loose.err"
echo "# skipped-write-stale-output-within-tolerance: $(jq -r '.status + ": " + (.time.message // .verify.message // "")' "$T/loose.ndjson" | head -c 300)"
expect_eq "skipped-write-stale-output-within-tolerance: wrong, NaN where it never wrote (the poison)" \
	"wrong true" "$(jq -r '.status + " " + ((.time.message // "") | test("NaN \\(element never written") | tostring)' "$T/loose.ndjson")"

# 7. Flood, timed.
ok "stdout/stderr flood: the record comes out of ktime" out flood "$T/t.ndjson"
expect_eq "stdout/stderr flood: timed (the verdict is not hidden)" timed "$(tst flood)"
ok "stdout/stderr flood: time.log under 64 KB" \
	jq -e -s 'map(select(.name == "flood"))[0] | (.time.log // "") | utf8bytelength < 65536' "$T/t.ndjson"

# judge-arena-beyond-file-size-limit: the judge's arena is a memfd (256 MiB for
# c), which RLIMIT_FSIZE counts; the 64 MiB limit the tool once set on the
# judge killed it at the first benchmark size ("killed by signal 25").
ok "judge-arena-beyond-file-size-limit: the flood record has its timed sizes" \
	jq -e -s 'map(select(.name == "flood"))[0] | (.time.sizes | length) > 0' "$T/t.ndjson"
ok "judge-arena-beyond-file-size-limit: no record says signal 25" \
	sh -c "! grep -q 'signal 25' '$T/t.ndjson'"
done_testing
