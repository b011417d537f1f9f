#!/usr/bin/env bash
# A full disk is an error, not silence (jq's tests/shtest, sbase's fshut):
# every tool writing into /dev/full exits 3 with exactly one "write error"
# line on stderr — records or --help alike.
. "$(dirname "$0")/lib.sh"

if ! [ -w /dev/full ] || echo x 2>/dev/null >/dev/full; then
	echo "# /dev/full is missing or accepts writes here: skipped"
	done_testing
	exit 0
fi

# Records each filter passes on unchanged (no stage acts on gen_error), enough
# to overflow stdio's buffer, so writes fail both in the loop and at the end.
for i in $(seq 3000); do
	printf '{"id":"r%d","status":"gen_error","task":"matmul","backend":"c","generation":1}\n' "$i"
done >"$T/recs.ndjson"

check() { # name expected-code command... (stdout is /dev/full)
	local name=$1 want=$2 rc
	shift 2
	"$@" >/dev/full 2>"$T/err"
	rc=$?
	expect_eq "$name: exit $want" "$want" "$rc"
	expect_eq "$name: one \"write error\" line on stderr" \
		"1 1" "$(wc -l <"$T/err" | tr -d ' ') $(grep -c 'write error' "$T/err")"
}

for t in kgen kcompile kverify ktime kreport; do
	check "$t records >/dev/full (write error printed twice)" 3 "$t" "$T/recs.ndjson"
done
check "kselect requests >/dev/full" 3 kselect --task matmul --seed 1 /dev/null
check "kreport --text >/dev/full" 3 kreport --text "$T/recs.ndjson"
for t in kselect kgen kcompile kverify ktime kreport; do
	check "$t --help >/dev/full (exited 0)" 3 "$t" --help
done
check "kharness --help >/dev/full (exited 0)" 3 kharness --help
echo '{"backend": "hip", "nonce": "n"}' >"$T/job.json"
# shellcheck disable=SC2016 # $1 is the inner shell's
check "kharness result >/dev/full" 3 sh -c 'kharness <"$1"' sh "$T/job.json"
done_testing
