#!/usr/bin/env bash
# t39-selector: the Kernel Scientist's selector (kselect --strategy llm) and
# the bandit's arms, issue #15.  The bugs it guards against:
#   - the selector saw too little: no hypotheses, no failures, no timing
#     uncertainty (the prompt now shows them);
#   - it had no answer cache and no replay key: a resumed generation paid
#     for its selector calls again, and a whole-run replay with --strategy
#     llm failed (both now go through kgen's cache and transcript);
#   - the bandit saw one arm (gen:cmd): plans carried no kind, and kgen
#     ignored strategy.arm (plans now carry a kind, the child origin.kind,
#     the bandit's arm is plan:KIND, and kgen writes a plan of that kind).
# The model is a script (the cmd provider: the prompt on stdin).
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1
unset KSCI_PROVIDER KSCI_MODEL KSCI_TRANSCRIPT KSCI_REPLAY KSCI_PRICES KSCI_LEDGER KSCI_LLM_CMD

# The model: a selector prompt gets the first two shortlisted ids (base,
# reference); a plan prompt two plans of different kinds (four with
# PLANS=4); a write prompt the softmax seed with a comment that makes each
# child distinct.  Every call is counted in calls.log by kind.
cat >model.sh <<SH
#!/bin/sh
prompt=\$(cat)
n=\$((\$(cat $T/n 2>/dev/null || echo 0) + 1))
echo "\$n" >$T/n
case \$prompt in
*"You choose parents"*)
	echo select >>$T/calls.log
	printf '%s\n' "\$prompt" >$T/select-prompt.\$n.txt
	ids=\$(printf '%s\n' "\$prompt" | awk '/fastest candidates:/ { on = 1; next } on && /^\$/ { exit } on && /^- id / { print \$3 }')
	set -- \$ids
	printf 'Mine: {"base": "%s", "reference": "%s", "reasoning": "the fastest first (call %s)"}\n' "\$1" "\${2:-none}" "\$n" ;;
*"# What to do
1. List about"*)
	echo plan >>$T/calls.log
	printf '\`\`\`json\n{"plans": ['
	printf '{"title": "tile rows", "hypothesis": "rows stay in cache", "kind": "memory", "rubric": ["r"], "min_uplift": 1.0, "max_uplift": 1.5, "innovation": 7},'
	printf '{"title": "one reciprocal", "hypothesis": "one divide per row", "kind": "Compute", "rubric": ["r"], "min_uplift": 1.2, "max_uplift": 1.4, "innovation": 2}'
	if [ "\${PLANS:-2}" = 4 ]; then
		printf ',{"title": "one pass", "hypothesis": "max and sum together", "kind": "Fusion", "rubric": ["r"], "min_uplift": 0.9, "max_uplift": 1.01, "innovation": 1}'
		printf ',{"title": "mystery", "hypothesis": "who knows", "kind": "weird", "rubric": ["r"], "min_uplift": 0.5, "max_uplift": 1.0, "innovation": 0}'
	fi
	printf ']}\n\`\`\`\n' ;;
*)
	echo write >>$T/calls.log
	printf 'Here:\n\`\`\`c\n'
	cat "$KSCI_TASKS/softmax/seed.c"
	printf '// variant %s\n\`\`\`\n' "\$n" ;;
esac
SH
chmod +x model.sh
calls() { grep -c "^$1\$" "$T/calls.log" 2>/dev/null || echo 0; }

