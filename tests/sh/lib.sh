# shellcheck shell=bash
# tests/sh/lib.sh — sourced by every shell test.
# Gives: a temp dir ($T, removed by trap), tool paths overridable by env
# ($KSCI_BUILD/bin or $KSCIBIN), and TAP helpers:
#   ok "name" command...        the command must succeed
#   not_ok_is "name" command... the command must fail
#   expect_eq "name" expected actual
# End each test file with: done_testing
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$here/../.." && pwd)
KSCI_BUILD=${KSCI_BUILD:-$ROOT/build}
KSCIBIN=${KSCIBIN:-$KSCI_BUILD/bin}
PATH="$KSCIBIN:$ROOT/pipelines:$PATH"
export PATH ROOT KSCIBIN KSCI_BUILD
T=$(mktemp -d "${TMPDIR:-/tmp}/ksci-test.XXXXXX")
trap 'rm -rf "$T"' EXIT
export KSCI_CACHE="$T/cache"
export KSCI_TASKS=${KSCI_TASKS:-$ROOT/data/tasks}
t_n=0
t_failed=0

_report() { # status name [detail]
	t_n=$((t_n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $t_n - $2"
	else
		t_failed=$((t_failed + 1))
		echo "not ok $t_n - $2"
		[ -n "${3:-}" ] && printf '%s\n' "$3" | sed 's/^/#   /'
	fi
	return 0
}

ok() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then _report 0 "$name"; else _report 1 "$name" "$out"; fi
}

not_ok_is() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then _report 1 "$name" "unexpected success: $out"; else _report 0 "$name"; fi
}

expect_eq() {
	if [ "$2" = "$3" ]; then _report 0 "$1"; else _report 1 "$1" "expected: $2
actual:   $3"; fi
}

# skip_without_bwrap: the test ends here, with a SKIP line that says why,
# where bubblewrap cannot make the sandbox kverify and ktime run kernels in.
skip_without_bwrap() {
	if ! command -v bwrap >/dev/null || ! bwrap --unshare-all --unshare-user --uid 65534 --gid 65534 \
		--ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib --symlink usr/lib64 /lib64 --proc /proc /bin/true 2>/dev/null; then
		echo "ok 1 # SKIP bubblewrap cannot make its sandbox on this machine"
		done_testing
		exit 0
	fi
}

# joblog_done JOBLOG: how many jobs parallel's joblog shows ended with exit 0
# (0 while there is no joblog yet).
joblog_done() { awk -F '\t' 'NR > 1 && $7 == 0' "$1" 2>/dev/null | wc -l; }
# joblog_done_seq JOBLOG: the numbers of those jobs that also took no signal, sorted.
joblog_done_seq() { awk -F '\t' 'NR > 1 && $7 == 0 && $8 == 0 { print $1 }' "$1" | sort -n; }
# joblog_again DONE BEFORE JOBLOG: the jobs of DONE (numbers, sorted as
# text) that have a line in JOBLOG beyond BEFORE (a copy of it taken when
# they were done): those a resume ran again; or "the joblog was begun again"
# where JOBLOG does not begin with BEFORE.
joblog_again() {
	local n
	n=$(wc -c <"$2")
	if ! head -c "$n" "$3" | cmp -s - "$2"; then
		echo "the joblog was begun again"
		return
	fi
	tail -c +"$((n + 1))" "$3" | awk -F '\t' '$1 ~ /^[0-9]+$/ { print $1 }' | sort | comm -12 "$1" - | xargs
}
# pass_ids GDIR: the ids a generation's passes gave their spreads (fix and
# tune rounds, composition, recheck, race), sorted: a pass runs the stages on
# records the main step finished (kgen passes a failed record on before its
# fix; recheck and race judge timed ones again).
pass_ids() {
	cat "$1"/pass-*.spread/input.ndjson "$1"/recheck.spread/input.ndjson "$1"/race/spread.*/input.ndjson 2>/dev/null |
		jq -r '.id // empty' | sort -u
}
# spread_chunk WORK: the records a job of the spread in WORK holds (its params).
spread_chunk() { sed -n 's/^chunk=\([0-9][0-9]*\)$/\1/p' "$1/params"; }
# spread_ids WORK: the candidate ids of the job numbers on stdin, sorted; job
# k of a spread's work directory WORK is the k-th chunk of WORK/input.ndjson,
# of the size in WORK/params (a job held 2 records in t81-slurm, where line k
# was taken for job k: a job not done was counted done, and its record's start
# in the re-run failed "no job done before the scancel ran again" under load,
# where jobs finish out of order; spread-ids-chunk-of-one).
spread_ids() {
	local k c
	c=$(spread_chunk "$1")
	while read -r k; do sed -n "$(((k - 1) * c + 1)),$((k * c))p" "$1/input.ndjson" | jq -r .id; done | sort
}

