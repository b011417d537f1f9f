#!/usr/bin/env bash
# bench/kselect/run.sh — time kselect on a large gzip archive next to jq doing
# a comparable scan (docs/bench-kselect.md holds the figures).
#
# usage: bench/kselect/run.sh [--records N] [--archive FILE] [--keep]
#   --records N    records in the generated archive (default 100000, ~8 KB each)
#   --archive FILE use (or create, if missing) this archive
#   --keep         keep a generated archive
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${KSCIBIN:-$root/build/bin}
records=100000
archive=
keep=0
while [ $# -gt 0 ]; do
	case $1 in
	--records) records=$2; shift 2 ;;
	--archive) archive=$2; shift 2 ;;
	--keep) keep=1; shift ;;
	-h | --help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
if [ -z "$archive" ]; then
	archive=${TMPDIR:-/tmp}/ksci-bench-$records.ndjson.gz
	[ "$keep" = 1 ] || trap 'rm -f "$archive"' EXIT
fi
if [ ! -s "$archive" ]; then
	echo "generating $records records into $archive ..."
	python3 "$here/gen.py" --records "$records" "$archive"
fi
echo "archive: $archive, $(du -m "$archive" | cut -f1) MB compressed, $(zcat "$archive" | wc -c | awk '{printf "%d", $1 / 1048576}') MB of NDJSON"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"

t() { # label command...: best of 3 wall times
	local label=$1 best=
	shift
	for _ in 1 2 3; do
		local s e
		s=$(date +%s.%N)
		"$@" >/dev/null
		e=$(date +%s.%N)
		best=$(awk -v a="$best" -v b="$(awk -v s="$s" -v e="$e" 'BEGIN{print e - s}')" 'BEGIN{print (a == "" || b < a) ? b : a}')
	done
	printf '%-44s %6.2f s\n' "$label" "$best"
}

t "zcat > /dev/null (decompression alone)" sh -c "zcat '$archive'"
t "kselect tournament -n 8" "$bin/kselect" --seed 1 -n 8 "$archive"
t "kselect best -k 4 -n 8" "$bin/kselect" --seed 1 -s best -n 8 "$archive"
t "kselect islands -n 8" "$bin/kselect" --seed 1 -s islands -n 8 "$archive"
t "kselect bandit -n 8" "$bin/kselect" --seed 1 -s bandit -n 8 "$archive"
t "kselect map-elites (source_length, knob.TILE)" "$bin/kselect" --seed 1 -s map-elites \
	--features source_length:4,knob.TILE:5 -n 8 "$archive"
t "kselect tournament, archive through a pipe" sh -c "cat '$archive' | '$bin/kselect' --seed 1 -n 8"
t "jq: timed ids and speedups" sh -c "zcat '$archive' | jq -c 'select(.status==\"timed\")|[.id,.time.speedup_vs_baseline]'"