# --- what the selector sees -------------------------------------------------
# rec ID STATUS GEN PARENT ORIGIN-JSON [EXTRA-JSON]: one record of task mm.
rec() {
	jq -cn --arg id "$1" --arg st "$2" --argjson g "$3" --arg par "$4" --argjson o "$5" --argjson x "${6:-{\}}" '
		{id: $id, task: "mm", backend: "c", generation: $g, status: $st,
		 parents: (if $par == "" then [] else [$par] end), source: ("/* " + $id + " */ void solve(void) {}\n"),
		 origin: $o} + $x'
}
# timed SPEEDUP-VS-SEED CAND-MEDIAN CAND-SEM: a time object, one size, the seed at 100 us ± 4.
timed() {
	jq -cn --argjson sp "$1" --argjson m "$2" --argjson s "$3" '
		{time: {ok: true, status: "ok", speedup_vs_baseline: $sp, speedup_vs_seed: $sp,
		 sizes: [{size: {n: 64}, candidate: {median_us: $m, sem_us: $s}, seed: {median_us: 100, sem_us: 4},
		          speedup_vs_seed: $sp, speedup_vs_baseline: $sp}]}}'
}
{
	rec s timed 0 "" '{"generator":"seed"}' "$(timed 1 100 4)"
	rec g timed 1 s '{"generator":"cmd","kind":"memory","hypothesis":"keep rows in registers"}' "$(timed 2 50 1.5)"
	rec x compile_error 2 g '{"generator":"cmd","kind":"parallelism","hypothesis":"split the rows"}' \
		'{"compile":{"ok":false,"status":"error","message":"cc exited 1","log":"x.c: In function solve:\nx.c:9:3: error: tile undeclared\n"}}'
	rec w wrong 2 g '{"generator":"cmd","kind":"precision","hypothesis":"half floats"}' \
		'{"verify":{"ok":false,"status":"wrong","message":"y[3] = 2 but the reference says 1"}}'
} >a.ndjson
sel() { kselect -s llm --provider cmd --cmd "$T/model.sh" -n 2 --seed 3 "$@"; }
sel a.ndjson >sel1.nd 2>sel1.err
expect_eq "llm selector: exit 0, two requests, the model's base and reference" "0 g,s g,s" \
	"$? $(jq -r '.parents | join(",")' sel1.nd | xargs)"
p1=select-prompt.1.txt # the first call's (the model numbers its calls)
ok "the prompt shows each candidate's hypothesis and kind" \
	grep -q '^- id g (generation 1, parent s, kind memory): .*; hypothesis: keep rows in registers' "$p1"
ok "the prompt shows speedups over the seed with their standard error (3% and 4% in quadrature)" \
	grep -q '^- id g .*: 2x the seed ±5%, 2x the baseline;.* size {"n":64}: 50 us ±3% (2x the seed ±5%)' "$p1"
ok "the prompt counts failures by status" grep -q '2 failed (compile_error 1, wrong 1)' "$p1"
ok "the prompt shows a failed experiment's hypothesis and the compiler's error line" \
	grep -q '^- id x (generation 2, parent g, kind parallelism); hypothesis: split the rows -> compile_error: x.c:9:3: error: tile undeclared$' "$p1"
ok "the prompt shows a wrong answer's reason" grep -q '^- id w .* -> wrong: y\[3\] = 2 but the reference says 1$' "$p1"
ok "the prompt shows what the base's children came to" grep -q '^- id g .*; its children: 2 tried, 0 timed, 2 failed' "$p1"
tr="$KSCI_CACHE/llm/transcript.ndjson.gz"
expect_eq "the selector's transcript is kgen's default one, each call with its replay key" \
	"select:mm:3:0 select:mm:3:1" "$(gzip -dc "$tr" | jq -r .replay_key | xargs)"
expect_eq "the request points at its transcript entry" "$tr $tr" "$(jq -r .strategy.llm.exchange.file sel1.nd | xargs)"

# --- a resumed generation pays nothing again ---------------------------------
sel a.ndjson >sel2.nd 2>sel2.err
expect_eq "the same generation again: no new selector call" 2 "$(calls select)"
expect_eq "... answered from the cache, the same parents and reasoning" \
	"true true|$(jq -c '[.parents, .strategy.reasoning]' sel1.nd | xargs)" \
	"$(jq -r .strategy.llm.cached sel2.nd | xargs)|$(jq -c '[.parents, .strategy.reasoning]' sel2.nd | xargs)"
expect_eq "... and the cache hits are in the transcript, under the same keys" "select:mm:3:0 select:mm:3:1" \
	"$(gzip -dc "$tr" | jq -r 'select(.cached == true) | .replay_key' | xargs)"
sel --seed 4 a.ndjson >/dev/null 2>&1
expect_eq "another --seed: each child's seed is its own cache sample, so new calls" 4 "$(calls select)"
sel --no-cache a.ndjson >/dev/null 2>&1
expect_eq "--no-cache: calls again" 6 "$(calls select)"

