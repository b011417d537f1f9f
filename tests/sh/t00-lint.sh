#!/usr/bin/env bash
# Every shell script in the repository is shellcheck-clean; every tool's
# --help starts with its usage line and exits 0.
. "$(dirname "$0")/lib.sh"
cd "$ROOT" || exit 1
for f in pipelines/*.sh scripts/*.sh tests/*.sh tests/sh/*.sh tests/gpu/*.sh bench/*.sh bench/*/*.sh .ci/run; do
	[ -f "$f" ] || continue
	ok "shellcheck $f" shellcheck -x -P SCRIPTDIR "$f"
done
for t in kselect kgen kcompile kverify ktime kreport; do
	[ -x "$KSCIBIN/$t" ] || continue
	ok "$t --help prints usage and exits 0" sh -c "'$KSCIBIN/$t' --help | grep -q '^usage: $t'"
done
done_testing
