#!/usr/bin/env bash
# t13-cache-integrity: a compile-cache entry is used only while it matches
# the hashes stored with it (lib/compile.c).  The bug it guards against: a
# .so swapped into an entry by hand was loaded and judged as the source
# whose key names the entry, so a wrong kernel came out "verified".  Also:
# a killed compile's temporary directory is removed by a later compile.
. "$(dirname "$0")/lib.sh"

# rec SOURCE-FILE: a generated rowsum record.
rec() { jq -cn --rawfile s "$1" '{task: "rowsum", backend: "c", generation: 1, parents: [], source: $s, status: "generated"}'; }
good=$ROOT/data/tasks/rowsum/seed.c
# Compiles, runs, and is wrong: the row sum plus one.  Off by a fixed 1, not
# by a factor: verification stops at the first wrong size (1x1), where twice a
# single N(0,1) value is off by |x|, below 0.1 in about 8 % of runs
# (wrong-kernel-error-depends-on-the-seed: failed CI once).
sed 's/y\[r\] = (float)total;/y[r] = (float)total + 1.0f;/' "$good" >"$T/wrong.c"
printf 'void solve(const float* x, float* y, int rows, int cols) { this is not C; }\n' >"$T/bad.c"
entry() { echo "$KSCI_CACHE/compile/$1"; }
warning() { echo "$1: compile cache: entry $2 does not match its recorded hash; recompiling"; }
# fields FILE: "status compile.cached" of a kcompile record.
fields() { jq -r '"\(.status) \(.compile.cached)"' "$1"; }

rec "$good" | kcompile >"$T/good.nd" 2>"$T/c.err"
rec "$T/wrong.c" | kcompile >"$T/wrong.nd" 2>>"$T/c.err"
rec "$T/bad.c" | kcompile >"$T/bad.nd" 2>>"$T/c.err"
k=$(jq -r .compile.key "$T/good.nd")
kw=$(jq -r .compile.key "$T/wrong.nd")
kb=$(jq -r .compile.key "$T/bad.nd")
expect_eq "fresh compiles: good, wrong, bad" "compiled false compiled false compile_error false" \
	"$(fields "$T/good.nd") $(fields "$T/wrong.nd") $(fields "$T/bad.nd")"
expect_eq "fresh compiles: no warning" "" "$(cat "$T/c.err")"
expect_eq "the record carries the artifact's SHA-256" "$(sha256sum <"$(entry "$k")/out.so" | cut -c1-64)" \
	"$(jq -r .compile.artifact_sha256 "$T/good.nd")"
ok "the entry's result.json holds the artifact hash and the seal" \
	jq -e '(.artifact_sha256 | length) == 64 and (.entry_sha256 | length) == 64' "$(entry "$k")/result.json"
ok "a failure entry is sealed too" jq -e '.ok == false and (.entry_sha256 | length) == 64' "$(entry "$kb")/result.json"
ok "the seal stays in the cache, out of the record" jq -e '.compile | has("entry_sha256") | not' "$T/good.nd"
expect_eq "a clean entry is a hit, silently" "compiled true|" \
	"$(rec "$good" | kcompile 2>"$T/c.err" | jq -r '"\(.status) \(.compile.cached)"')|$(cat "$T/c.err")"

# The wrong kernel really is wrong: loaded for the good source, it would be judged wrong.
kverify --timeout 20 <"$T/wrong.nd" >"$T/w.nd"
expect_eq "the wrong kernel, verified as itself: wrong" wrong "$(jq -r .status "$T/w.nd")"
ok "the wrong kernel's max_abs_err is far above 1e-3 (so the check below can fail) — wrong-kernel-error-depends-on-the-seed" \
	jq -e '.verify.max_abs_err > 0.5' "$T/w.nd"

# --- the poisoned entry: the wrong kernel's .so in the good source's entry ---
cp "$(entry "$kw")/out.so" "$(entry "$k")/out.so"
# The check that can fail: the swap took, and nothing but the hash tells.
# The entry is where the good source's key leads, its result.json still says
# ok (what the cache used to trust), and its bytes are the wrong kernel's.
ok "poisoned: the entry's out.so is the wrong kernel's, byte for byte" cmp -s "$(entry "$kw")/out.so" "$(entry "$k")/out.so"
ok "poisoned: its result.json still says compiled, under the same key" \
	jq -e ".ok == true and .key == \"$k\"" "$(entry "$k")/result.json"
kverify --timeout 20 <"$T/good.nd" >"$T/v.nd" 2>"$T/v.err"
expect_eq "poisoned: kverify exits 0" 0 $?
expect_eq "poisoned: kverify warns, naming the entry" "$(warning kverify "$k")" "$(cat "$T/v.err")"
expect_eq "poisoned: the record is verified, by the rebuilt good kernel" verified "$(jq -r .status "$T/v.nd")"
# By absolute error: a row sum near zero makes the relative error of a right
# result large (max_rel_err >= 1e-3 failed 1 CI run in many: the seeds are
# fresh each run), while the wrong kernel is off by 1 everywhere.
ok "poisoned: the result is right (errors at float rounding, not off by 1) — max_rel_err-flaked-on-near-zero-rows" \
	jq -e '.verify.max_abs_err < 1e-3 and .verify.checks > 0' "$T/v.nd"
not_ok_is "poisoned: the entry was rebuilt, its out.so no longer the wrong kernel's" \
	cmp -s "$(entry "$kw")/out.so" "$(entry "$k")/out.so"
