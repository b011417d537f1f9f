#!/usr/bin/env bash
# Every shell script in the repository is shellcheck-clean; no C file calls a
# banned function (scripts/banned.sh); every tool's --help starts with its
# usage line and exits 0. t01-help checks --help against docs/tools/ in full.
. "$(dirname "$0")/lib.sh"
cd "$ROOT" || exit 1
for f in pipelines/*.sh scripts/*.sh tests/*.sh tests/sh/*.sh tests/gpu/*.sh tests/cluster/*.sh bench/*.sh bench/*/*.sh .ci/run; do
	[ -f "$f" ] || continue
	ok "shellcheck $f" shellcheck -x -P SCRIPTDIR "$f"
done
ok "no banned C function in lib/ tools/ tests/unit/" sh scripts/banned.sh lib tools tests/unit
mkdir -p "$T/banned"
printf 'int f(char *d, const char *s) { strcpy(d, "x"); /* sprintf( */ return atoi(s); }\n' >"$T/banned/f.c"
expect_eq "scripts/banned.sh names each banned call, not those in comments" \
	"$T/banned/f.c:1: strcpy $T/banned/f.c:1: atoi" \
	"$(sh scripts/banned.sh "$T/banned" | cut -d' ' -f1,2 | xargs)"
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
