#!/bin/sh
# banned.sh — C library functions ksci does not call (curl's checksrc %banfunc).
#
#   scripts/banned.sh [FILE|DIR ...]     default: lib tools tests/unit
#
# Prints "file:line: NAME is banned: why" for each call and exits 1 if there is
# one.  Comments and string literals are skipped.  Each function here has a
# better one that the tree already uses:
#
#   gets                        no bound at all (gone from C11)
#   strcpy strcat               no bound: snprintf, memcpy with a known length, strbuf
#   strncpy strncat             bounds that mislead: strncpy may leave no NUL and
#                               pads; strncat's n is the room left, not the size
#   sprintf vsprintf            no bound: snprintf, vsnprintf, sb_printf, errf
#   strtok                      hidden static state (kselect decompresses on a
#                               second thread) and it eats the input: strtok_r,
#                               strcspn/strspn
#   atoi atol atoll atof        no error: "12x" and "" read as numbers; lib/opt.h
#                               (range-checked, one message style) or strtol + checks
#   tmpnam tempnam mktemp       the name can be taken before it is opened: mkstemp
#   asctime ctime gmtime localtime   a static buffer shared by all callers: the _r forms
#   rand srand                  global state a library may reseed; runs must repeat
#                               from their seed: lib/rng.h
#
# ALLOW lists calls that are known and owned elsewhere, as "file function count";
# the owner removes them and then the line here.  A call beyond the count fails.
set -eu

ALLOW='
'

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
[ $# -gt 0 ] || set -- lib tools tests/unit
files=$(find "$@" -name '*.[ch]' | sort)
[ -n "$files" ] || exit 0

# shellcheck disable=SC2086 # file names without spaces, from find
awk -v allow="$ALLOW" '
BEGIN {
	why["gets"] = "no bound; use fgets or getline"
	why["strcpy"] = why["strcat"] = "no bound; use snprintf, memcpy or strbuf"
	why["strncpy"] = "may leave no NUL; use snprintf or memcpy"
	why["strncat"] = "its n is the room left, not the size; use snprintf or strbuf"
	why["sprintf"] = why["vsprintf"] = "no bound; use snprintf, vsnprintf or strbuf"
	why["strtok"] = "hidden static state; use strtok_r or strcspn"
	why["atoi"] = why["atol"] = why["atoll"] = why["atof"] = "no error detection; use lib/opt.h or strtol with checks"
	why["tmpnam"] = why["tempnam"] = why["mktemp"] = "racy name; use mkstemp"
	why["asctime"] = why["ctime"] = why["gmtime"] = why["localtime"] = "static buffer; use the _r form"
	why["rand"] = why["srand"] = "global state; use lib/rng.h"
	n = split(allow, a, "\n")
	for (i = 1; i <= n; i++)
		if (split(a[i], f, " ") == 3)
			left[f[1] " " f[2]] = f[3]
	bad = 0
}
FNR == 1 { inc = 0 }
{
	# The line without comments and string or character literals.
	s = $0; out = ""; i = 1; len = length(s); instr = 0
	while (i <= len) {
		c = substr(s, i, 1); c2 = substr(s, i, 2)
		if (inc) { if (c2 == "*/") { inc = 0; i += 2 } else i++; continue }
		if (instr) { if (c == "\\") { i += 2; continue } if (c == q) instr = 0; i++; continue }
		if (c2 == "/*") { inc = 1; i += 2; continue }
		if (c2 == "//") break
		if (c == "\"" || c == "\047") { instr = 1; q = c; i++; out = out " "; continue }
		out = out c; i++
	}
	rest = out
	while (match(rest, /[A-Za-z_][A-Za-z0-9_]*[ \t]*\(/)) {
		name = substr(rest, RSTART, RLENGTH)
		sub(/[ \t]*\($/, "", name)
		before = RSTART > 1 ? substr(rest, RSTART - 1, 1) : ""
		rest = substr(rest, RSTART + RLENGTH)
		if (!(name in why) || before == "." || before == ">")
			continue
		k = FILENAME " " name
		if ((k in left) && left[k] > 0) { left[k]--; continue }
		printf "%s:%d: %s is banned: %s\n", FILENAME, FNR, name, why[name]
		bad = 1
	}
}
END { exit bad }
' $files
