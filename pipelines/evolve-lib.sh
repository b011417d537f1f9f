# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034 # variables set and read across the sourcing scripts
# pipelines/evolve-lib.sh — what evolve.sh and evolve-parallel.sh share:
# finding the tools, checking the options (a dry run of the tools), the run
# lock, refusing a damaged archive, reading the archive's last generation,
# the provider failure policy, the ledger and the stop rules (--max-usd,
# --max-tokens, --max-minutes, --target-speedup, --plateau), and printing a
# generation's summary (the archive's state from one small object that
# kselect --summary writes, the spend from the ledger; jq reads only those).
# Sourced, not run; uses the callers' variables archive, task, backend.
# Exit codes: docs/exit-codes.md, "Pipelines".

# The options both scripts take, with their defaults. evolve_option OPT [ARG]
# takes one of them (setting evolve_shift to the words it used) and returns 0,
# or returns 1 when OPT is not one of them.
task=matmul backend=c gens=5 pop=8 archive="" strategy=tournament seed=1
generator=${KSCI_PROVIDER:-mutate} model="" budget="" quiet=0 max_pf=3 stop_slower=0.5
max_usd="" max_tokens="" max_minutes="" target="" plateau="" prices="" ledger="" run_start=0 compose=on race=""
prog=${0##*/}
sel_opts=() gen_opts=()
evolve_option() {
	evolve_shift=2
	case $1 in
	-q | --quiet) quiet=1; evolve_shift=1; return 0 ;;
	--task | --backend | --generations | --population | --archive | --strategy | --seed | \
		--provider | --generator | --model | --budget | --kselect-opt | --kgen-opt | --max-provider-failures | \
		--stop-slower | --max-usd | --max-tokens | --max-minutes | --target-speedup | --plateau | --prices | --ledger | \
		--compose | --race)
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
	--max-usd) max_usd=$2 ;;
	--max-tokens) max_tokens=$2 ;;
	--max-minutes) max_minutes=$2 ;;
	--target-speedup) target=$2 ;;
	--plateau) plateau=$2 ;;
	--prices) prices=$2 ;;
	--ledger) ledger=$2 ;;
	--compose)
		case $2 in on | off) compose=$2 ;; *) echo "${0##*/}: --compose: \"$2\" is not on or off" >&2; exit 2 ;; esac ;;
	--race)
		case $2 in '' | *[!0-9]*) echo "${0##*/}: --race: \"$2\" is not a non-negative integer" >&2; exit 2 ;; esac
		race=$2 ;;
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
	local o v
	for o in max-usd max-minutes target-speedup max-tokens plateau; do
		case $o in
		max-usd) v=$max_usd ;; max-minutes) v=$max_minutes ;; target-speedup) v=$target ;;
		max-tokens) v=$max_tokens ;; plateau) v=$plateau ;;
		esac
		[ -n "$v" ] || continue
		if [ "$o" = max-tokens ] || [ "$o" = plateau ]; then
			if ! [[ $v =~ ^[0-9]{1,15}$ ]] || [ "$((10#$v))" -lt 1 ]; then
				echo "$prog: --$o: '$v' is not a whole number of at least 1" >&2
				exit 2
			fi
		elif ! [[ $v =~ ^([0-9]+([.][0-9]*)?|[.][0-9]+)$ ]] || ! awk -v x="$v" 'BEGIN { exit !(x > 0) }'; then
			echo "$prog: --$o: '$v' is not a number above 0" >&2
			exit 2
		fi
	done
	if [ -n "$max_usd" ] && [ -z "$prices" ] && [ -z "${KSCI_PRICES:-}" ]; then
		echo "$prog: --max-usd needs a price table (--prices FILE or KSCI_PRICES): without one no call has a cost" >&2
		exit 2
	fi
}

