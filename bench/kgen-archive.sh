#!/usr/bin/env bash
# bench/kgen-archive.sh — time `kgen --archive` reading a large gzip archive
# (docs/bench-kgen.md holds the figures).
#
# usage: bench/kgen-archive.sh [--records N] [--archive FILE] [--kgen BIN] [--runs N]
#   --records N    records in the generated archive (default 20000, ~8 KB each)
#   --archive FILE use (or create, if missing) this archive
#   --kgen BIN     the kgen to time (default $KSCIBIN/kgen or build/bin/kgen)
#   --runs N       timed runs; the best wall time and the largest RSS are kept (default 3)
#
# The archive is bench/kselect/gen.py's, with every tenth record given an
# origin.hypothesis so that the lab-notebook path is read too.  kgen gets one
# pass-through record on stdin, so the time is the archive load.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
bin=${KSCIBIN:-$root/build/bin}
records=20000
archive=
kgen=$bin/kgen
runs=3
while [ $# -gt 0 ]; do
	case $1 in
	--records) records=$2; shift 2 ;;
	--archive) archive=$2; shift 2 ;;
	--kgen) kgen=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	-h | --help) sed -n '2,/^\([^#]\|$\)/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
	*) echo "kgen-archive.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
if [ -z "$archive" ]; then
	archive=${TMPDIR:-/tmp}/ksci-kgen-bench-$records.ndjson.gz
	trap 'rm -f "$archive"' EXIT
fi
if [ ! -s "$archive" ]; then
	echo "generating $records records into $archive ..."
	python3 "$root/bench/kselect/gen.py" --records "$records" "$archive.tmp"
	python3 - "$archive.tmp" "$archive" <<'EOF'
import gzip, json, sys
with gzip.open(sys.argv[1], "rt") as f, gzip.open(sys.argv[2], "wt", compresslevel=6) as o:
    for i, line in enumerate(f):
        if i % 10 == 0:
            r = json.loads(line)
            r["origin"]["hypothesis"] = "hypothesis %d: a wider tile keeps more of B in cache" % i
            line = json.dumps(r, separators=(",", ":")) + "\n"
        o.write(line)
EOF
	rm -f "$archive.tmp"
fi
/usr/bin/time --version >/dev/null 2>&1 || { echo "kgen-archive.sh: needs GNU time (/usr/bin/time)" >&2; exit 2; }
echo "archive: $archive ($(du -h "$archive" | cut -f1), $records records)"
best='' rss=0
for _ in $(seq "$runs"); do
	log=$(mktemp)
	echo '{"status":"timed","id":"x"}' |
		/usr/bin/time -v "$kgen" --archive "$archive" >/dev/null 2>"$log"
	w=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, a, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + a[i]; print s}' "$log")
	r=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")
	rm -f "$log"
	if [ -z "$best" ] || awk -v a="$w" -v b="$best" 'BEGIN {exit !(a < b)}'; then best=$w; fi
	[ "$r" -gt "$rss" ] && rss=$r
done
echo "kgen --archive: best of $runs: ${best} s wall, peak RSS $((rss / 1024)) MiB"
