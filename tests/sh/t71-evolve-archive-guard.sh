#!/usr/bin/env bash
# evolve.sh and evolve-parallel.sh before anything runs: a damaged archive,
# a plain one, a run lock held by another run, usage errors, a full disk.
# Each check is named after the bug it guards (docs/exit-codes.md, "Pipelines").
. "$(dirname "$0")/lib.sh"

base=$T/base.ndjson.gz
evolve.sh --task softmax --generations 0 --population 1 --budget 0.05 --archive "$base" -q 2>"$T/base.err"
expect_eq "the seed archive is made" "0 1" "$? $(gzip -dc "$base" | wc -l)"
gzip -dc "$base" >"$T/base.ndjson"

# Bug (torn-archive-runaway): on an archive gzip or jq could not read to its
# end, evolve.sh with -q never stopped (263 generations for --generations 3),
# and without -q appended a generation whose first record joined the torn
# line.  Now both scripts refuse it before anything runs: exit 4, the archive
# untouched, the message names it and the repair command.
size=$(wc -c <"$base")
head -c "$((size - 30))" "$base" >"$T/trunc.ndjson.gz"          # a gzip member cut short
head -c -40 "$T/base.ndjson" | gzip -c >"$T/tornline.ndjson.gz"  # whole member, torn last line
{ cat "$base"; head -c -40 "$T/base.ndjson" | gzip -c; } >"$T/tornlast.ndjson.gz"
for f in trunc tornline tornlast; do
	for s in evolve.sh evolve-parallel.sh; do
		for q in -q ""; do
			a=$T/$f.ndjson.gz
			before=$(md5sum <"$a")
			# shellcheck disable=SC2086 # $q is one word or none
			timeout 120 "$s" --task softmax --population 1 --budget 0.05 --archive "$a" --generations 3 $q \
				>"$T/out" 2>"$T/err"
			expect_eq "torn-archive-runaway: $f, $s ${q:-without -q}: exit 4" 4 $?
			expect_eq "torn-archive-runaway: $f, $s ${q:-without -q}: archive untouched" "$before" "$(md5sum <"$a")"
			ok "torn-archive-runaway: $f, $s ${q:-without -q}: names the archive and the repair" \
				grep -qF "$s: $a: damaged (" "$T/err"
			ok "torn-archive-runaway: $f, $s ${q:-without -q}: says how to repair" \
				grep -qF "repair with: karchive repair $a" "$T/err"
			ok "torn-archive-runaway: $f, $s ${q:-without -q}: nothing was run (no summary)" test ! -s "$T/out"
		done
	done
done
ok "torn-archive-runaway: evolve-parallel.sh left no work directory" test ! -e "$T/trunc.ndjson.gz.work/softmax-c-g1"

# Bug (plain-archive-gzip-appended): a plain NDJSON archive got gzip members
# appended that no tool could read.  Now it is refused (exit 4); one that
# already has gzip bytes after its lines is damaged (exit 4).
cp "$T/base.ndjson" "$T/plain.ndjson"
before=$(md5sum <"$T/plain.ndjson")
evolve.sh --task softmax --population 1 --generations 1 --archive "$T/plain.ndjson" -q 2>"$T/err"
expect_eq "plain-archive-gzip-appended: evolve.sh exits 4" 4 $?
expect_eq "plain-archive-gzip-appended: archive untouched" "$before" "$(md5sum <"$T/plain.ndjson")"
ok "plain-archive-gzip-appended: says it is plain NDJSON and what to do" \
	grep -qF "evolve.sh: $T/plain.ndjson: plain NDJSON, not gzip" "$T/err"
