#!/usr/bin/env bash
# scripts/check-under-load.sh [N] — `make check` as CI runs it (.ci/run), N
# times in a row (default 5), each from a fresh clone of HEAD, with one busy
# loop per core running beside it the whole time: a test that can fail by
# timing shows up here, not in CI.  Prints one line per run (the run's last
# line, "N passed, N failed", and its wall time) and keeps each run's log in
# $LOGDIR (default /tmp/ksci-load).  Exit 0 when every run passed.
set -u
case ${1:-} in -h | --help) sed -n '2,/^\([^#]\|$\)/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
n=${1:-5}
src=$(cd "$(dirname "$0")/.." && pwd)
logs=${LOGDIR:-/tmp/ksci-load}
mkdir -p "$logs"
commit=$(git -C "$src" rev-parse --short HEAD)
loops=""
for _ in $(seq "$(nproc)"); do
	(while :; do :; done) &
	loops="$loops $!"
done
# Each run is a session of its own (setsid), killed whole with the script:
# a signal used to stop only the busy loops and this script, and a run's
# ktime went on.
job=""
# shellcheck disable=SC2086 # a list of pids
trap 'kill $loops 2>/dev/null; [ -z "$job" ] || kill -- -"$job" "$job" 2>/dev/null' EXIT
trap 'exit 143' TERM INT HUP
echo "from commit $commit on, $(nproc) busy loops, $n runs"
bad=0
for i in $(seq "$n"); do
	d=$(mktemp -d "${TMPDIR:-/tmp}/ksci-clone.XXXXXX")
	git clone -q "$src" "$d/ksci"
	c=$(git -C "$d/ksci" rev-parse --short HEAD) # each run tests HEAD as it is when the run starts
	t0=$(date +%s)
	(cd "$d/ksci" && exec setsid -w sh .ci/run) >"$logs/run$i.log" 2>&1 &
	job=$!
	wait "$job"
	rc=$?
	job=""
	echo "run $i (commit $c): exit $rc, $(tail -n 2 "$logs/run$i.log" | grep -E 'passed, [0-9]+ failed' || echo 'no summary'), $(($(date +%s) - t0)) s"
	[ "$rc" = 0 ] || bad=1
	rm -rf "$d"
done
exit "$bad"
