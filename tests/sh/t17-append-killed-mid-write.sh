#!/usr/bin/env bash
# t17-append-killed-mid-write: the append is crash-safe.  The bug it guards
# against: SIGKILL (or a power cut) during evolve.sh's `cat >> archive` left
# a truncated gzip member, after which every resume exited 3 for ever.  Now
# a killed append leaves a torn last member that every reader reports the
# same way (exit 4, its byte offset, the repair command); `karchive repair`
# cuts it back to the last whole member (the cut bytes kept beside it), and
# the run resumes where it stopped.  The kill is not raced: an LD_PRELOAD
# shim (tests/fault/kill_in_pwrite.c) lets karchive write half its member,
# then kills it with SIGKILL.
. "$(dirname "$0")/lib.sh"

if ! cc -std=c11 -shared -fPIC -o "$T/kip.so" "$ROOT/tests/fault/kill_in_pwrite.c" -ldl 2>"$T/cc.err"; then
	echo "ok 1 # SKIP cannot build the fault shim: $(head -n 1 "$T/cc.err")"
	done_testing
	exit 0
fi
cd "$T" || exit 1
rec() { printf '{"id":"%s","task":"rowsum","backend":"c","generation":%s,"status":"verified"}\n' "$1" "$2"; }

# --- karchive append killed half-way through its write ----------------------
{ rec a0 0; rec a1 0; } | karchive append k.gz
whole=$(wc -c <k.gz)
cp k.gz k0.gz
# (in a child shell, so that this one does not report the kill on stderr)
{ rec b0 1; rec b1 1; } >b.nd
sh -c 'LD_PRELOAD=$1 KILL_IN_PWRITE_PROG=karchive karchive append k.gz <b.nd; exit $?' _ "$T/kip.so" 2>/dev/null
expect_eq "append-killed-mid-write: karchive died by SIGKILL" 137 $?
ok "append-killed-mid-write: half a member landed after the whole one" test "$(wc -c <k.gz)" -gt "$whole"
karchive check k.gz 2>err
expect_eq "append-killed-mid-write: check exits 4 at the torn member's first byte" \
	"4|karchive: k.gz: damaged at byte $whole (truncated gzip member); repair with: karchive repair k.gz" "$?|$(cat err)"
kselect --task rowsum k.gz >out 2>err
expect_eq "append-killed-mid-write: kselect refuses it the same way, nothing out" \
	"4|kselect: k.gz: damaged at byte $whole (truncated gzip member); repair with: karchive repair k.gz|" \
	"$?|$(cat err)|$(cat out)"
torn=$(wc -c <k.gz)
rec c0 1 | karchive append k.gz 2>/dev/null
expect_eq "append-killed-mid-write: a later append is refused, nothing appended" "4|$torn" "$?|$(wc -c <k.gz)"
karchive repair k.gz 2>/dev/null
ok "append-killed-mid-write: repair gives back the archive before the append, byte for byte" cmp k0.gz k.gz
ok "append-killed-mid-write: the cut half member is kept beside it" test -s "k.gz.cut-$whole"
karchive append k.gz <b.nd
expect_eq "append-killed-mid-write: the append done again, every record once" "a0 a1 b0 b1" "$(zcat k.gz | jq -r .id | xargs)"

# --- the same crash inside evolve.sh, then the resume -----------------------
skip_without_bwrap
a=$T/run.ndjson.gz
evolve.sh --task rowsum --generations 1 --population 2 --budget 0.05 --archive "$a" -q 2>err
expect_eq "evolve: generations 0 and 1 archived" "0|0 1" "$?|$(zcat "$a" | jq -r .generation | sort -u | xargs)"
g1=$(wc -c <"$a")
LD_PRELOAD=$T/kip.so KILL_IN_PWRITE_PROG=karchive \
	evolve.sh --task rowsum --generations 2 --population 2 --budget 0.05 --archive "$a" -q 2>err
expect_eq "evolve, append killed: exit 3 (a tool failed fatally)" 3 $?
ok "evolve, append killed: says the append failed" grep -q "generation 2: cannot append to $a" err
evolve.sh --task rowsum --generations 2 --population 2 --budget 0.05 --archive "$a" -q 2>err
expect_eq "evolve, resume after the kill: exit 4" 4 $?
ok "evolve, resume after the kill: the torn member's offset" \
	grep -qF "$a: damaged at byte $g1 (truncated gzip member); repair with: karchive repair $a" err
ok "evolve, resume after the kill: evolve.sh appended nothing and says how to repair" \
	grep -qF "evolve.sh: $a: damaged (a truncated or corrupt gzip member); nothing appended; repair with: karchive repair $a" err
karchive repair "$a" 2>/dev/null
expect_eq "evolve: repaired back to generation 1's end" "$g1" "$(wc -c <"$a")"
evolve.sh --task rowsum --generations 2 --population 2 --budget 0.05 --archive "$a" -q 2>err
expect_eq "evolve, resume after the repair: exit 0, generation 2 added" "0|0 1 2" \
	"$?|$(zcat "$a" | jq -r .generation | sort -u | xargs)"
expect_eq "evolve, resume after the repair: no id twice" "" "$(zcat "$a" | jq -r .id | sort | uniq -d)"
ok "evolve, resume after the repair: the archive is whole" karchive check "$a"

done_testing
