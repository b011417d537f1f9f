#!/usr/bin/env bash
# t50-tasks: every task in data/tasks is usable — task.json loads, the c seed
# and baseline verify against the reference, the cuda seed and baseline
# compile (when nvcc is here), and deliberately wrong candidates (all zeros,
# the reference scaled by 1e-6, the reference squeezed towards its mean) are
# caught as wrong: a task whose inputs let such shortcuts pass is a bug.
# KSCI_T50_TASKS="a b" limits the run to some tasks.
. "$(dirname "$0")/lib.sh"

export KSCI_TASKS="$ROOT/data/tasks"
gen="$here/t50-tasks.py"
# shellcheck disable=SC2086 # the task list is meant to split
set -- ${KSCI_T50_TASKS:-}

# The cuda compiles are the slow part: run them beside the c checks.
have_nvcc=0
if [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ]; then
	have_nvcc=1
	python3 "$gen" "$KSCI_TASKS" good-cuda "$@" | kcompile >"$T/cuda.nd" 2>"$T/cuda.err" &
	cuda_pid=$!
fi
python3 "$gen" "$KSCI_TASKS" good-c "$@" >"$T/good.nd"
python3 "$gen" "$KSCI_TASKS" wrong "$@" >"$T/wrong.nd"
cat "$T/good.nd" "$T/wrong.nd" | kcompile | kverify --seeds 2 >"$T/c.nd" 2>"$T/c.err"

expect_eq "every c record came back" "$(cat "$T/good.nd" "$T/wrong.nd" | wc -l)" "$(wc -l <"$T/c.nd")"
if [ "$have_nvcc" = 1 ]; then
	wait "$cuda_pid"
	expect_eq "every cuda record came back" "$(python3 "$gen" "$KSCI_TASKS" good-cuda "$@" | wc -l)" \
		"$(wc -l <"$T/cuda.nd")"
fi

check() { # file: one TAP line per record, status against expect
	local line task role status expect detail
	while IFS= read -r line; do
		task=$(jq -r .task <<<"$line")
		role=$(jq -r .origin.role <<<"$line")
		status=$(jq -r .status <<<"$line")
		expect=$(jq -r .expect <<<"$line")
		detail=$(jq -r '[.error.message, .compile.log, .verify.message, (.verify.mismatch|tostring)] | map(select(. != null)) | join("\n")' <<<"$line" | head -c 3000)
		if [ "$status" = "$expect" ]; then
			_report 0 "$task $(jq -r .backend <<<"$line") $role: $status"
		else
			_report 1 "$task $(jq -r .backend <<<"$line") $role: $status, expected $expect" "$detail"
		fi
	done <"$1"
}
check "$T/c.nd"
if [ "$have_nvcc" = 1 ]; then
	check "$T/cuda.nd"
else
	echo "# no nvcc: cuda seeds and baselines not compiled"
fi
done_testing
