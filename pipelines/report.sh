#!/usr/bin/env bash
# report.sh — the whole report of one or more archives in one directory:
# report.txt, report.html (self-contained), speedup.png/.svg and
# lineage-<task>.png/.svg.  kreport computes every number; this script only
# runs gnuplot and graphviz between kreport's two passes (docs/reports.md).
set -euo pipefail

usage() {
	cat <<'USAGE'
usage: report.sh [--out DIR] [--prices FILE] [--peak-gbps N] [--peak-gflops N] [--text] archive...

  --out DIR      where to write the report (default: report)
  --prices FILE  price table for kreport (see docs/tools/kreport.md)
  --peak-gbps N, --peak-gflops N
                 machine peaks for "% of physical limit"
  --text         also print the text report on stdout
  -h, --help     this text

Writes DIR/report.txt, DIR/report.html, DIR/speedup.{png,svg},
DIR/lineage-<task>.{png,svg} and the inputs they were drawn from.
Without gnuplot or dot the pictures are left out (with a warning).
Exit status: kreport's (0 ok, 1 some archive lines were bad, 2 usage, 3 fatal,
4 a damaged archive: repair it with karchive repair).
USAGE
}

out=report
text=0
kopts=()
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) usage; exit 0 ;;
	--out) [ $# -ge 2 ] || { usage >&2; exit 2; }; out=$2; shift 2 ;;
	--prices | --peak-gbps | --peak-gflops)
		[ $# -ge 2 ] || { usage >&2; exit 2; }
		kopts+=("$1" "$2"); shift 2 ;;
	--text) text=1; shift ;;
	--) shift; break ;;
	-*) echo "report.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || { echo "report.sh: no archive named" >&2; usage >&2; exit 2; }

kreport=${KREPORT:-kreport}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if ! command -v "$kreport" >/dev/null 2>&1 && [ -x "$here/../build/bin/kreport" ]; then
	kreport=$here/../build/bin/kreport
fi

mkdir -p "$out"
# Pass 1: the plot inputs.  Its warnings would repeat pass 2's, so they are
# shown only when it fails outright.
errs=$(mktemp)
trap 'rm -f "$errs"' EXIT
rc=0
"$kreport" "${kopts[@]}" --plots "$out" "$@" 2>"$errs" || rc=$?
if [ "$rc" -ge 2 ]; then
	cat "$errs" >&2
	exit "$rc"
fi

if command -v gnuplot >/dev/null 2>&1; then
	(cd "$out" && gnuplot speedup.gp) || echo "report.sh: gnuplot failed; no speedup picture" >&2
else
	echo "report.sh: gnuplot not found; no speedup picture" >&2
fi
shopt -s nullglob
for dotf in "$out"/lineage-*.dot; do
	if command -v dot >/dev/null 2>&1; then
		dot -Tpng -o "${dotf%.dot}.png" "$dotf" && dot -Tsvg -o "${dotf%.dot}.svg" "$dotf" ||
			echo "report.sh: dot failed on $dotf" >&2
	else
		echo "report.sh: dot not found; no lineage pictures" >&2
		break
	fi
done

# Pass 2: text and HTML, with the pictures embedded.
rc=0
"$kreport" "${kopts[@]}" --text --html "$out/report.html" --images "$out" "$@" >"$out/report.txt" || rc=$?
if [ "$text" = 1 ]; then
	cat "$out/report.txt"
fi
exit "$rc"
