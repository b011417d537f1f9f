#!/usr/bin/env bash
# bench/kselect/run.sh — time kselect on a large gzip archive next to jq doing
# a comparable scan (docs/bench-kselect.md holds the figures).
#
# Then the pipelines' reading between generations (last generation and the
# summary line): the jq they ran before next to kselect --summary, with wall
# time and peak RSS from /usr/bin/time -v (Debian package time).
#
# usage: bench/kselect/run.sh [--records N] [--archive FILE] [--keep] [--summary-only]
#   --records N    records in the generated archive (default 100000, ~8 KB each)
#   --archive FILE use (or create, if missing) this archive
#   --keep         keep a generated archive
#   --summary-only only the last-generation + summary comparison
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${KSCIBIN:-$root/build/bin}
records=100000
archive=
keep=0
summary_only=0
while [ $# -gt 0 ]; do
	case $1 in
	--records) records=$2; shift 2 ;;
	--archive) archive=$2; shift 2 ;;
	--keep) keep=1; shift ;;
	--summary-only) summary_only=1; shift ;;
	-h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
if [ -z "$archive" ]; then
	archive=${TMPDIR:-/tmp}/ksci-bench-$records.ndjson.gz
	gen_archive=$archive
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

if [ "$summary_only" = 0 ]; then
t "zcat > /dev/null (decompression alone)" sh -c "zcat '$archive'"
t "kselect tournament -n 8" "$bin/kselect" --seed 1 -n 8 "$archive"
t "kselect best -k 4 -n 8" "$bin/kselect" --seed 1 -s best -n 8 "$archive"
t "kselect islands -n 8" "$bin/kselect" --seed 1 -s islands -n 8 "$archive"
t "kselect bandit -n 8" "$bin/kselect" --seed 1 -s bandit -n 8 "$archive"
t "kselect map-elites (source_length, knob.TILE)" "$bin/kselect" --seed 1 -s map-elites \
	--features source_length:4,knob.TILE:5 -n 8 "$archive"
t "kselect tournament, archive through a pipe" sh -c "cat '$archive' | '$bin/kselect' --seed 1 -n 8"
t "jq: timed ids and speedups" sh -c "zcat '$archive' | jq -c 'select(.status==\"timed\")|[.id,.time.speedup_vs_baseline]'"
fi

# The archive's task and last generation, as evolve.sh would ask for them.
first=$(zcat "$archive" 2>/dev/null | head -n 1 || true) # zcat is cut short by head on purpose
task=$(jq -r .task <<<"$first")
backend=$(jq -r .backend <<<"$first")
# What pipelines/evolve-lib.sh ran before kselect --summary (one
# generation's last_generation, then summary of it).
old_jq() {
	local g
	g=$(gzip -dc "$archive" 2>/dev/null | jq -r --arg t "$task" --arg b "$backend" \
		'select(.task == $t and .backend == $b and (.generation | type) == "number") | .generation' 2>/dev/null |
		sort -n | tail -n 1 | grep . || echo -1)
	gzip -dc "$archive" | jq -rs --arg t "$task" --arg b "$backend" --argjson g "$g" -f "$root/bench/kselect/summary-before.jq"
}
# What it runs now: pipelines/evolve-lib.sh's own functions.
new_kselect() {
	(
		a=$archive t=$task b=$backend
		# shellcheck source=../../pipelines/evolve-lib.sh
		. "$root/pipelines/evolve-lib.sh"
		# shellcheck disable=SC2034 # read by evolve-lib.sh's functions
		archive=$a task=$t backend=$b
		PATH="$bin:$PATH"
		summary "$(last_generation)"
	)
}
m() { # label command...: wall time and peak RSS (largest process) of one run
	local label=$1
	shift
	/usr/bin/time -v "$@" >/dev/null 2>"$tmpv" || { cat "$tmpv" >&2; exit 1; }
	awk -v l="$label" -F': ' '/Elapsed \(wall clock\)/ { w = $2 } /Maximum resident set size/ { r = $2 }
		END { split(w, p, ":"); s = p[1] * 60 + p[2]; if (length(p) == 3) s = p[1] * 3600 + p[2] * 60 + p[3]
		      printf "%-44s %6.2f s %8.1f MB\n", l, s, r / 1024 }' "$tmpv"
}
command -v /usr/bin/time >/dev/null || { echo "run.sh: /usr/bin/time missing (apt-get install time)" >&2; exit 3; }
tmpv=$(mktemp)
trap 'rm -f "$tmpv"; [ "$keep" = 1 ] || [ -z "${gen_archive:-}" ] || rm -f "$gen_archive"' EXIT
export -f old_jq new_kselect
# shellcheck disable=SC2031 # new_kselect sets them in its own subshell on purpose
export archive task backend root bin
echo "between generations: last generation + summary line (wall, peak RSS of the largest process)"
expect=$(bash -c old_jq)
got=$(bash -c new_kselect)
[ "$expect" = "$got" ] || { printf 'run.sh: the lines differ:\n  jq:      %s\n  kselect: %s\n' "$expect" "$got" >&2; exit 1; }
echo "  $got"
m "jq: last_generation + summary (before)" bash -c old_jq
m "kselect --summary: last_generation + summary" bash -c new_kselect