# bad_input_tools DIR TOOL WORD: DIR becomes a directory of the ksci tools
# in which TOOL does its work and then exits 1 (bad input) when WORD is one
# of its arguments, and behaves as itself otherwise: a stage that reports bad
# input, for the pipelines (which put $KSCIBIN first in PATH: run them with
# KSCIBIN=DIR). WORD may be several words ("--seeds 8").
bad_input_tools() {
	local f
	mkdir -p "$1"
	for f in "$KSCIBIN"/*; do ln -sf "$f" "$1/"; done
	rm -f "$1/$2"
	printf '#!/bin/sh\ncase " $* " in *" %s "*) "%s/%s" "$@"; exit 1 ;; esac\nexec "%s/%s" "$@"\n' \
		"$3" "$KSCIBIN" "$2" "$KSCIBIN" "$2" >"$1/$2"
	chmod +x "$1/$2"
}

done_testing() {
	echo "1..$t_n"
	[ "$t_failed" = 0 ]
}

# tiny_task DIR: a small valid task (y = copy of x) whose seed, DIR/seed.c,
# the caller writes; the seed doubles as the reference.
tiny_task() {
	mkdir -p "$1"
	cat >"$1/task.json" <<'EOF'
{"name": "tiny", "seed": {"c": "seed.c"}, "reference": "seed.c",
 "args": [{"name": "x", "kind": "in", "dtype": "f32", "shape": ["n"]},
          {"name": "y", "kind": "out", "dtype": "f32", "shape": ["n"]},
          {"name": "n", "kind": "scalar", "dtype": "i32"}],
 "tests": [{"n": 7}], "bench": [{"n": 1024}], "tolerance": {"f32": {"atol": 0, "rtol": 0}}}
EOF
}

# start_mock_llm: the mock model server (tests/mock/llm_server.py) on
# 127.0.0.1 — nothing may leave this machine: proxies and real keys unset,
# base URLs pointed at the mock, test keys set. Sets $server and $port; the
# server logs each request to $T/server.log; it is stopped on exit.
start_mock_llm() {
	unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy OPENAI_BASE_URL ANTHROPIC_BASE_URL
	unset OPENAI_API_KEY ANTHROPIC_API_KEY KSCI_PROVIDER KSCI_MODEL KSCI_TRANSCRIPT KSCI_PRICES
	export NO_PROXY=127.0.0.1 no_proxy=127.0.0.1
	python3 "$ROOT/tests/mock/llm_server.py" "$T/port" "$T/server.log" &
	server=$!
	trap 'kill "$server" 2>/dev/null; rm -rf "$T"' EXIT
	for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.05; done
	port=$(cat "$T/port")
	export OPENAI_BASE_URL="http://127.0.0.1:$port/v1" ANTHROPIC_BASE_URL="http://127.0.0.1:$port"
	export OPENAI_API_KEY=test-key ANTHROPIC_API_KEY=test-key
}
