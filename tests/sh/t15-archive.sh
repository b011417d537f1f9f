#!/usr/bin/env bash
# t15-archive: the archive is never lost (docs/tools/karchive.md,
# docs/exit-codes.md code 4).  The bugs it guards against: a truncated gzip
# archive read as "one bad line" (kreport, exit 1) or silently (kgen
# --archive; kreport on a torn member, exit 0); no way to check, repair or
# append whole members; a raw NUL byte in a line that made the next record
# vanish (lib/ndjson.c measured lines with strlen); an integer above 2^63 that
# dropped its record ("too big integer").
. "$(dirname "$0")/lib.sh"

# rec ID GEN: a small verified record.
rec() { printf '{"id":"%s","task":"rowsum","backend":"c","generation":%s,"status":"verified"}\n' "$1" "$2"; }
# damaged TOOL FILE OFFSET REASON: the one message of docs/exit-codes.md.
damaged() { echo "$1: $2: damaged at byte $3 ($4); repair with: karchive repair $2"; }

cd "$T" || exit 1
rec g0a 0 | gzip -c >a.gz
m1=$(wc -c <a.gz)
{ rec g1a 1; rec g1b 1; } | gzip -c >>a.gz
size=$(wc -c <a.gz)

# --- check on a whole archive -------------------------------------------
karchive check a.gz 2>err
expect_eq "check, whole archive: exit 0" 0 $?
expect_eq "check, whole archive: one summary line" "karchive: a.gz: whole: 2 members, 3 records, $size bytes" "$(cat err)"

# --- a truncated last member: exit 4 with the offset, from every reader ----
head -c $((size - 5)) a.gz >torn.gz
tail -c +$((m1 + 1)) torn.gz >expect-cut
karchive check torn.gz 2>err
expect_eq "truncated-archive: karchive check exits 4" 4 $?
expect_eq "truncated-archive: karchive check names the member's first byte" \
	"$(damaged karchive torn.gz "$m1" "truncated gzip member")" "$(cat err)"
kselect --task rowsum torn.gz >out 2>err
expect_eq "truncated-archive: kselect exits 4, nothing on stdout" "4|" "$?|$(cat out)"
expect_eq "truncated-archive: kselect's message" "$(damaged kselect torn.gz "$m1" "truncated gzip member")" "$(cat err)"
kgen --archive torn.gz </dev/null >out 2>err
expect_eq "truncated-archive-silently-read-by-kgen: kgen --archive exits 4" "4|" "$?|$(cat out)"
expect_eq "truncated-archive: kgen's message" "$(damaged kgen torn.gz "$m1" "truncated gzip member")" "$(cat err)"
kreport torn.gz >out 2>err
expect_eq "truncated-archive-read-as-one-bad-line-by-kreport: kreport exits 4, no report" "4|" "$?|$(cat out)"
expect_eq "truncated-archive: kreport's message" "$(damaged kreport torn.gz "$m1" "truncated gzip member")" "$(cat err)"
# Torn inside the deflate data rather than in the trailer.
head -c $((m1 + 12)) a.gz >torn2.gz
kreport torn2.gz >/dev/null 2>err
rc=$?
expect_eq "torn-member-read-silently-by-kreport: exit 4 and the message" \
	"4|$(damaged kreport torn2.gz "$m1" "truncated gzip member")" "$rc|$(cat err)"
# Garbage after the last member.
{ cat a.gz; echo 'not gzip'; } >garbage.gz
karchive check garbage.gz 2>err
rc=$?
expect_eq "garbage after the last member: exit 4 at the garbage's first byte" \
	"4|$(damaged karchive garbage.gz "$size" "garbage after the last gzip member")" "$rc|$(cat err)"
# A bad line inside a whole member: dated to the member, the line named.
{ cat a.gz; { rec g2a 2; echo '[1,2]'; } | gzip -c; } >badline.gz
karchive check badline.gz 2>err
rc=$?
expect_eq "a line that is not an object: exit 4, the member's offset, the line number" \
	"4|$(damaged karchive badline.gz "$size" "line 5: not a JSON object")" "$rc|$(cat err)"
rec plain 0 >plain.nd
karchive check plain.nd 2>err
expect_eq "check of a plain NDJSON file: exit 4, not a gzip archive" \
	"4|karchive: plain.nd: not a gzip archive (plain NDJSON?); karchive keeps gzip archives only" "$?|$(cat err)"

# --- repair --------------------------------------------------------------
cp torn.gz r.gz
karchive repair r.gz 2>err
expect_eq "repair: exit 0" 0 $?
expect_eq "repair: says what it cut and kept" \
	"karchive: r.gz: cut at byte $m1 (truncated gzip member); the $((size - 5 - m1)) bytes cut are in r.gz.cut-$m1; kept 1 whole members, 1 records" \
	"$(cat err)"
expect_eq "repair: cut back to the end of the last whole member" "$m1" "$(wc -c <r.gz)"
ok "repair: the bytes cut are saved, byte for byte" cmp expect-cut "r.gz.cut-$m1"
ok "repair: the archive is whole again" karchive check r.gz
karchive repair r.gz 2>err
expect_eq "repair of a whole archive: nothing to do" \
	"0|karchive: r.gz: whole (1 members, 1 records); nothing to do" "$?|$(cat err)"

# --- append --------------------------------------------------------------
{ rec g1c 1; echo; rec g1d 1; } | karchive append r.gz 2>err
expect_eq "append after repair: exit 0, silent" "0|" "$?|$(cat err)"
expect_eq "append: the earlier members' records are all still there" "g0a g1c g1d" \
	"$(zcat r.gz | jq -r .id | xargs)"