cp "$T/base.ndjson" "$T/plain2.ndjson.gz"
evolve-parallel.sh --task softmax --population 1 --generations 1 --archive "$T/plain2.ndjson.gz" -q 2>"$T/err"
expect_eq "plain-archive-gzip-appended: evolve-parallel.sh, plain archive named .gz: exit 4" 4 $?
{ cat "$T/base.ndjson"; gzip -c "$T/base.ndjson"; } >"$T/mixed.ndjson"
before=$(md5sum <"$T/mixed.ndjson")
evolve.sh --task softmax --population 1 --generations 1 --archive "$T/mixed.ndjson" -q 2>"$T/err"
expect_eq "plain-archive-gzip-appended: plain lines then gzip: exit 4" 4 $?
ok "plain-archive-gzip-appended: plain lines then gzip: damaged, with the repair" \
	grep -qF "damaged (a line that is not JSON" "$T/err"
expect_eq "plain-archive-gzip-appended: plain lines then gzip: untouched" "$before" "$(md5sum <"$T/mixed.ndjson")"

# Bug (two-runs-one-archive): two evolve.sh runs on one archive at once did
# every generation twice, both exit 0.  Now the run lock ARCHIVE.run.lock is
# held for the whole run: with it held (here by flock(1)), a run exits 5 at
# once, nothing run, the archive untouched.
cp "$base" "$T/locked.ndjson.gz"
a=$T/locked.ndjson.gz
before=$(md5sum <"$a")
for s in evolve.sh evolve-parallel.sh; do
	timeout 60 flock "$a.run.lock" "$s" --task softmax --population 1 --generations 1 --archive "$a" \
		>"$T/out" 2>"$T/err"
	expect_eq "two-runs-one-archive: $s with the run lock held exits 5" 5 $?
	ok "two-runs-one-archive: $s says so" grep -qF "$s: $a is in use by another run (its run lock $a.run.lock is held)" "$T/err"
	expect_eq "two-runs-one-archive: $s: archive untouched" "$before" "$(md5sum <"$a")"
done
timeout 60 flock "$T/new.ndjson.gz.run.lock" reprocess.sh "$base" "$T/new.ndjson.gz" 2>"$T/err"
expect_eq "two-runs-one-archive: reprocess.sh with NEW's run lock held exits 5" 5 $?
ok "two-runs-one-archive: reprocess.sh wrote nothing" test ! -e "$T/new.ndjson.gz" -a ! -e "$T/new.ndjson.gz.work"
reprocess.sh "$T/trunc.ndjson.gz" "$T/new2.ndjson.gz" 2>"$T/err"
expect_eq "torn-archive-runaway: reprocess.sh of a truncated OLD exits 4" 4 $?
ok "torn-archive-runaway: reprocess.sh says how to repair" grep -qF "repair with: karchive repair $T/trunc.ndjson.gz" "$T/err"
# Two runs started together: one waits for nothing and exits 5, or (started
# after the other ended) finds the work done; never a generation twice.
evolve.sh --task softmax --population 2 --generations 1 --budget 0.05 --archive "$a" -q 2>"$T/err1" &
pid1=$!
evolve.sh --task softmax --population 2 --generations 1 --budget 0.05 --archive "$a" -q 2>"$T/err2" &
pid2=$!
wait "$pid1"; rc1=$?
wait "$pid2"; rc2=$?
ok "two-runs-one-archive: started together, one ran (exit $rc1 $rc2)" \
	sh -c "[ '$rc1 $rc2' = '0 5' ] || [ '$rc1 $rc2' = '5 0' ] || [ '$rc1 $rc2' = '0 0' ]"
expect_eq "two-runs-one-archive: started together, no generation twice" "0 1 1" "$(gzip -dc "$a" | jq -r .generation | xargs)"

