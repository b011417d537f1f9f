#!/usr/bin/env bash
# tests/run.sh — run every unit test (normal and ASan/UBSan builds) and every
# shell test, count TAP results, and end with "N passed, N failed".
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${KSCI_BUILD:-$ROOT/build}
pass=0
fail=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

run() { # label command...
	local label=$1
	shift
	local t0=$SECONDS
	"$@" >"$log" 2>&1
	local rc=$? secs=$((SECONDS - t0))
	local p f
	p=$(grep -c '^ok ' "$log")
	f=$(grep -c '^not ok ' "$log")
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		f=1 # died before reporting a failure: count it
		echo "not ok - $label exited $rc" >>"$log"
	fi
	pass=$((pass + p))
	fail=$((fail + f))
	if [ "$f" != 0 ]; then
		echo "FAIL $label ($p passed, $f failed, ${secs} s)"
		grep -v '^ok ' "$log" | sed 's/^/    /' | head -n 60
	else
		echo "ok   $label ($p passed, ${secs} s)"
	fi
}

for t in "$B"/tests/t_*; do
	[ -x "$t" ] && run "unit $(basename "$t")" "$t"
done
for t in "$B"/san/tests/t_*; do
	[ -x "$t" ] && run "unit+asan $(basename "$t")" "$t"
done
for t in "$ROOT"/tests/sh/t*.sh; do
	[ -f "$t" ] && run "sh $(basename "$t")" bash "$t"
done
# The record-handling tools again, built with ASan/UBSan (the kernel harness
# stays unsanitised: ASan's shadow memory cannot live under the harness's
# address-space limit, and it runs only task and candidate code).
if [ -d "$B/san/bin" ]; then
	for t in t10-stages t12-sandbox t13-cache-integrity t14-judge-attacks t15-archive t16-transient-failures t18-kcompile-jobs t19-early-rejection t20-kselect t39-kgen-jobs t41-compose t42-implausible t21-kselect-summary t30-kgen t30-kgen-llm t31-redact t60-report t40-cuda t44-nvcc-steps t22-long-lived-judge; do
		[ -f "$ROOT/tests/sh/$t.sh" ] &&
			run "sh+asan $t.sh" env KSCIBIN="$B/san/bin" KSCI_HARNESS_DIR="$B/bin" bash "$ROOT/tests/sh/$t.sh"
	done
fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
