#!/usr/bin/env bash
# tests/cluster/slurm-down.sh DIR — stop what slurm-up.sh DIR started, by the
# pids it wrote (slurmds, then slurmctld, then munged: the reverse order),
# never by name; waits up to 10 s for each, then SIGKILL.
dir=${1:?usage: tests/cluster/slurm-down.sh DIR}
[ -f "$dir/pids" ] || exit 0
tac "$dir/pids" | while read -r p; do
	[ -n "$p" ] || continue
	kill "$p" 2>/dev/null || continue
	for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
	kill -9 "$p" 2>/dev/null || true
done
: >"$dir/pids"