# --- replay -----------------------------------------------------------------
kselect -s llm --provider replay --replay "$tr" -n 2 --seed 3 a.ndjson >rep.nd 2>rep.err
expect_eq "replay: the recorded choice, no call" "0 6 $(jq -c .parents sel1.nd | xargs)" \
	"$? $(calls select) $(jq -c .parents rep.nd | xargs)"
# Fresh timings (a re-run) change the prompt: the replay key still finds the answer.
jq -c 'if .id == "g" then .time.sizes[0].candidate.median_us = 48 else . end' a.ndjson >b.ndjson
kselect -s llm --provider replay --replay "$tr" -n 2 --seed 3 b.ndjson >rep2.nd 2>rep2.err
expect_eq "replay of a changed prompt: answered by select:TASK:GEN:CHILD" "0 $(jq -c .parents sel1.nd | xargs)" \
	"$? $(jq -c .parents rep2.nd | xargs)"
kselect -s llm --provider replay -n 1 a.ndjson >/dev/null 2>err
expect_eq "replay without a transcript: usage error, kgen's message" \
	"2 kselect: --provider replay needs --replay FILE (or KSCI_REPLAY)" "$? $(cat err)"
kselect -s llm --provider cmd -n 1 a.ndjson >/dev/null 2>err
expect_eq "cmd without a command: usage error" "2 kselect: --provider cmd needs --cmd COMMAND (or KSCI_LLM_CMD)" "$? $(cat err)"
KSCI_TRANSCRIPT="$T/elsewhere.tr.gz" sel --no-cache a.ndjson >/dev/null 2>&1
expect_eq "KSCI_TRANSCRIPT moves the selector's transcript, as kgen's" 2 \
	"$(gzip -dc elsewhere.tr.gz | jq -r .replay_key | grep -c '^select:mm:3:')"

# --- kgen writes a plan of the requested arm ---------------------------------
# req ARM: a request on the softmax seed, child 0, with a bandit arm.
req() {
	jq -cn --rawfile src "$KSCI_TASKS/softmax/seed.c" --arg arm "$1" '
		{status: "selected", task: "softmax", backend: "c", generation: 1, parents: ["s0"],
		 base: {id: "s0", task: "softmax", backend: "c", status: "timed", source: $src},
		 inspirations: [], child: 0,
		 strategy: ({name: "bandit", seed: 5} + (if $arm == "" then {} else {arm: $arm} end))}'
}
gen() { # ARM [kgen options]: the child's origin.kind and plan.kept_for
	local arm=$1
	shift
	req "$arm" | kgen --provider cmd --cmd "$T/model.sh" --children 1 --no-cache "$@" 2>>kgen.err |
		jq -r '"\(.origin.kind) \(.origin.plan.kind) \(.origin.plan.kept_for)"'
}
expect_eq "no arm: child 0 writes the most innovative plan, its kind on origin.kind and origin.plan" \
	"memory memory innovation" "$(gen "")"
expect_eq "arm plan:compute: the kept plan of that kind (the model's \"Compute\", lower-cased)" \
	"compute compute max_uplift" "$(gen plan:compute)"
export PLANS=4
expect_eq "arm plan:fusion: a kept plan of that kind" "fusion fusion min_uplift" "$(gen plan:fusion)"
expect_eq "arm plan:other: a kind none of the three kept has is kept too (\"weird\" is other)" \
	"other other arm" "$(gen plan:other)"
expect_eq "arm plan:tuning, planned by none: the usual rule" "memory memory innovation" "$(gen plan:tuning)"
expect_eq "a knob arm names no kind: the usual rule" "memory memory innovation" "$(gen knob:TILE)"
expect_eq "--stage plan: the three kept plans, and the arm's" "innovation max_uplift min_uplift arm" \
	"$(req plan:other | kgen --provider cmd --cmd "$T/model.sh" --no-cache --stage plan 2>>kgen.err |
		jq -r .plan.kept_for | xargs)"
unset PLANS
missing=""
for k in memory compute parallelism algorithm precision fusion tuning other; do
	grep -q "$k" "$ROOT/data/prompts/plan.txt" || missing="$missing $k"
	grep -q "\`$k\`" "$ROOT/docs/tools/kgen.md" || missing="$missing doc:$k"
done
expect_eq "plan.txt gives the model every kind kgen keeps, and kgen.md documents them" "" "$missing"

