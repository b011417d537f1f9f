# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034 # variables set and read across the sourcing scripts
# pipelines/evolve-lib.sh — what evolve.sh and evolve-parallel.sh share:
# finding the tools, checking the options (a dry run of the tools), the run
# lock, refusing a damaged archive, reading the archive's last generation,
# the provider failure policy, and printing a generation's summary (both
# from one small object that kselect --summary writes; jq reads only that).
# Sourced, not run; uses the callers' variables archive, task, backend.
# Exit codes: docs/exit-codes.md, "Pipelines".

# The options both scripts take, with their defaults. evolve_option OPT [ARG]
# takes one of them (setting evolve_shift to the words it used) and returns 0,
# or returns 1 when OPT is not one of them.
task=matmul backend=c gens=5 pop=8 archive="" strategy=tournament seed=1
generator=${KSCI_PROVIDER:-mutate} model="" budget="" quiet=0 max_pf=3 stop_slower=0.5
prog=${0##*/}
sel_opts=() gen_opts=()
evolve_option() {
	evolve_shift=2
	case $1 in
	-q | --quiet) quiet=1; evolve_shift=1; return 0 ;;
	--task | --backend | --generations | --population | --archive | --strategy | --seed | \
		--provider | --generator | --model | --budget | --kselect-opt | --kgen-opt | --max-provider-failures | \
		--stop-slower)
		[ $# -ge 2 ] || { echo "${0##*/}: $1 needs a value" >&2; exit 2; } ;;
	*) return 1 ;;
	esac
	case $1 in
	--task) task=$2 ;;
	--backend) backend=$2 ;;
	--generations) gens=$2 ;;
	--population) pop=$2 ;;
	--archive) archive=$2 ;;
	--strategy) strategy=$2 ;;
	--seed) seed=$2 ;;
	--provider | --generator) generator=$2 ;;
	--model) model=$2 ;;
	--budget) budget=$2 ;;
	--kselect-opt) sel_opts+=("$2") ;;
	--kgen-opt) gen_opts+=("$2") ;;
	--max-provider-failures) max_pf=$2 ;;
	--stop-slower) stop_slower=$2 ;;
	esac
}

# evolve_find_tools PROG TOOL...: put $KSCIBIN (default: the build next to
# this script) first on PATH and check every TOOL is there (exit 3 if not).
evolve_find_tools() {
	local prog=$1 here t
	shift
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	if [ -z "${KSCIBIN:-}" ] && [ -x "$here/../build/bin/kselect" ]; then
		KSCIBIN=$here/../build/bin
	fi
	[ -n "${KSCIBIN:-}" ] && PATH="$KSCIBIN:$PATH"
	for t in "$@"; do
		command -v "$t" >/dev/null || { echo "$prog: $t not found (build with make)" >&2; exit 3; }
	done
}

# evolve_check_numbers PROG GENS POP SEED: usage error (exit 2) unless all are
# non-negative integers and POP >= 1.
evolve_check_numbers() {
	local prog=$1 n
	shift
	for n in "$@"; do
		case $n in '' | *[!0-9]*) echo "$prog: '$n' is not a non-negative integer" >&2; exit 2 ;; esac
	done
	[ "$2" -ge 1 ] || { echo "$prog: --population must be at least 1" >&2; exit 2; }
	case $stop_slower in
	'' | *[!0-9.]* | *.*.* | .) echo "$prog: --stop-slower: '$stop_slower' is not a number from 0 to 1" >&2; exit 2 ;;
	esac
	awk -v f="$stop_slower" 'BEGIN { exit !(f <= 1) }' ||
		{ echo "$prog: --stop-slower: $stop_slower is outside 0..1" >&2; exit 2; }
}

# evolve_dry_run CMD...: CMD (a tool with this run's options) on no input;
# its usage error (an unknown back end, provider, strategy or tool option)
# is the run's (exit 2, its message shown), before anything runs and before
# the archive is touched. The tools write nothing for no input (kgen opens
# its transcript only for a record).
evolve_dry_run() {
	local err rc=0
	err=$("$@" </dev/null 2>&1 >/dev/null) || rc=$?
	if [ "$rc" = 2 ]; then
		printf '%s\n' "$err" >&2
		echo "$prog: usage error from $1 (see above); nothing run" >&2
		exit 2
	fi
}

# evolve_run_lock: take ARCHIVE.run.lock (flock, not waiting) on fd 8 for
# the whole run, or exit 5: two runs on one archive would each do every
# generation. The lock goes with the process (and the children that inherit
# fd 8); the file stays.
evolve_run_lock() {
	mkdir -p "$(dirname "$archive")"
	exec 8>>"$archive.run.lock" || { echo "$prog: cannot open $archive.run.lock" >&2; exit 3; }
	if ! flock -n 8; then
		echo "$prog: $archive is in use by another run (its run lock $archive.run.lock is held); nothing run" >&2
		exit 5
	fi
}

# evolve_unreadable RC: after kselect --summary failed with RC, say why and
# return 4 when the archive is damaged (a truncated or corrupt gzip member,
# a line that is not JSON: a torn line, gzip bytes after plain lines),
# else 3 (it could not be read). Continuing from a wrong last generation
# would run away, and appending after a torn line would glue the first new
# record to it.
evolve_unreadable() {
	local why=""
	if [ "$(head -c 2 "$archive" | od -An -tx1 | tr -d ' \n')" = 1f8b ] && ! gzip -t "$archive" 2>/dev/null; then
		why="a truncated or corrupt gzip member"
	elif [ "$1" = 1 ] || [ "$1" = 4 ]; then
		why="a line that is not JSON: a torn line, or gzip data after plain lines"
	fi
	if [ -z "$why" ]; then
		echo "$prog: cannot read all of $archive (kselect --summary exit $1, see above)" >&2
		return 3
	fi
	echo "$prog: $archive: damaged ($why); nothing appended; repair with: karchive repair $archive" >&2
	return 4
}

