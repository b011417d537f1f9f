#!/usr/bin/env bash
# archive-append.sh — append NDJSON records to an archive so that concurrent
# writers never interleave: the input is checked to be whole JSON lines, then
# written under flock on ARCHIVE.lock (the lock evolve.sh takes too) in one
# go — as one gzip member when the archive's name ends in .gz, else as plain
# lines. A reader sees either none or all of one writer's records, every line
# whole. Nothing is appended when the input is not all JSON objects.
set -euo pipefail

usage() {
	cat <<'USAGE'
usage: archive-append.sh ARCHIVE [FILE ...]
  Append the records of FILE(s) (default: stdin) to ARCHIVE under flock on ARCHIVE.lock,
  as one gzip member when ARCHIVE ends in .gz, else as plain NDJSON lines.
  -h, --help   this text
Exit status: 0 appended (or nothing to append); 1 the input is not whole JSON object
lines (nothing appended); 2 usage; 3 the archive could not be written; 4 the archive is
damaged or, named .gz, holds plain lines (karchive append refuses it; nothing appended).
USAGE
}

case ${1:-} in
-h | --help) usage; exit 0 ;;
'') usage >&2; exit 2 ;;
-*) echo "archive-append.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
esac
archive=$1
shift
# karchive from $KSCIBIN, else the build next to this script, else PATH.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ -z "${KSCIBIN:-}" ] && [ -x "$here/../build/bin/karchive" ]; then KSCIBIN=$here/../build/bin; fi
[ -n "${KSCIBIN:-}" ] && PATH="$KSCIBIN:$PATH"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/archive-append.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cat -- "$@" >"$tmp/in" || { echo "archive-append.sh: cannot read input" >&2; exit 3; }
[ -s "$tmp/in" ] || exit 0
if [ "$(tail -c 1 "$tmp/in" | od -An -c | tr -d ' ')" != '\n' ]; then
	echo "archive-append.sh: the input's last line is not whole (no newline); nothing appended" >&2
	exit 1
fi
# One pass of jq counts the records and fails on anything but an object; a
# count other than the line count means a blank line or two records on one.
if ! n=$(jq -n 'reduce inputs as $r (0; if ($r | type) == "object" then . + 1 else error("a line is not an object") end)' \
	<"$tmp/in" 2>"$tmp/err"); then
	echo "archive-append.sh: the input is not NDJSON objects ($(head -c 200 "$tmp/err")); nothing appended" >&2
	exit 1
fi
if [ "$(wc -l <"$tmp/in")" != "$n" ]; then
	echo "archive-append.sh: some lines do not hold exactly one record; nothing appended" >&2
	exit 1
fi
mkdir -p "$(dirname "$archive")"
case $archive in
*.gz)
	# karchive append (docs/tools/karchive.md): the stricter line check (NUL,
	# invalid UTF-8, what jansson reads back), one member in one write under
	# ARCHIVE.lock, fsynced, cut back on failure, a torn archive refused.
	rc=0
	karchive append "$archive" <"$tmp/in" || rc=$?
	case $rc in
	0) exit 0 ;;
	1) echo "archive-append.sh: nothing appended (karchive append: bad lines, see above)" >&2; exit 1 ;;
	4) exit 4 ;;
	*) echo "archive-append.sh: cannot append to $archive (karchive append exit $rc); archive unchanged" >&2; exit 3 ;;
	esac
	;;
*) mv "$tmp/in" "$tmp/out" ;;
esac
# A write that fails (disk full) is cut off again: every member stays whole.
(
	flock 9
	size=$(stat -c %s "$archive" 2>/dev/null || echo 0)
	cat "$tmp/out" >>"$archive" || { truncate -s "$size" "$archive"; exit 1; }
) 9>>"$archive.lock" || { echo "archive-append.sh: cannot append to $archive (disk full?); archive unchanged" >&2; exit 3; }