expect_eq "poisoned: the rebuilt entry matches its recorded hash" "$(jq -r .artifact_sha256 "$(entry "$k")/result.json")" \
	"$(sha256sum <"$(entry "$k")/out.so" | cut -c1-64)"
kverify --timeout 20 <"$T/good.nd" >"$T/v2.nd" 2>"$T/v2.err"
expect_eq "rebuilt: verified again, no warning" "verified|" "$(jq -r .status "$T/v2.nd")|$(cat "$T/v2.err")"

# kcompile checks the same way; compile.cached says the entry was not used.
cp "$(entry "$kw")/out.so" "$(entry "$k")/out.so"
rec "$good" | kcompile >"$T/c2.nd" 2>"$T/c.err"
expect_eq "poisoned, kcompile: warns, recompiles (cached false)" "$(warning kcompile "$k")|compiled false" \
	"$(cat "$T/c.err")|$(fields "$T/c2.nd")"

# --- a failure entry is not trusted either ---
# Edited to say "compiled", with a working .so put beside it: without the seal
# this would be a hit handing out a kernel for a source that does not compile.
jq -c '.ok = true | .status = "ok"' "$(entry "$kb")/result.json" >"$T/r.json"
cp "$T/r.json" "$(entry "$kb")/result.json"
cp "$(entry "$k")/out.so" "$(entry "$kb")/out.so"
rec "$T/bad.c" | kcompile >"$T/b2.nd" 2>"$T/c.err"
expect_eq "forged success of a failure entry: warned, compiled again, compile_error" \
	"$(warning kcompile "$kb")|compile_error false" "$(cat "$T/c.err")|$(fields "$T/b2.nd")"
# A forged failure would deny a good kernel.
jq -c '.ok = false | .status = "error" | .log = "forged"' "$(entry "$k")/result.json" >"$T/r.json"
cp "$T/r.json" "$(entry "$k")/result.json"
rec "$good" | kcompile >"$T/c3.nd" 2>"$T/c.err"
expect_eq "forged failure of a good entry: warned, compiled" "$(warning kcompile "$k")|compiled false" \
	"$(cat "$T/c.err")|$(fields "$T/c3.nd")"

# --- a whole entry copied under another key (its own hashes all match) ---
rm -rf "$(entry "$k")"
cp -r "$(entry "$kw")" "$(entry "$k")"
kverify --timeout 20 <"$T/good.nd" >"$T/v3.nd" 2>"$T/v.err"
expect_eq "another key's whole entry: the seal names the key; warned, verified" "$(warning kverify "$k")|verified" \
	"$(cat "$T/v.err")|$(jq -r .status "$T/v3.nd")"

# --- an entry written before entries were sealed: a plain miss ---
jq -c 'del(.entry_sha256, .artifact_sha256)' "$(entry "$k")/result.json" >"$T/r.json"
cp "$T/r.json" "$(entry "$k")/result.json"
rec "$good" | kcompile >"$T/c4.nd" 2>"$T/c.err"
expect_eq "unsealed (older) entry: recompiled without a warning" "|compiled false" "$(cat "$T/c.err")|$(fields "$T/c4.nd")"
ok "unsealed (older) entry: replaced by a sealed one" jq -e '(.entry_sha256 | length) == 64' "$(entry "$k")/result.json"
expect_eq "and then a hit" "compiled true" "$(rec "$good" | kcompile | jq -r '"\(.status) \(.compile.cached)"')"

# killed-compile-left-its-tmp-directory: a compile whose process was killed
# (a kcompile -j worker, a preempted job) left <cache>/compile/tmp.* behind
# for ever.  Each is now tmp.PID@HOST.XXXXXX, and the next compile on the
# host removes those of this host whose PID is gone and that are older than
# any compile may last (2 x the deadline + 60 s; 300 s at the default 120).
host=$(uname -n | tr './@' '___')
sh -c 'exit 0' &
dead=$!
wait "$dead"
c=$KSCI_CACHE/compile
mk() { mkdir -p "$c/$1" && touch -d "$2" "$c/$1"; }
mk "tmp.$dead@$host.aaaaaa" '1 hour ago'  # killed, old: removed
mk "tmp.$dead@$host.bbbbbb" '1 minute ago' # too young: a compile may still be at it
mk "tmp.$$@$host.cccccc" '1 hour ago'     # its process lives
mk "tmp.$dead@other_host.dddddd" '1 hour ago' # another host's (a shared cache): its PIDs mean nothing here
mk "tmp.eeeeee" '1 hour ago'              # not ours to judge (an older name)
printf '\n/* %s */\n' "$dead" >"$T/fresh.c" && cat "$good" >>"$T/fresh.c"
expect_eq "killed-compile-left-its-tmp-directory: the next compile works" compiled "$(rec "$T/fresh.c" | kcompile 2>/dev/null | jq -r .status)"
expect_eq "killed-compile-left-its-tmp-directory: only this host's old one of a dead process is gone" \
	"$(printf '%s\n' "tmp.$$@$host.cccccc" "tmp.$dead@$host.bbbbbb" "tmp.$dead@other_host.dddddd" tmp.eeeeee | LC_ALL=C sort | xargs)" \
	"$(cd "$c" && find . -maxdepth 1 -name 'tmp.*' | sed 's|^\./||' | LC_ALL=C sort | xargs)"

done_testing
