#!/usr/bin/env bash
# t39-ledger-stops: cost accounting and the stop rules of the pipelines.
# A scripted model (the cmd provider) selects parents (kselect --strategy
# llm), plans and writes children, every call priced from one table
# (--prices).  The bugs it guards against: selector calls unpriced and
# nowhere in the totals (selector-unpriced), answers from the cache counted
# and priced as spent (cached-counted-as-spent), a killed generation's spend
# lost (killed-spend-lost), and nothing to stop a run on money, tokens,
# time, a target speedup or a plateau (no-stop-rules).  Checked: the ledger
# beside the archive holds exactly the calls the archive charges
# (origin.calls, and each selector call once) with the same totals, which
# are kreport's too; an answer from the cache costs 0 and shows what it
# saved; each stop rule ends a run with exit 0 and its reason on stderr, in
# ARCHIVE.stop.json and as the ledger's last line; a generation killed
# mid-way leaves its calls in the ledger and none in the archive.
. "$(dirname "$0")/lib.sh"
skip_without_bwrap
cd "$T" || exit 1
unset KSCI_PROVIDER KSCI_MODEL KSCI_PRICES KSCI_LEDGER KSCI_TRANSCRIPT KSCI_LLM_CMD KSCI_REPLAY
export KSCI_TASKS="$T/tasks" TDIR="$T"
tiny_task "$KSCI_TASKS/tiny"
sed -i 's|"seed": {"c": "seed.c"},|"seed": {"c": "seed.c"}, "baseline": {"c": "seed.c"},|' "$KSCI_TASKS/tiny/task.json"
printf 'void solve(const float *x, float *y, int n) { for (int i = 0; i < n; i++) y[i] = x[i]; }\n' \
	>"$KSCI_TASKS/tiny/seed.c"
# slowseed: the same task with a seed a few thousand times slower, for --target-speedup
mkdir -p "$KSCI_TASKS/slowseed"
sed 's|"name": "tiny"|"name": "slowseed"|' "$KSCI_TASKS/tiny/task.json" >"$KSCI_TASKS/slowseed/task.json"
printf 'void solve(const float *x, float *y, int n)\n{ for (int i = 0; i < n; i++) { for (volatile int k = 0; k < 3000; k++) ; y[i] = x[i]; } }\n' \
	>"$KSCI_TASKS/slowseed/seed.c"
printf '# the scripted model, USD per million tokens in, out\nscripted 1000 2000\n' >prices

# The writer: one plan; children correct, each its own code, and far slower
# than tiny's seed, or with CHILD=fast a plain copy.  With $TDIR/hang
# present, the first write call of the run hangs instead, once, leaving its
# process group in $TDIR/model.pgid.
cat >model.sh <<'SH'
#!/bin/sh
prompt=$(cat)
case $prompt in
*"# What to do
1. List about"*)
	printf '```json\n{"plans": [{"title": "slow copy", "hypothesis": "h", "rubric": ["r"],'
	printf ' "min_uplift": 1.0, "max_uplift": 1.1, "innovation": 1}]}\n```\n' ;;
*)
	if [ -e "$TDIR/hang" ] && [ ! -e "$TDIR/hung" ]; then
		: >"$TDIR/hung"
		read -r _ _ _ _ pgid _ </proc/$$/stat
		echo "$pgid" >"$TDIR/model.pgid"
		exec sleep 600
	fi
	printf 'Here:\n```c\n/* child %s */\nvoid solve(const float *x, float *y, int n)\n' "$$-$(date +%s%N)"
	if [ "${CHILD:-}" = fast ]; then
		printf '{ for (int i = 0; i < n; i++) y[i] = x[i]; }\n```\n'
	else
		printf '{ for (int i = 0; i < n; i++) { for (volatile int k = 0; k < 3000; k++) ; y[i] = x[i]; } }\n```\n'
	fi ;;
esac
SH
# The selector: the first candidate the prompt lists, as base and reference.
cat >select.sh <<'SH'
#!/bin/sh
id=$(grep -o 'id [0-9a-f]\{16\}' | head -n 1 | cut -c4-)
printf '{"base": "%s", "reference": "%s", "reasoning": "the first listed"}\n' "$id" "$id"
SH
chmod +x model.sh select.sh