# --- a whole evolve.sh --strategy llm run, replayed --------------------------
if ! command -v bwrap >/dev/null || ! bwrap --unshare-all --unshare-user --uid 65534 --gid 65534 \
	--ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib --symlink usr/lib64 /lib64 --proc /proc /bin/true 2>/dev/null; then
	t_n=$((t_n + 1))
	echo "ok $t_n # SKIP evolve.sh runs: bubblewrap cannot make its sandbox on this machine"
	done_testing
	exit
fi
# Passes evolve.sh adds to a generation besides the model's children (mutate
# tuning of the timed ones, the findings update) are switched off where the script has them: they
# only cost time here, and the checks below look at the model's children.
passes=()
evolve.sh --help | grep -q -- '--tune N' && passes+=(--tune 0)
evolve.sh --help | grep -q -- '--findings DIR' && passes+=(--findings none) # t39-loop checks the findings
evolve() { # ARCHIVE PROVIDER [evolve options]: the seed and two generations of two children
	local a=$1 p=$2
	shift 2
	# --stop-slower 0: every child timed in full; --max-fix 0: no fix calls
	evolve.sh --task softmax --generations 2 --population 2 --budget 0.05 --archive "$a" -q --stop-slower 0 \
		--max-fix 0 "${passes[@]}" --strategy llm --provider "$p" --kselect-opt --provider --kselect-opt "$p" \
		"$@" 2>"$a.err"
}
model_children() { gzip -dc "$1" | jq -c 'select(.generation > 0 and .origin.generator != "mutate")'; }
rm -f calls.log
KSCI_TRANSCRIPT="$T/run.tr.gz" evolve "$T/run.gz" cmd --kgen-opt --cmd --kgen-opt "$T/model.sh" \
	--kselect-opt --cmd --kselect-opt "$T/model.sh"
rc=$?
expect_eq "evolve.sh --strategy llm with a scripted model: exit 0" 0 "$rc"
[ "$rc" = 0 ] || sed 's/^/# /' "$T/run.gz.err"
expect_eq "the run asked the selector once per request" \
	"$(model_children run.gz | jq -c '[.generation, .child]' | sort -u | wc -l)" "$(calls select)"
expect_eq "the selector's and kgen's calls are in one transcript" "plan select write" \
	"$(gzip -dc run.tr.gz | jq -r '.replay_key | split(":")[0] | sub("\\.txt$"; "")' | sort -u | xargs)"
view='select(.generation > 0) | [.generation, .child, .id, .parents, .status, .origin.kind, .origin.strategy.reasoning] | tostring'
gzip -dc run.gz | jq -r "$view" | sort >run.view
expect_eq "four model children, timed, of two kinds" "4 compute memory|timed" \
	"$(model_children run.gz | wc -l) $(model_children run.gz | jq -r .origin.kind | sort -u | xargs)|$(model_children run.gz | jq -r .status | sort -u | xargs)"
before=$(calls select)/$(calls plan)/$(calls write)
evolve "$T/replay.gz" replay --kgen-opt --replay --kgen-opt "$T/run.tr.gz" \
	--kselect-opt --replay --kselect-opt "$T/run.tr.gz"
rc=$?
expect_eq "the whole run replays from its transcript, selector included: exit 0" 0 "$rc"
[ "$rc" = 0 ] || sed 's/^/# /' "$T/replay.gz.err"
expect_eq "replay: the same archive (ids, parents, statuses, kinds, the selector's reasoning)" \
	"$(cat run.view)" "$(gzip -dc replay.gz | jq -r "$view" | sort)"
expect_eq "replay: no call reached the model" "$before" "$(calls select)/$(calls plan)/$(calls write)"

# --- the bandit sees the kinds as arms ---------------------------------------
{ gzip -dc run.gz | jq -c 'select(.generation == 0)'; model_children run.gz; } >model.ndjson
kselect -s bandit --task softmax -n 2 --seed 1 model.ndjson >bandit.nd 2>bandit.err
expect_eq "bandit: one arm per kind of plan the children followed (not one gen:cmd arm)" "2 2" \
	"$(jq -r .strategy.arms bandit.nd | xargs)"
expect_eq "bandit: the arms are plan:KIND" "ok" \
	"$(jq -r .strategy.arm bandit.nd | grep -qvE '^plan:(memory|compute)$' && echo bad || echo ok)"
done_testing
