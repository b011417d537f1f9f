#!/usr/bin/env bash
# tests/sh/cluster-stages.sh — stages.sh for the t80-cluster tests' workers:
# logs "start HOST RUN ID" for every record before running the real
# pipelines/stages.sh on it (after CLUSTER_SLEEP seconds, to keep jobs in
# flight long enough to kill a host or the run) and "end HOST RUN ID" after.
# HOST is the sshd port the job came through ("local" without ssh); RUN is
# $CLUSTER_RUN. The log is $CLUSTER_LOG, appended under flock.
# With CLUSTER_HOLD=PORT, every job on that host but its first of the run
# waits (up to 15 minutes, longer than any test waits) instead of running: a
# test can then kill the host with a job surely in flight, whatever the
# machine's load.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
case ${1:-} in -h | --help) echo "usage: cluster-stages.sh [stages.sh options] < records"; exit 0 ;; esac
host=local
[ -n "${SSH_CONNECTION:-}" ] && host=${SSH_CONNECTION##* }
in=$(cat)
log() { # word
	printf '%s\n' "$in" | jq -r --arg w "$1" --arg h "$host" --arg r "${CLUSTER_RUN:-0}" \
		'"\($w) \($h) \($r) \(.id // "-")"' | flock "$CLUSTER_LOG.lock" tee -a "$CLUSTER_LOG" >/dev/null
}
# Append the start line and count this host's earlier starts of the run in
# one critical section, so two jobs starting at once cannot both be first.
line=$(printf '%s\n' "$in" | jq -r --arg h "$host" --arg r "${CLUSTER_RUN:-0}" '"start \($h) \($r) \(.id // "-")"')
# shellcheck disable=SC2016 # the inner script's own arguments
earlier=$(flock "$CLUSTER_LOG.lock" sh -c 'cat "$3" 2>/dev/null | grep -c "^start $1 $2 " || true; printf "%s\n" "$4" >>"$3"' \
	_ "$host" "${CLUSTER_RUN:-0}" "$CLUSTER_LOG" "$line")
if [ "$host" = "${CLUSTER_HOLD:-}" ] && [ "$earlier" -gt 0 ]; then
	sleep 900
	exit 1
fi
sleep "${CLUSTER_SLEEP:-0}"
printf '%s\n' "$in" | "$here/../../pipelines/stages.sh" "$@"
log end