ok "append: one new member, the archive whole" sh -c 'karchive check r.gz 2>&1 | grep -q "whole: 2 members, 3 records"'
kreport r.gz >/dev/null 2>err
expect_eq "the repaired archive reads again (kreport exit 0)" "0|" "$?|$(cat err)"
echo '{"id":"new"}' | karchive append new.gz 2>/dev/null
expect_eq "append creates a missing archive" "0|new" "$?|$(zcat new.gz | jq -r .id)"
cp r.gz r0.gz
karchive append r.gz </dev/null 2>err
rc=$?
ok "append of no records: nothing done" cmp r0.gz r.gz
expect_eq "append of no records: exit 0, silently" "0|" "$rc|$(cat err)"

# Appends at the same time take turns (the lock): every member whole.
for i in 1 2 3 4 5 6; do
	for j in 1 2 3 4 5 6 7 8 9 10; do rec "p$i-$j" 9; done | karchive append par.gz 2>/dev/null &
done
wait
ok "concurrent appends: the archive is whole" karchive check par.gz
expect_eq "concurrent appends: 6 members, all 60 records" "6 60" \
	"$(karchive check par.gz 2>&1 | sed -E 's/.*whole: ([0-9]+) members, ([0-9]+) records.*/\1 \2/')"

cp r.gz before.gz
printf '{"id":"two"}{"id":"objects"}\n' >bad1
printf '{"id":"n\0ul"}\n' >bad2
printf '{"id":"\xff"}\n' >bad3
for b in bad1 bad2 bad3; do
	{ rec ok1 3; cat "$b"; } | karchive append r.gz 2>err
	expect_eq "append-of-bad-input ($b): exit 1" 1 $?
	ok "append-of-bad-input ($b): the line is named" grep -q '^karchive: <stdin>: line 2: ' err
	ok "append-of-bad-input ($b): nothing appended" cmp before.gz r.gz
done
echo '{"id":"x"}' | karchive append plain.nd 2>err
expect_eq "append to a plain NDJSON file: refused, exit 4" \
	"4|karchive: plain.nd: not a gzip archive (plain NDJSON?); karchive keeps gzip archives only" "$?|$(cat err)"
expect_eq "append to a plain NDJSON file: the file unchanged" "$(rec plain 0)" "$(cat plain.nd)"
cp torn.gz torn-a.gz
echo '{"id":"x"}' | karchive append torn-a.gz 2>err
rc=$?
expect_eq "append to a torn archive: refused with the repair message, exit 4" \
	"4|$(damaged karchive torn-a.gz "$m1" "truncated gzip member")" "$rc|$(cat err)"
ok "append to a torn archive: nothing appended" cmp torn.gz torn-a.gz

# A full disk: the archive stays byte for byte as it was (64 KB of tmpfs,
# about 110 KB of incompressible records).
head -c 90000 /dev/urandom | base64 -w 60 | sed 's/.*/{"x":"&"}/' >big.nd
mkdir full
if unshare -m sh -c "mount -t tmpfs -o size=64k tmpfs full" 2>/dev/null; then
	unshare -m sh -c 'mount -t tmpfs -o size=64k tmpfs full && cp before.gz full/a.gz &&
		{ karchive append full/a.gz <big.nd 2>enospc.err; echo $? >enospc.rc; } &&
		cp full/a.gz after.gz && ls full >enospc.ls'
	expect_eq "append-on-a-full-disk: exit 3" 3 "$(cat enospc.rc)"
	expect_eq "append-on-a-full-disk: says why" \
		"karchive: full/a.gz: No space left on device; nothing appended" "$(cat enospc.err)"
	ok "append-on-a-full-disk: the archive is byte-identical" cmp before.gz after.gz
else
	echo "ok $((t_n + 1)) # SKIP unshare -m / mount tmpfs not permitted here: the full-disk append is untested"
	t_n=$((t_n + 1))
fi

# --- bad lines in record streams -------------------------------------------
printf '{"id":"a"}\n{"id":"n\0ul"}\n{"id":"c"}\n{"id":"d"}\n' >nul.nd
kgen <nul.nd >out 2>err
expect_eq "nul-byte-makes-next-record-vanish: exit 1" 1 $?
expect_eq "nul-byte-makes-next-record-vanish: the next record is read" "a c d" "$(jq -r .id out | xargs)"
expect_eq "nul-byte-makes-next-record-vanish: the NUL line reported by its number" \
	"kgen: <stdin>: line 2: contains a NUL byte (column 9); line skipped" "$(cat err)"
printf '{"id":"a"}\n{"id":"big","n":18446744073709551616,"m":-1}\n{"id":"c"}\n' >big-int.nd
kgen <big-int.nd >out 2>err
expect_eq "too-big-integer-drops-record: exit 0, all three records" "0|a big c|" "$?|$(jq -r .id out | xargs)|$(cat err)"
ok "too-big-integer-drops-record: the number kept (as a real), the rest as it was" \
	jq -se '.[1] | .id == "big" and .n == 18446744073709551616 and .m == -1' out
gzip -c big-int.nd >big-int.gz
kreport big-int.gz >/dev/null 2>err
expect_eq "too-big-integer-drops-record: kreport reads it without a bad line" "0|" "$?|$(cat err)"
karchive append bi.gz <big-int.nd 2>/dev/null
rc=$?
expect_eq "too-big-integer: karchive append keeps the line as written" "0|$(cat big-int.nd)" "$rc|$(zcat bi.gz)"

done_testing
