#!/usr/bin/env bash
# tests/gpu/suite.sh (make check-gpu): the task suite on an NVIDIA GPU (skipped without one).
# For every task: the cuda seed, baseline and device reference are verified
# against the host reference at the test sizes; the seed is timed against
# the baseline at the bench_cuda sizes; then a short offline mutate search
# (one generation of KSCI_T50_CHILDREN children of the seed, default 3) is
# verified and timed.  Records go to $KSCI_T50_OUT (default: a temp dir);
# the last lines printed are a per-task table (tests/sh/t50-tasks-table.py).
# Env: KSCI_T50_TASKS (task subset), KSCI_T50_BUDGET (ktime --budget, 0.3),
# KSCI_T50_JOBS (parallel kcompile streams, 8).
. "$(dirname "$0")/../sh/lib.sh"

if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "# skip: no NVIDIA GPU here"
	done_testing
	exit $?
fi
export KSCI_TASKS="$ROOT/data/tasks"
out=${KSCI_T50_OUT:-$T/out}
mkdir -p "$out"
gen="$here/t50-tasks.py"
budget=${KSCI_T50_BUDGET:-0.3}
jobs=${KSCI_T50_JOBS:-8}
children=${KSCI_T50_CHILDREN:-3}
# shellcheck disable=SC2086 # the task list is meant to split
set -- ${KSCI_T50_TASKS:-}

pcompile() { # in out: kcompile in $jobs parallel streams (the cache is shared), order kept
	local i
	split -n "l/$jobs" -d "$1" "$T/shard."
	for i in "$T"/shard.*; do kcompile <"$i" >"$i.out" 2>>"$out/log.txt" & done
	wait
	cat "$T"/shard.*.out >"$2"
	rm -f "$T"/shard.*
}

python3 "$gen" "$KSCI_TASKS" good-cuda "$@" >"$T/good.nd"
pcompile "$T/good.nd" "$T/good.c.nd"
# A baseline that links a library (cuBLAS) cannot be loaded as a candidate:
# kcompile links a task's libs for the baseline role only.  ktime checks
# nothing of the baseline either, so these are compiled, not verified.
jq -r 'select(.libs != null) | "# not verified (links \(.libs | join(" ")) as a baseline only): \(.task) \(.origin.role)"' "$T/good.c.nd"
jq -c 'select(.libs == null)' "$T/good.c.nd" | kverify --seeds 2 >"$out/verify.nd" 2>>"$out/log.txt"
while IFS= read -r line; do
	st=$(jq -r .status <<<"$line")
	name="$(jq -r '"\(.task) cuda \(.origin.role)"' <<<"$line")"
	if [ "$st" = verified ]; then _report 0 "$name: verified"; else
		_report 1 "$name: $st" "$(jq -r '[.compile.log, .verify.message, (.verify.mismatch|tostring)] | map(select(. != null)) | join("\n")' <<<"$line" | head -c 2000)"
	fi
done <"$out/verify.nd"

jq -c 'select(.origin.role == "seed" and .status == "verified")' "$out/verify.nd" >"$T/seeds.nd"
ktime --budget "$budget" <"$T/seeds.nd" >"$out/time-seed.nd" 2>>"$out/log.txt"
while IFS= read -r line; do
	st=$(jq -r .status <<<"$line")
	name="$(jq -r .task <<<"$line") cuda seed timed"
	if [ "$st" = timed ]; then _report 0 "$name"; else _report 1 "$name: $st" "$(jq -r .time.message <<<"$line")"; fi
done <"$out/time-seed.nd"

# One generation of the built-in mutate search from each timed seed, task by
# task, until KSCI_T50_DEADLINE seconds (since the start) have passed.
deadline=${KSCI_T50_DEADLINE:-0}
jq -c --argjson n "$children" 'select(.status == "timed") | {status: "selected", task, backend, generation: 1,
	parents: [.id], base: ., inspirations: [], strategy: {name: "best", seed: 1}, child: 0}' \
	"$out/time-seed.nd" | kgen --seed 1 --children "$children" >"$T/kids.nd" 2>>"$out/log.txt"
pcompile "$T/kids.nd" "$T/kids.c.nd"
: >"$out/time-kids.nd"
# The slowest (their baselines take 0.1 s a call) go last.
order=$(jq -r .task "$T/kids.c.nd" | uniq | grep -vx -e attention -e gemm_fp8_blockscale
	jq -r .task "$T/kids.c.nd" | uniq | grep -x -e attention -e gemm_fp8_blockscale)
for task in $order; do
	if [ "$deadline" != 0 ] && [ "$SECONDS" -ge "$deadline" ]; then
		echo "# deadline: no mutate search for $task"
		continue
	fi
	jq -c --arg t "$task" 'select(.task == $t)' "$T/kids.c.nd" | kverify --seeds 2 2>>"$out/log.txt" |
		ktime --budget "$budget" >>"$out/time-kids.nd" 2>>"$out/log.txt"
	echo "# mutate $task: $(jq -r --arg t "$task" 'select(.task == $t) | .status' "$out/time-kids.nd" | sort | uniq -c | tr -s ' \n' ' ') (${SECONDS}s)"
done

python3 "$here/t50-tasks-table.py" "$out/verify.nd" "$out/time-seed.nd" "$out/time-kids.nd" | tee "$out/table.md"
done_testing
