#!/usr/bin/env bash
# reprocess.sh — re-verify and/or re-time every candidate of an archive (on a
# new GPU, driver or compiler) into a NEW archive; the old one is only read.
#
# The records carry their sources, so any host can redo any record: the
# archive's records go through stages.sh --force (kverify --force, ktime
# --force; kcompile --force with --stages compile,...) spread over slots and
# hosts by spread.sh, and come out in the archive's order. Records a stage does
# not act on (requests, gen_error, compile_error for verify/time) pass through
# unchanged, so NEW holds every record of OLD exactly once. NEW appears only
# when complete; an interrupted run continues when re-run (same options).
set -euo pipefail

usage() {
	cat <<'USAGE'
usage: reprocess.sh [options] OLD NEW
  Redo stages on every record of archive OLD (plain or gzip NDJSON) and write archive NEW
  (gzip when its name ends in .gz). OLD is not changed; NEW must not exist.
  --stages LIST        stages to redo, a subset of compile,verify,time (default: verify,time)
  --work DIR           state of an unfinished run (default: NEW.work)
  --chunk N            records per job (default: 8)
  --jobs, --gpus, -S/--sshlogin, --sshloginfile, --retries, --bar, --env, --stages-cmd,
  --srun, --srun-opt, --budget, --kcompile-opt, --kverify-opt, --ktime-opt
                       as spread.sh (see spread.sh --help)
  --keep-work          keep the work directory after NEW is written
  -h, --help           this text
Exit status: 0 NEW written; 1 NEW written, but a tool reported bad input; 2 usage;
3 fatal, or some jobs failed after their retries (re-run the same command to continue);
4 OLD is damaged (a truncated gzip member); 5 another run holds NEW's run lock (NEW.run.lock).
USAGE
}

stages=verify,time work="" chunk=8 keep=0 old="" new=""
spread_opts=()
while [ $# -gt 0 ]; do
	case $1 in
	--stages) stages=$2; shift ;;
	--work) work=$2; shift ;;
	--chunk) chunk=$2; shift ;;
	--keep-work) keep=1 ;;
	--bar | --srun) spread_opts+=("$1") ;;
	-S | --sshlogin | --sshloginfile | --jobs | --gpus | --retries | --env | --stages-cmd | \
		--srun-opt | --budget | --kcompile-opt | --kverify-opt | --ktime-opt)
		spread_opts+=("$1" "$2"); shift ;;
	-h | --help) usage; exit 0 ;;
	-*) echo "reprocess.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
	*)
		if [ -z "$old" ]; then old=$1
		elif [ -z "$new" ]; then new=$1
		else echo "reprocess.sh: too many arguments" >&2; usage >&2; exit 2; fi ;;
	esac
	shift
done
if [ -z "$old" ] || [ -z "$new" ]; then
	echo "reprocess.sh: OLD and NEW are required" >&2
	usage >&2
	exit 2
fi
[ -r "$old" ] || { echo "reprocess.sh: cannot read $old" >&2; exit 3; }
# The run lock on NEW (as evolve.sh's on its archive), held until the end:
# two runs writing one NEW would share its work directory.
mkdir -p "$(dirname "$new")"
exec 8>>"$new.run.lock" || { echo "reprocess.sh: cannot open $new.run.lock" >&2; exit 3; }
if ! flock -n 8; then
	echo "reprocess.sh: $new is in use by another run (its run lock $new.run.lock is held); nothing run" >&2
	exit 5
fi
if [ -e "$new" ]; then
	echo "reprocess.sh: $new exists; reprocessing never overwrites an archive" >&2
	exit 2
fi
[ -n "$work" ] || work=$new.work
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

mkdir -p "$work" || { echo "reprocess.sh: cannot make $work" >&2; exit 3; }
# The decompressed archive is the fixed input of the work directory.
if [ ! -e "$work/old.ndjson" ]; then
	if ! gzip -dcf "$old" >"$work/old.tmp"; then
		rm -f "$work/old.tmp"
		if [ "$(head -c 2 "$old" | od -An -tx1 | tr -d ' \n')" = 1f8b ] && ! gzip -t "$old" 2>/dev/null; then
			echo "reprocess.sh: $old: damaged (a truncated or corrupt gzip member); nothing written; repair with: karchive repair $old" >&2
			exit 4
		fi
		echo "reprocess.sh: cannot read $old (or write $work)" >&2
		exit 3
	fi
	mv "$work/old.tmp" "$work/old.ndjson"
fi
set +e
"$here/spread.sh" --work "$work/spread" --out "$work/new.ndjson" --chunk "$chunk" \
	--stages "$stages" --force "${spread_opts[@]}" "$work/old.ndjson" 8>&-
rc=$?
set -e
case $rc in
0 | 1) ;;
2) exit 2 ;;
*) echo "reprocess.sh: incomplete; $old unchanged, $new not written; re-run to continue" >&2; exit 3 ;;
esac
case $new in
*.gz) gzip -c "$work/new.ndjson" >"$work/new.tmp" || { echo "reprocess.sh: cannot write $work/new.tmp" >&2; exit 3; } ;;
*) mv "$work/new.ndjson" "$work/new.tmp" ;;
esac
mv -n "$work/new.tmp" "$new"
[ -e "$work/new.tmp" ] && { echo "reprocess.sh: $new appeared meanwhile; result left in $work" >&2; exit 3; }
[ "$keep" = 1 ] || rm -rf "$work"
exit "$rc"