# evolve_stops_check: after the dry runs, before anything is touched: the
# price table must parse (kreport reads it by the rule kgen and kselect
# price by; a usage error otherwise, exit 2), and the tools are told where
# the ledger is (KSCI_LEDGER: --ledger, else $KSCI_LEDGER, else
# ARCHIVE.ledger.ndjson) and the table (KSCI_PRICES).
evolve_stops_check() {
	ledger=${ledger:-${KSCI_LEDGER:-$archive.ledger.ndjson}}
	export KSCI_LEDGER=$ledger
	[ -n "$prices" ] || return 0
	command -v kreport >/dev/null || { echo "$prog: kreport not found (build with make)" >&2; exit 3; }
	evolve_dry_run kreport --prices "$prices"
	export KSCI_PRICES=$prices
}

# evolve_stops_start: once the run lock is held: the stop record of an
# earlier run goes (this run writes its own), and this run's clock starts.
evolve_stops_start() {
	rm -f "$archive.stop.json"
	run_start=${EPOCHREALTIME:-$SECONDS}
}

# run_secs: seconds since this run started (to the microsecond where bash
# has EPOCHREALTIME, whose decimal point follows the locale).
run_secs() {
	local now=${EPOCHREALTIME:-$SECONDS}
	awk -v a="${now/,/.}" -v b="${run_start/,/.}" 'BEGIN { printf "%.3f", a - b }'
}

