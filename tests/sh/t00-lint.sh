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
# --help and docs/tools/TOOL.md agree: every option the help names is documented.
for t in kselect kgen kcompile kverify ktime kreport; do
	[ -x "$KSCIBIN/$t" ] || continue
	docs="docs/tools/$t.md"
	[ "$t" = kgen ] && docs="$docs docs/providers.md"
	# shellcheck disable=SC2086 # two files for kgen
	missing=$(comm -23 <("$KSCIBIN/$t" --help | grep -o -- '--[a-z][a-z0-9-]*' | sort -u) \
		<(cat $docs | grep -o -- '--[a-z][a-z0-9-]*' | sort -u) | xargs)
	expect_eq "$t: every option in --help is in its docs" "" "$missing"
done
done_testing
