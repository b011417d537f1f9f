#!/usr/bin/env bash
# --help and docs/tools/ say the same thing, checked both ways
# (docs/tools/README.md):
#   - a tool's --help is exactly what scripts/gen-help.sh makes of its page;
#   - every option the tool parses (getopt's long table and short string in
#     tools/TOOL/main.c) is in the page's option tables, and every option the
#     tables list is parsed;
#   - no short option letter means two things along the pipe;
#   - a pipeline script's --help appears verbatim on its page, and the options
#     its case statements parse are the options its help lists.
. "$(dirname "$0")/lib.sh"
cd "$ROOT" || exit 1

opt_re='--?[a-zA-Z][a-zA-Z0-9-]*'
# The first cells of a page's "| option | meaning |" tables, one per line.
option_cells() {
	awk '/^\| *option *\| *meaning *\| *$/ { t = 1; n = 0; next }
		t && /^\|/ { if (n++ > 0) { s = $0; sub(/^\| */, "", s); sub(/ *\|.*/, "", s); print s }; next }
		{ t = 0 }' "$1"
}
# Options named in text on stdin: -x and --long, not the dash inside a word.
options_in() { grep -oE -- "(^|[^a-zA-Z0-9-])$opt_re" | grep -oE -- "$opt_re\$" | sort -u; }

for t in kselect kgen kcompile kverify ktime kreport karchive; do
	page=docs/tools/$t.md
	src=tools/$t/main.c
	# kverify's and ktime's tables start with the entries lib/evaluate.h shares
	grep -q EVAL_LONGOPTS "$src" && src="$src lib/evaluate.h"
	[ -x "$KSCIBIN/$t" ] || continue
	expect_eq "$t: --help is what scripts/gen-help.sh makes of $page" \
		"$(sh scripts/gen-help.sh "$page")" "$("$KSCIBIN/$t" --help)"
	parsed=$( {
		# shellcheck disable=SC2086 # one or two file names
		grep -ohE '\{"[a-z][a-z0-9-]*", *(no|required|optional)_argument' $src | sed 's/{"\([^"]*\)".*/--\1/'
		# shellcheck disable=SC2086
		grep -ohE 'getopt_long\([^,]*, *[^,]*, *"[^"]*"' $src | sed 's/.*"\([^"]*\)"/\1/' |
			tr -d ':' | grep -o . | sed 's/^/-/'
	} | sort -u)
	documented=$(option_cells "$page" | options_in)
	expect_eq "$t: every option it parses is in $page" "" "$(comm -23 <(echo "$parsed") <(echo "$documented") | xargs)"
	expect_eq "$t: every option $page lists is parsed" "" "$(comm -13 <(echo "$parsed") <(echo "$documented") | xargs)"
done

# A short letter and the long option it abbreviates, from every page's tables.
# shellcheck disable=SC2016 # the backquotes are Markdown's
pairs=$(for t in kselect kgen kcompile kverify ktime kreport karchive; do
	option_cells "docs/tools/$t.md" | grep -E -- '^`-[a-zA-Z]`, `--' |
		sed -E 's/^`(-[a-zA-Z])`, `(--[a-z0-9-]+).*/\1 \2/'
done | sort -u)
clash=$(echo "$pairs" | awk '{ n[$1]++ } END { for (k in n) if (n[k] > 1) print k }' | sort | xargs)
expect_eq "no short option means two things along the pipe" "" "$clash"
ok "kgen has no -s, -n or -t (kselect's --strategy, --population, --task)" \
	sh -c '! kgen -s 1 </dev/null 2>/dev/null && ! kgen -n 1 </dev/null 2>/dev/null && ! kgen -t x </dev/null 2>/dev/null'

# The switches of the environment: docs/tools/README.md's table and
# lib/envknob.c's, the same variables with the same words, in order.
max=$(sed -n 's/^#define DEVICE_MAX \([0-9]*\)$/\1/p' lib/envknob.c)
in_lib=$(sed -n 's/^\t{"\(KSCI_[A-Z_]*\)", \(.*\)},$/\1 \2/p' lib/envknob.c |
	sed -e 's/ (const char \*const\[\]){\(.*\), NULL}$/ \1/' -e 's/"//g' -e "s/ NULL\$/ a device index 0..$max/")
in_docs=$(awk -F' *\\| *' '/^\| variable \| takes \|/ { t = 1; next } t && /^\|---/ { next }
	t && /^\|/ { v = $2; gsub(/`/, "", v); print v " " $3; next } { t = 0 }' docs/tools/README.md)
expect_eq "the environment's switches: docs/tools/README.md's table is lib/envknob.c's" "$in_lib" "$in_docs"
ok "the environment's switches: six of them" test "$(printf '%s\n' "$in_lib" | grep -c '^KSCI_')" = 6

# Pipelines: the usage text stays in the script; the page must carry it verbatim.
for pair in evolve.sh:evolve evolve-parallel.sh:evolve-parallel spread.sh:spread stages.sh:spread \
	reprocess.sh:reprocess archive-append.sh:archive-append report.sh:kreport; do
	s=${pair%%:*}
	page=docs/tools/${pair#*:}.md
	help=$("pipelines/$s" --help)
	indented=$(printf '%s\n' "$help" | sed 's/^./    &/')
	ok "$s --help is on $page, verbatim" grep -qF -- "$(printf '%s\n' "$indented" | head -n 1)" "$page"
	body=$(cat "$page")
	if [[ "$body" == *"$indented"* ]]; then _report 0 "$s: $page carries the whole --help"; else
		_report 1 "$s: $page carries the whole --help" "$(diff <(printf '%s\n' "$indented") "$page" | head -n 20)"
	fi
	# Options the script parses: its case patterns (evolve*.sh also evolve-lib.sh's).
	files="pipelines/$s"
	case $s in evolve*.sh) files="$files pipelines/evolve-lib.sh" ;; esac
	# shellcheck disable=SC2086 # two files for evolve*.sh
	parsed=$(sed -e ':a' -e '/\\$/N; s/\\\n[[:space:]]*//; ta' $files |
		grep -E -- "^[[:space:]]*$opt_re( \| $opt_re)*\)" | sed 's/).*//' | options_in)
	# Options the help lists: those that begin its option lines, before the description.
	listed=$(printf '%s\n' "$help" | grep -E '^ {1,4}-' | sed -E 's/^ +//; s/  .*//' | options_in)
	mentioned=$(printf '%s\n' "$help" | options_in)
	expect_eq "$s: every option it parses is in its --help" "" "$(comm -23 <(echo "$parsed") <(echo "$mentioned") | xargs)"
	expect_eq "$s: every option its --help lists is parsed" "" "$(comm -13 <(echo "$parsed") <(echo "$listed") | xargs)"
done
done_testing
