# shellcheck shell=bash
# bench/lib.sh — what the benches that run the pipelines' stages share:
# sourced, never run.
#
# bench_setup NAME: here (the repository), the tools first in PATH (KSCIBIN,
# default build/gpu/bin: `make gpu-bundle`), KSCI_TASKS, out (${OUT:-
# gpu-logs}/NAME, made), tmp (removed on exit) holding a private compile
# cache and private GPU lock directories, and cores.
bench_setup() {
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	export KSCIBIN=${KSCIBIN:-$here/build/gpu/bin}
	export PATH="$KSCIBIN:$PATH"
	export KSCI_TASKS=${KSCI_TASKS:-$here/data/tasks}
	out=${OUT:-$here/gpu-logs}/$1
	mkdir -p "$out"
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/ksci-$1.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	export KSCI_CACHE=$tmp/cache KSCI_GPU_LOCKS=$tmp/locks KSCI_GPU_LOCK_DIR=$tmp/locks
	mkdir -p "$KSCI_GPU_LOCKS"
	# shellcheck disable=SC2034 # for the scripts that source this
	cores=$(nproc)
}

# bench_one_task NAME ARG...: the one TASK a compile bench is given (exit 2,
# said, where ARG is not exactly one, or names no task's seed), then
# bench_setup NAME; sets task; kcompile must be in KSCIBIN.
bench_one_task() {
	local name=$1
	shift
	[ $# -eq 1 ] || { echo "$name: one TASK, not $#" >&2; exit 2; }
	task=$1
	bench_setup "$name"
	[ -f "$KSCI_TASKS/$task/seed.cu" ] || { echo "$name: no task $task (no $KSCI_TASKS/$task/seed.cu)" >&2; exit 2; }
	command -v kcompile >/dev/null || { echo "$name: no kcompile in $KSCIBIN (make gpu-bundle)" >&2; exit 2; }
}
# rate N SECONDS: N a minute, one decimal.
rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.1f", n * 60 / s }'; }
# since T0: seconds since T0 (date +%s.%N), one decimal.
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

# med_min_max [DECIMALS]: the median, min and max of the numbers on stdin
# (one a line, blank lines skipped), DECIMALS places (default 2), on one
# line; "- - -" where there are none.
# shellcheck disable=SC2120 # DECIMALS is optional
med_min_max() { sort -n | awk -v d="${1:-2}" 'NF { v[++k] = $1 } END { if (!k) { print "- - -"; exit }
	f = "%." d "f"; printf f " " f " " f "\n", k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2, v[1], v[k] }'; }

# med_range [DIGITS]: the same as one phrase, "median (min-max)", for a line
# of prose (gpu-throughput.sh's stages and outside lines).
med_range() { med_min_max "$@" | awk '{ printf "%s (%s-%s)", $1, $2, $3 }'; }

# AWK_MED: an awk function for an awk program's start (awk "$AWK_MED"'...'):
# med(s), the median of the numbers in the string s, separated by spaces —
# for the benches that gather a list per key inside awk.
# shellcheck disable=SC2034 # for the scripts that source this
AWK_MED='function med(s,   a, k, i, j, t) { k = split(s, a, " "); for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2 }
'

# AWK_SIGN_P: likewise, sign_p(b, n), the one-sided sign test's p: the
# chance of b or more of n rounds going one way where each goes either way
# at even odds (compile-sandbox.sh, cicc-probe.sh, nvcc-prefix.sh).
# shellcheck disable=SC2034 # for the scripts that source this
AWK_SIGN_P='function sign_p(b, n,   i, j, c, p) { p = 0; for (i = b; i <= n; i++) { c = 1; for (j = 0; j < i; j++) c = c * (n - j) / (j + 1); p += c }; return p / 2 ^ n }
'

# bench_sources TASK N BIN: TASK's cuda seed as a generated record and, for N
# above 0, N distinct kgen mutate children of it (seed 7), one a line on
# stdout (BIN: the tools' directory).
bench_sources() {
	local seed
	seed=$(jq -cn --arg t "$1" --rawfile s "$KSCI_TASKS/$1/seed.cu" \
		'{id: ($t + "-seed"), task: $t, backend: "cuda", generation: 0, parents: [], source: $s, status: "generated"}')
	printf '%s\n' "$seed"
	[ "$2" -gt 0 ] || return 0
	printf '%s\n' "$seed" | jq -c '{status: "selected", task, backend, generation: 1, parents: [.id], base: .,
		inspirations: [], strategy: {name: "best", seed: 1}, child: 0}' |
		"$3/kgen" --seed 7 --children "$2" 2>/dev/null | jq -c 'select(.status == "generated")' || true
}