run() { # ARCHIVE [evolve options]: two children a generation, selected and written by the scripted model
	local a=$1
	shift
	# --findings none: the calls here are the archive's and the selector's (t39-loop
	# counts the findings' calls too)
	evolve.sh --task tiny --population 2 --budget 0.05 --archive "$a" --stop-slower 0 --max-fix 0 --findings none \
		--strategy llm --kselect-opt --provider --kselect-opt cmd --kselect-opt --cmd --kselect-opt "$T/select.sh" \
		--kselect-opt --model --kselect-opt scripted \
		--provider cmd --model scripted --kgen-opt --cmd --kgen-opt "$T/model.sh" \
		--prices "$T/prices" "$@" >"$a.out" 2>"$a.err"
}
# calls_of ARCHIVE: the calls the archive charges, as one JSON array: every
# record's origin.calls, and the selector's call (strategy.llm, which each
# child of its request carries) once per call_id.
calls_of() {
	gzip -dc "$1" | jq -s '[.[] | (.origin.calls // [])[]]
		+ ([.[] | .origin.strategy.llm // .request.strategy.llm // empty] | unique_by(.call_id))'
}
ledger_calls() { jq -s '[.[] | select(.kind == "call")]' "$1"; }
# sums: [calls, tokens bought, USD] of a JSON array of calls
sums='[length, (map(select((.cached or .replayed) | not) | .tokens_in + .tokens_out) | add // 0),
	(map(.cost_usd // 0) | add // 0)]'
# same A B: two [calls, tokens, usd] alike (money to 1e-9)
same() {
	jq -en --argjson a "$1" --argjson b "$2" '$a[0] == $b[0] and $a[1] == $b[1] and (($a[2] - $b[2]) | fabs) < 1e-9' \
		>/dev/null
}
last_gen() { gzip -dc "$1" | jq -s 'map(.generation) | max'; }
stop_of() { jq -r "$2" "$1.stop.json"; }

# --- a priced run, stopped by --max-usd after the first model generation ---
run "$T/a.gz" --generations 5 --max-usd 0.5
rc=$?
expect_eq "no-stop-rules: --max-usd: exit 0 (a stop is a normal end)" 0 "$rc"
[ "$rc" = 0 ] || sed 's/^/# /' "$T/a.gz.err"
expect_eq "--max-usd: stopped once generation 1 had spent it" "1|max_usd|1" \
	"$(last_gen a.gz)|$(stop_of a.gz .reason)|$(stop_of a.gz .last_generation)"
ok "--max-usd: says so on stderr" grep -q "evolve.sh: stopped after generation 1 by --max-usd: the ledger's spend, .* USD, reached --max-usd 0.5; the record: $T/a.gz.stop.json" a.gz.err
expect_eq "--max-usd: the ledger's last line is the stop record" "$(jq -c . a.gz.stop.json)" "$(tail -n 1 a.gz.ledger.ndjson)"
calls_of a.gz >a.calls
ledger_calls a.gz.ledger.ndjson >a.ledger
expect_eq "the ledger holds exactly the archive's calls (by call_id)" "$(jq -c 'map(.call_id) | sort' a.calls)" \
	"$(jq -c 'map(.call_id) | sort' a.ledger)"
ok "the ledger's totals (calls, tokens bought, USD) are the archive's" \
	same "$(jq -c "$sums" a.calls)" "$(jq -c "$sums" a.ledger)"
ok "origin.usage sums to the same: the records' usage plus the selector calls" same \
	"$(gzip -dc a.gz | jq -s --argjson sel "$(jq '[.[] | select(.stage == "select")]' a.calls)" \
		'[(map(.origin.usage.calls // 0) | add) + ($sel | length),
		  (map((.origin.usage.tokens_in // 0) + (.origin.usage.tokens_out // 0)) | add) + ($sel | map(.tokens_in + .tokens_out) | add),
		  (map(.origin.usage.cost_usd // 0) | add) + ($sel | map(.cost_usd) | add)]')" \
	"$(jq -c "$sums" a.ledger)"
nsel=$(jq '[.[] | select(.stage == "select")] | length' a.ledger)
expect_eq "selector-unpriced: the selector's calls priced, made by kselect, in the ledger and the archive alike" \
	"true|kselect|$nsel" \
	"$(jq '[.[] | select(.stage == "select")] | length > 0 and all(.[]; .cost_usd > 0)' a.ledger)|$(jq -r '[.[] | select(.stage == "select") | .tool] | unique | join(",")' a.ledger)|$(jq '[.[] | select(.stage == "select" and .cost_usd > 0)] | length' a.calls)"
ok "every call was priced (no call without cost_usd)" jq -e 'all(.[]; .cost_usd | type == "number")' a.ledger
ok "the summary line adds the spend" grep -q "^generation 1: .*; spent [0-9.]* USD on [1-9][0-9]* model calls" a.gz.out
# kreport prices by the same rule: its money is the ledger's.
kreport --prices prices a.gz >a.report 2>/dev/null
money=$(awk '/^money \(USD\)/ { print $3; exit }' a.report)
ok "kreport's money is the ledger's ($money)" \
	awk -v a="$money" -v b="$(jq '[.[] | .cost_usd] | add' a.ledger)" 'BEGIN { exit !((a - b) ^ 2 < 1e-8) }'
ok "kreport counts each selector call once ($nsel)" \
	grep -q "^model calls *$(jq length a.ledger) ($nsel by the selector), 0 without a price" a.report

# --- the other rules ---
# Its own caches (max-tokens-answers-from-an-earlier-run): with a.gz's, the
# time cache confirms the seed and gives it a.gz's figures whenever the two
# timings agree, so generation 1's prompts are a.gz's, every answer comes from
# the answer cache, no token is bought and the run goes on to generation 2
# (CI and a run under load).  --confirm-within 1e9 makes every confirmation
# agree: with a shared cache this check fails every time, not now and then.
agree=(--ktime-opt --confirm-within --ktime-opt 1e9)
KSCI_CACHE="$T/cache-c" run "$T/c.gz" --generations 5 --max-tokens 1 "${agree[@]}"
rc=$?
expect_eq "max-tokens-answers-from-an-earlier-run: generation 1 bought its answers (no call from the cache)" 0 \
	"$(stop_of c.gz .cached_calls)"
expect_eq "--max-tokens: exit 0, stopped after generation 1" "0|1|max_tokens" "$rc|$(last_gen c.gz)|$(stop_of c.gz .reason)"
ok "--max-tokens: says so on stderr" grep -q "stopped after generation 1 by --max-tokens: the ledger's [0-9]* tokens bought reached --max-tokens 1" c.gz.err

plain() { # ARCHIVE [evolve options]: mutate (no model: on tiny, no knob, every child a gen_error)
	local a=$1
	shift
	evolve.sh --task tiny --population 1 --budget 0.05 --archive "$a" --stop-slower 0 -q "$@" >"$a.out" 2>"$a.err"
}
# Any run takes more than 6 ms, so this one stops before its last generation.
plain "$T/d.gz" --generations 3 --max-minutes 0.0001
rc=$?
expect_eq "--max-minutes: exit 0, stopped early" "0|max_minutes|true" \
	"$rc|$(stop_of d.gz .reason)|$(stop_of d.gz '.last_generation < 3')"
ok "--max-minutes: says so on stderr" grep -q "by --max-minutes: this run's .* minutes reached --max-minutes 0.0001" d.gz.err
# The children of slowseed are a few thousand times as fast as its seed.
CHILD=fast run "$T/e.gz" --task slowseed --generations 3 --target-speedup 20
rc=$?
expect_eq "--target-speedup 20: exit 0, stopped early, the best at least 20x the seed" "0|target_speedup|true|true" \
	"$rc|$(stop_of e.gz .reason)|$(stop_of e.gz '.last_generation < 3')|$(stop_of e.gz '.best.speedup_vs_seed >= 20')"
ok "--target-speedup: says so on stderr" grep -q "by --target-speedup: the best, .* (generation [01]), is .*x the seed: --target-speedup 20 reached" e.gz.err
plain "$T/f.gz" --generations 4 --plateau 1
rc=$?
expect_eq "--plateau 1: generation 1 made nothing better: stopped after it" "0|1|plateau" \
	"$rc|$(last_gen f.gz)|$(stop_of f.gz .reason)"
ok "--plateau: says so on stderr" grep -q "stopped after generation 1 by --plateau: no improvement on the best, .* (generation 0), in the 1 generations since" f.gz.err
# evolve-parallel.sh shares the rules (pipelines/evolve-lib.sh).
evolve-parallel.sh --task tiny --population 1 --budget 0.05 --archive "$T/p.gz" --stop-slower 0 -q --generations 4 \
	--plateau 1 >p.out 2>p.err
rc=$?
expect_eq "evolve-parallel.sh --plateau 1: stopped after generation 1, its record and ledger line" \
	"0|1|plateau|evolve-parallel.sh|plateau" \
	"$rc|$(last_gen p.gz)|$(stop_of p.gz .reason)|$(stop_of p.gz .tool)|$(tail -n 1 p.gz.ledger.ndjson | jq -r .reason)"

# --- usage errors: nothing run, nothing touched ---
for bad in "--max-usd 1" "--max-usd 1 --prices $T/nonesuch" "--max-tokens 0" "--plateau x" "--max-minutes -1" \
	"--target-speedup 0"; do
	# shellcheck disable=SC2086 # the words of $bad are options
	plain "$T/u.gz" --generations 1 $bad
	rc=$?
	expect_eq "usage: $bad: exit 2, no archive, no ledger" "2|" \
		"$rc|$(for f in u.gz u.gz.ledger.ndjson u.gz.stop.json; do [ -e "$T/$f" ] && echo "$f"; done)"
done
printf 'scripted two 2\n' >badprices
plain "$T/u.gz" --generations 1 --max-usd 1 --prices "$T/badprices"
rc=$?
expect_eq "usage: a price table kreport rejects: exit 2, said by kreport" "2|1" \
	"$rc|$(grep -c 'badprices: line 1:' u.gz.err)"

# --- killed-spend-lost: a generation killed mid-way ---
mkdir -p "$T/tmp"
: >"$T/hang"
# The run in a process group of its own (job control in a subshell, whose
# "Killed" notice goes nowhere), killed as a whole once the model hangs.
# Its own caches, as c.gz's (killed-run-answered-from-an-earlier-run: with
# every confirmation agreeing, generation 1's prompts were a.gz's, every
# answer came from the cache, the model was never asked and nothing hung).
g_opts=(--generations 1 "${agree[@]}")
(
	set -m
	TMPDIR="$T/tmp" KSCI_CACHE="$T/cache-g" run "$T/g.gz" "${g_opts[@]}" &
	echo "$!" >"$T/g.pgid"
	wait
) 2>/dev/null &
outer=$!
for _ in $(seq 3000); do [ -s "$T/model.pgid" ] && [ -s "$T/g.pgid" ] && break; sleep 0.1; done
[ -s "$T/g.pgid" ] && kill -KILL -- "-$(cat "$T/g.pgid")" 2>/dev/null
[ -s "$T/model.pgid" ] && kill -KILL -- "-$(cat "$T/model.pgid")" 2>/dev/null
wait "$outer"
expect_eq "killed: the write call hung and the run was killed in generation 1, which is not archived" "true|0" \
	"$([ -s "$T/model.pgid" ] && echo true)|$(last_gen g.gz)"
ok "killed: the archive is whole" karchive check g.gz
# The calls made after the ledger's "generation 1" line: the killed generation's.
jq -s '[foreach .[] as $l (0; if $l.kind == "generation" and $l.generation == 1 then . + 1 else . end;
	select(. == 1 and $l.kind == "call") | $l)]' g.gz.ledger.ndjson >g.killed
expect_eq "killed: its selector call(s) and its plan call are in the ledger" "true 1" \
	"$(jq '[.[] | select(.stage == "select")] | length > 0' g.killed) $(jq '[.[] | select(.stage == "plan")] | length' g.killed)"
KSCI_CACHE="$T/cache-g" run "$T/g.gz" "${g_opts[@]}"
rc=$?
expect_eq "killed, run again: exit 0, generation 1 archived, done" "0|1|generations" \
	"$rc|$(last_gen g.gz)|$(stop_of g.gz .reason)"
calls_of g.gz >g.calls
ledger_calls g.gz.ledger.ndjson >g.ledger
expect_eq "killed: the ledger holds the archive's calls and the killed generation's, none twice" \
	"$(jq -c 'map(.call_id) | sort' g.ledger)" \
	"$(jq -c --slurpfile k g.killed '(. + $k[0]) | map(.call_id) | sort' g.calls)"
expect_eq "killed: none of the killed generation's calls is in the archive" "[]" \
	"$(jq -c --slurpfile a g.calls '[.[].call_id | select(IN($a[0][].call_id))]' g.killed)"
ok "killed: the ledger's totals are the archive's plus the killed generation's" \
	same "$(jq -c --slurpfile k g.killed "(. + \$k[0]) | $sums" g.calls)" "$(jq -c "$sums" g.ledger)"
# Run again, the generation asks the same plan prompt (same archive): the
# answer comes from the cache.
expect_eq "cached-counted-as-spent: the resumed plan call is answered from the cache at cost 0, its price saved" "true" \
	"$(jq --slurpfile k g.killed '[.[] | select(.stage == "plan")]
		| length == 1 and all(.[]; .cached and .cost_usd == 0 and .saved_usd == ($k[0][] | select(.stage == "plan") | .cost_usd))' g.calls)"
expect_eq "cached-counted-as-spent: its ledger line says the same" "true" \
	"$(jq --slurpfile a g.calls '($a[0][] | select(.stage == "plan") | .call_id) as $id
		| [.[] | select(.call_id == $id)] | length == 1 and all(.[]; .cached and .cost_usd == 0 and .saved_usd > 0)' g.ledger)"
expect_eq "origin.usage of the record charged with it: its tokens apart, cached, saved_usd; not in tokens_in" "true" \
	"$(gzip -dc g.gz | jq -s '[.[] | select(any(.origin.calls[]?; .stage == "plan")) | .origin]
		| length == 1 and all(.[]; .usage.cached >= 1 and .usage.saved_usd > 0
			and .usage.cached_tokens_in == ([.calls[] | select(.cached) | .tokens_in] | add)
			and .usage.tokens_in == ([.calls[] | select(.cached | not) | .tokens_in] | add // 0))')"
kreport --prices prices g.gz >g.report 2>/dev/null
ok "kreport shows the answers not bought and what they saved" \
	grep -q "^model calls .*; [1-9][0-9]* not bought (cache or replay): [1-9][0-9]* tokens in, [0-9]* out, [0-9.]*[1-9][0-9.]* USD saved" g.report
done_testing
