# shellcheck shell=bash
# tests/sh/lib.sh — sourced by every shell test.
# Gives: a temp dir ($T, removed by trap), tool paths overridable by env
# ($KSCI_BUILD/bin or $KSCIBIN), and TAP helpers:
#   ok "name" command...        the command must succeed
#   not_ok_is "name" command... the command must fail
#   expect_eq "name" expected actual
# End each test file with: done_testing
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$here/../.." && pwd)
KSCI_BUILD=${KSCI_BUILD:-$ROOT/build}
KSCIBIN=${KSCIBIN:-$KSCI_BUILD/bin}
PATH="$KSCIBIN:$ROOT/pipelines:$PATH"
export PATH ROOT KSCIBIN KSCI_BUILD
T=$(mktemp -d "${TMPDIR:-/tmp}/ksci-test.XXXXXX")
trap 'rm -rf "$T"' EXIT
export KSCI_CACHE="$T/cache"
export KSCI_TASKS=${KSCI_TASKS:-$ROOT/data/tasks}
t_n=0
t_failed=0

_report() { # status name [detail]
	t_n=$((t_n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $t_n - $2"
	else
		t_failed=$((t_failed + 1))
		echo "not ok $t_n - $2"
		[ -n "${3:-}" ] && printf '%s\n' "$3" | sed 's/^/#   /'
	fi
	return 0
}

ok() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then _report 0 "$name"; else _report 1 "$name" "$out"; fi
}

not_ok_is() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then _report 1 "$name" "unexpected success: $out"; else _report 0 "$name"; fi
}

expect_eq() {
	if [ "$2" = "$3" ]; then _report 0 "$1"; else _report 1 "$1" "expected: $2
actual:   $3"; fi
}

done_testing() {
	echo "1..$t_n"
	[ "$t_failed" = 0 ]
}