# evolve_spend: the ledger's totals over its call lines (every run on this
# archive; a line that is not JSON is passed over): spend_usd (cost_usd of
# the calls bought), spend_tokens (their tokens in + out), spend_calls,
# spend_cached (answers from the cache or a replay: cost 0), spend_saved
# (what those would have cost), spend_unpriced (calls bought with tokens and
# no cost_usd). Status 3 when the ledger cannot be read.
evolve_spend() {
	local s
	spend_usd=0 spend_tokens=0 spend_calls=0 spend_cached=0 spend_saved=0 spend_unpriced=0
	[ -s "$ledger" ] || return 0
	s=$(jq -rRn '
		reduce (inputs | fromjson? | select(type == "object" and .kind == "call")) as $c
			({usd: 0, tok: 0, n: 0, cached: 0, saved: 0, unpriced: 0};
			.n += 1
			| (($c.tokens_in // 0) + ($c.tokens_out // 0)) as $t
			| if $c.cached == true or $c.replayed == true then .cached += 1 | .saved += ($c.saved_usd // 0)
			  else .tok += $t | .usd += ($c.cost_usd // 0)
				| if ($c.cost_usd | type) != "number" and $t > 0 then .unpriced += 1 else . end
			  end)
		| "\(.usd) \(.tok) \(.n) \(.cached) \(.saved) \(.unpriced)"' "$ledger") ||
		{ echo "$prog: cannot read the ledger $ledger" >&2; return 3; }
	read -r spend_usd spend_tokens spend_calls spend_cached spend_saved spend_unpriced <<<"$s"
}

# evolve_ledger_mark G: the ledger line saying generation G starts here (its
# calls follow it). A ledger that cannot be written (a full disk) stops the
# run, exit 3, before the generation's calls when --max-usd or --max-tokens
# counts on it; otherwise it is a warning and the generation goes on.
evolve_ledger_mark() {
	printf '{"kind":"generation","time":"%s","tool":"%s","generation":%d}\n' "$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)" \
		"$prog" "$1" 2>/dev/null >>"$ledger" && return 0
	if [ -n "$max_usd$max_tokens" ]; then
		echo "$prog: generation $1: cannot write the ledger $ledger, which --max-usd and --max-tokens count on; nothing run" >&2
		exit 3
	fi
	echo "$prog: generation $1: cannot write the ledger $ledger; its calls may be missing from it" >&2
}

# ge A B: whether number A >= number B.
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'; }

# evolve_stop_check: the stop rules, before each generation (so after the
# one before): 0 and stop_reason, stop_msg when one says stop; 1 when none
# does. Uses last, best_* (evolve_read_state) and the ledger.
evolve_stop_check() {
	evolve_spend || exit
	stop_reason="" stop_msg=""
	local secs
	secs=$(run_secs)
	if [ -n "$max_usd" ] && ge "$spend_usd" "$max_usd"; then
		stop_reason=max_usd
		stop_msg="the ledger's spend, $(printf '%.4f' "$spend_usd") USD, reached --max-usd $max_usd"
	elif [ -n "$max_tokens" ] && ge "$spend_tokens" "$max_tokens"; then
		stop_reason=max_tokens
		stop_msg="the ledger's $spend_tokens tokens bought reached --max-tokens $max_tokens"
	elif [ -n "$max_minutes" ] && ge "$secs" "$(awk -v m="$max_minutes" 'BEGIN { print m * 60 }')"; then
		stop_reason=max_minutes
		stop_msg="this run's $(awk -v s="$secs" 'BEGIN { printf "%.1f", s / 60 }') minutes reached --max-minutes $max_minutes"
	elif [ -n "$target" ] && [ -n "$best_seed" ] && ge "$best_seed" "$target"; then
		stop_reason=target_speedup
		stop_msg="the best, $best_id (generation $best_gen), is ${best_seed}x the seed: --target-speedup $target reached"
	elif [ -n "$plateau" ] && [ -n "$best_gen" ] && [ "$((last - best_gen))" -ge "$plateau" ]; then
		stop_reason=plateau
		stop_msg="no improvement on the best, $best_id (generation $best_gen), in the $((last - best_gen)) generations since: --plateau $plateau"
	fi
	[ -n "$stop_reason" ]
}

# evolve_stopped: how the run ended, once the loop is left: a stop rule
# (stop_reason) or the last generation done. One JSON object, written to
# ARCHIVE.stop.json and appended to the ledger as its "stop" line
# (docs/tools/evolve.md "Cost and stop rules"); for a stop rule also a line
# on stderr. Either not written is a warning: the run's status stands.
evolve_stopped() {
	local reason=${stop_reason:-generations} msg=${stop_msg:-"generation $gens is done"} rec
	evolve_spend || exit
	rec=$(jq -cn --arg time "$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)" --arg tool "$prog" --arg reason "$reason" \
		--arg message "$msg" --argjson last "$last" --argjson gens "$gens" --argjson usd "$spend_usd" \
		--argjson tok "$spend_tokens" --argjson n "$spend_calls" --argjson cached "$spend_cached" \
		--argjson saved "$spend_saved" --argjson unpriced "$spend_unpriced" \
		--argjson secs "$(run_secs)" --arg best_id "$best_id" --arg best_gen "$best_gen" \
		--arg best_seed "$best_seed" --arg max_usd "$max_usd" --arg max_tokens "$max_tokens" \
		--arg max_minutes "$max_minutes" --arg target "$target" --arg plateau "$plateau" '
		def num: if . == "" then null else tonumber end;
		{kind: "stop", time: $time, tool: $tool, reason: $reason, message: $message,
		 last_generation: $last, generations: $gens, seconds: $secs,
		 spent_usd: $usd, tokens: $tok, calls: $n, cached_calls: $cached, saved_usd: $saved,
		 unpriced_calls: $unpriced,
		 best: (if $best_id == "" then null
			else {id: $best_id, generation: ($best_gen | num), speedup_vs_seed: ($best_seed | num)} end),
		 limits: {max_usd: ($max_usd | num), max_tokens: ($max_tokens | num), max_minutes: ($max_minutes | num),
			target_speedup: ($target | num), plateau: ($plateau | num)}}')
	printf '%s\n' "$rec" 2>/dev/null >>"$ledger" || echo "$prog: cannot write the ledger $ledger" >&2
	{ printf '%s\n' "$rec" >"$archive.stop.json.tmp" && mv -f "$archive.stop.json.tmp" "$archive.stop.json"; } 2>/dev/null ||
		{ rm -f "$archive.stop.json.tmp"; echo "$prog: cannot write $archive.stop.json" >&2; }
	[ -n "${stop_reason:-}" ] || return 0
	echo "$prog: stopped after generation $last by --${stop_reason//_/-}: $stop_msg; the record: $archive.stop.json" >&2
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
# generation of this task/back end, -1: none), best (the best speedup over
# the seed so far, 1 when there is none: ktime --best) and, for the stop
# rules, the best candidate's best_id, best_gen and best_seed (its
# speedup_vs_seed; each empty when there is none) and best_base (its
# speedup_vs_baseline, 0: none; the race's bar) and best_sizes (the best
# speedup over the seed per benchmark size, a JSON object: ktime
# --best-sizes); exit status 4 (damaged) or 3 when the archive cannot be
# read completely.  best and best_sizes are kept within what ktime takes
# (1e-6..1e9; best-sizes-out-of-range: an archived 2.5e9, timed under load
# before the harness held such sizes back, made every job of the next
# generation exit 3 on ktime's usage error).
evolve_read_state() {
	local s
	last=-1 best=1 best_id="" best_gen="" best_seed="" best_base=0 best_sizes="{}"
	[ -s "$archive" ] || return 0
	s=$(evolve_summary) || return
	IFS=$'\x1f' read -r last best best_id best_gen best_seed best_base best_sizes < <(jq -r '
		def ktime: if . > 1e9 then 1e9 elif . < 1e-6 then 1e-6 else . end;
		[.last_generation,
		(.best.speedup_vs_seed // 1 | if . > 0 then ktime else 1 end),
		(.best.id // ""), (.best.generation // ""), (.best.speedup_vs_seed // ""),
		(.best.speedup_vs_baseline // 0), (.best_sizes // {} | map_values(ktime) | tojson)]
		| map(tostring) | join("\u001f")' <<<"$s")
}

# The highest generation alone, printed (as evolve_read_state).
last_generation() {
	evolve_read_state || return
	echo "$last"
}

# evolve_worst RC...: the highest of a pipe's exit statuses, printed.
evolve_worst() {
	local w=0 r
	for r in "$@"; do [ "$r" -gt "$w" ] && w=$r; done
	echo "$w"
}

# evolve_time_opts [PREFIX]: the generation's ktime options, early rejection
# against the best so far at each size (a size's best may be a kernel made
# for it, far ahead of the best over all sizes: bounding every size by the
# latter stopped every child of 7 generations of an H100 rowsum run once a
# composition held the crown), into the array gen_time (each after PREFIX, e.g.
# --ktime-opt for spread.sh).  None while nothing is timed: the seed is the
# yardstick, not a rival, and two identical c kernels have measured 2x apart
# under load — the seed stopped as slow left no parent (t70 under load).
evolve_time_opts() {
	gen_time=()
	[ "$stop_slower" = 0 ] && return 0
	[ -n "$best_id" ] || return 0
	local o
	for o in --stop-slower="$stop_slower" --best="$best" --best-sizes="$best_sizes"; do gen_time+=(${1:+"$1"} "$o"); done
}

# summary G: one line — generation G's statuses, the best so far and, once
# the ledger holds model calls, the spend; exit status 4 or 3 when the
# archive cannot be read completely, 3 when the ledger cannot.
summary() {
	local s
	s=$(evolve_summary --generation "$1") || return
	evolve_spend || return
	jq -r --argjson usd "$spend_usd" --argjson n "$spend_calls" --argjson cached "$spend_cached" \
		--argjson saved "$spend_saved" --argjson unpriced "$spend_unpriced" '
		def usd: . * 10000 | round / 10000;
		.statuses as $st
		| "generation \(.generation): \([$st | keys[] | "\(.) \($st[.])"] | join(", "))"
		+ (if .best then "; best so far \(.best.id) (generation \(.best.generation)): "
		     + "\(.best.speedup_vs_baseline * 1000 | round / 1000)x vs baseline, "
		     + "\((.best.speedup_vs_seed // 0) * 1000 | round / 1000)x vs seed"
		   else "; nothing timed yet" end)
		+ (if $n > 0 then "; spent \($usd | usd) USD on \($n - $cached) model calls"
		     + (if $unpriced > 0 then " (\($unpriced) without a price)" else "" end)
		     + (if $cached > 0 then ", \($cached) answered from the cache or a replay (\($saved | usd) USD saved)"
		        else "" end)
		   else "" end)' <<<"$s"
}