# Bug (usage-exit-3): an unknown back end or provider exited 3 after touching
# the archive.  Now: 2, nothing run, the archive not even created.
for args in "--backend fortran" "--provider bogus" "--strategy bogus" "--kgen-opt --no-such" \
	"--kcompile-opt --no-such" "--max-provider-failures x"; do
	for s in evolve.sh evolve-parallel.sh; do
		# shellcheck disable=SC2086 # $args is words
		timeout 60 "$s" --task softmax --population 1 --generations 1 --archive "$T/u/a.ndjson.gz" $args 2>"$T/err"
		rc=$?
		# evolve-parallel.sh: spread.sh's stages check their options on the hosts.
		[ "$s $args" = "evolve-parallel.sh --kcompile-opt --no-such" ] && { rm -rf "$T/u"; continue; }
		expect_eq "usage-exit-3: $s $args: exit 2" 2 "$rc"
		ok "usage-exit-3: $s $args: nothing created" test ! -e "$T/u"
	done
done
cp "$base" "$T/usage.ndjson.gz"
before=$(md5sum <"$T/usage.ndjson.gz")
evolve.sh --task softmax --backend fortran --archive "$T/usage.ndjson.gz" 2>/dev/null
expect_eq "usage-exit-3: an existing archive: exit 2" 2 $?
expect_eq "usage-exit-3: an existing archive: untouched" "$before" "$(md5sum <"$T/usage.ndjson.gz")"

# Bug (disk-full-exit-1): with the archive's disk full, evolve.sh exited 1
# (gzip's or cat's status).  Now 3, and the archive is as it was: every
# member whole.  The disk is a full 64 KiB tmpfs in a mount namespace.
if unshare -rm true 2>/dev/null; then
	cp "$base" "$T/full-before.gz"
	# shellcheck disable=SC2016 # the inner script expands its own arguments
	unshare -rm bash -c '
		d=$1/full; mkdir -p "$d" && mount -t tmpfs -o size=64k tmpfs "$d" || exit 99
		cp "$1/base.ndjson.gz" "$d/a.ndjson.gz" && : >"$d/a.ndjson.gz.run.lock" && : >"$d/a.ndjson.gz.lock"
		dd if=/dev/zero of="$d/fill" bs=1k 2>/dev/null
		evolve.sh --task softmax --population 2 --generations 1 --budget 0.05 --archive "$d/a.ndjson.gz" -q 2>"$1/full.err"
		echo $? >"$1/full.rc"
		cp "$d/a.ndjson.gz" "$1/full-after.gz"' full "$T"
	expect_eq "disk-full-exit-1: evolve.sh exits 3" 3 "$(cat "$T/full.rc" 2>/dev/null)"
	ok "disk-full-exit-1: says it cannot append" grep -q "cannot append to .*a.ndjson.gz" "$T/full.err"
	expect_eq "disk-full-exit-1: the archive is as it was" "$(md5sum <"$T/full-before.gz")" "$(md5sum <"$T/full-after.gz")"
	# archive-append.sh (evolve-parallel.sh's append): exit 3 and no torn member left.
	head -c 30000 /dev/urandom | base64 -w 100 | jq -Rc "{x: .}" >"$T/big.ndjson" # 30 KB that gzip cannot shrink
	# shellcheck disable=SC2016 # the inner script expands its own arguments
	unshare -rm bash -c '
		d=$1/full2; mkdir -p "$d" && mount -t tmpfs -o size=64k tmpfs "$d" || exit 99
		cp "$1/base.ndjson.gz" "$d/a.ndjson.gz" && : >"$d/a.ndjson.gz.lock"
		dd if=/dev/zero of="$d/fill" bs=1k count=56 2>/dev/null
		archive-append.sh "$d/a.ndjson.gz" "$1/big.ndjson" 2>"$1/full2.err"
		echo $? >"$1/full2.rc"
		cp "$d/a.ndjson.gz" "$1/full2-after.gz"' full "$T"
	expect_eq "disk-full-exit-1: archive-append.sh exits 3" 3 "$(cat "$T/full2.rc" 2>/dev/null)"
	expect_eq "disk-full-exit-1: archive-append.sh left the archive as it was" "$(md5sum <"$base")" "$(md5sum <"$T/full2-after.gz")"
else
	echo "# disk-full-exit-1: skipped (no mount namespace here)"
fi
done_testing