# evolve_check_archive GZIP: before anything runs, refuse (exit 4) an archive
# that cannot be read to its end, and, when GZIP is 1 (gzip members will be
# appended), one of plain NDJSON lines: the members would make it unreadable.
# Exit 3 when it cannot be read at all.
evolve_check_archive() {
	[ -e "$archive" ] || return 0
	if [ ! -f "$archive" ] || [ ! -r "$archive" ]; then
		echo "$prog: cannot read $archive (not a readable file)" >&2
		exit 3
	fi
	[ -s "$archive" ] || return 0
	evolve_summary >/dev/null || exit $?
	if [ "$1" = 1 ] && [ "$(head -c 2 "$archive" | od -An -tx1 | tr -d ' \n')" != 1f8b ]; then
		echo "$prog: $archive: plain NDJSON, not gzip, and $prog appends gzip members, which no tool could read after plain lines; nothing run; compress it first (gzip -k $archive) and pass --archive $archive.gz" >&2
		exit 4
	fi
}

# evolve_provider_policy FILE G: the provider failure policy on generation
# G's records (FILE, in order). A gen_error whose reason (gen.status, docs/
# tools/kgen.md) is a provider's failure counts in provider_failures, carried
# from generation to generation; any other record resets it. An auth or
# quota failure, or max_pf (0: no limit) consecutive failures, stop the run:
# a message, and status 6 (the caller does not archive generation G).
provider_failures=0
evolve_provider_policy() {
	local n stop reason msg
	IFS=$'\x1f' read -r n stop reason msg < <(jq -rn --argjson n "$provider_failures" --argjson k "$max_pf" '
		def failure: IN("auth", "quota", "timeout", "rate_limited", "server_error", "overloaded", "truncated",
			"connect", "transport", "bad_request", "bad_response", "cmd_failed", "provider");
		reduce (inputs | select(type == "object")) as $r ({n: $n, stop: "", last: null};
			if .stop != "" then .
			elif $r.status == "gen_error" and ($r.gen.status // "" | failure) then
				.n += 1 | .last = $r.gen
				| if $r.gen.status == "auth" then .stop = "an authentication failure"
				  elif $r.gen.status == "quota" then .stop = "a quota failure"
				  elif $k > 0 and .n >= $k then .stop = "\(.n) consecutive provider failures"
				  else . end
			else .n = 0 end)
		| [.n, .stop, (.last.status // ""), ((.last.message // "") | gsub("[[:cntrl:]]+"; " ") | .[0:300])]
		| map(tostring) | join("\u001f")' "$1")
	provider_failures=${n:-0}
	[ -n "$stop" ] || return 0
	echo "$prog: generation $2: stopped by the provider failure policy: $stop (last: $reason: $msg); generation $2 not archived, the ones before are; fix the cause and run the same command again" >&2
	return 6
}

# evolve_summary [--generation G]: kselect's one JSON object summing the
# archive up for this task and back end (docs/tools/kselect.md, --summary),
# read once through its fast path. An archive kselect cannot read to its end
# is a message and status 4 (damaged) or 3 (evolve_unreadable).
evolve_summary() {
	local out rc=0
	out=$(kselect --summary --task "$task" --backend "$backend" "$@" "$archive") || rc=$?
	if [ "$rc" != 0 ]; then
		evolve_unreadable "$rc"
		return
	fi
	printf '%s\n' "$out"
}

# evolve_read_state: from one read of the archive, last (the highest
# generation of this task/back end, -1: none) and best (the best speedup over
# the seed so far, 1 when there is none: ktime --best); exit status 4
# (damaged) or 3 when the archive cannot be read completely.
evolve_read_state() {
	local s
	last=-1 best=1
	[ -s "$archive" ] || return 0
	s=$(evolve_summary) || return
	last=$(jq -r .last_generation <<<"$s")
	best=$(jq -r '.best.speedup_vs_seed // 1 | if . > 0 then . else 1 end' <<<"$s")
}

# The highest generation alone, printed (as evolve_read_state).
last_generation() {
	evolve_read_state || return
	echo "$last"
}

# evolve_time_opts [PREFIX]: the generation's ktime options, early rejection
# against the best so far, into the array gen_time (each after PREFIX, e.g.
# --ktime-opt for spread.sh).
evolve_time_opts() {
	gen_time=()
	[ "$stop_slower" = 0 ] && return 0
	local o
	for o in --stop-slower="$stop_slower" --best="$best"; do gen_time+=(${1:+"$1"} "$o"); done
}

# summary G: one line — generation G's statuses and the best so far; exit
# status 4 or 3 when the archive cannot be read completely.
summary() {
	local s
	s=$(evolve_summary --generation "$1") || return
	jq -r '
		.statuses as $st
		| "generation \(.generation): \([$st | keys[] | "\(.) \($st[.])"] | join(", "))"
		+ (if .best then "; best so far \(.best.id) (generation \(.best.generation)): "
		     + "\(.best.speedup_vs_baseline * 1000 | round / 1000)x vs baseline, "
		     + "\((.best.speedup_vs_seed // 0) * 1000 | round / 1000)x vs seed"
		   else "; nothing timed yet" end)' <<<"$s"
}
