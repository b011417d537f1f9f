#!/usr/bin/env bash
# t30-kgen-llm: kgen's model providers against the mock server in
# tests/mock/llm_server.py (127.0.0.1 only): plan/write/fix, every failure
# mode ending as a clear record status, cache, transcript, replay, cmd.
. "$(dirname "$0")/lib.sh"

start_mock_llm
# These checks are about one child per request; a model provider's default,
# one per kept plan, is t38's.
kgen() { command kgen --children 1 "$@"; }
export KSCI_PROMPTS="$ROOT/data/prompts" KSCI_KNOWLEDGE="$ROOT/data/knowledge"
export KSCI_TASKS="$T/tasks"
tiny_task "$KSCI_TASKS/tiny"
printf '#define TILE 32 // ktune: 8 16 32 64\nvoid solve(const float *x, float *y, int n) { for (int i = 0; i < n; i++) y[i] = x[i]; }\n' \
	>"$KSCI_TASKS/tiny/seed.c"
echo '{"status":"selected","task":"tiny","backend":"c","generation":0,"parents":[],"base":null,"strategy":{"name":"seed"}}' |
	kgen >"$T/seed.nd"
jq -c '{status:"selected",task,backend,generation:1,parents:[.id],base:(.+{status:"timed",time:{speedup_vs_seed:1,sizes:[]}}),inspirations:[],strategy:{name:"best"},child:0}' \
	"$T/seed.nd" >"$T/req.nd"
sid=$(jq -r .id "$T/seed.nd")
nreq() { [ -f "$T/server.log" ] && wc -l <"$T/server.log" || echo 0; }
# gen MODEL [options]: one request through kgen with the openai provider; prints "status reason".
gen() {
	local m=$1
	shift
	kgen --provider openai --model "$m" --cache "$T/c-$m" --transcript "$T/tr.gz" "$@" <"$T/req.nd" >"$T/out.nd" 2>"$T/err"
	jq -r '"\(.status) \(.gen.status // "-")"' "$T/out.nd" | sort -u | tr '\n' ' ' | sed 's/ $//'
}

# --- the working path: plan then write ---
r=$(gen ok --prices <(echo 'ok 2 10'))
expect_eq "openai ok: one generated child" "generated -" "$r"
expect_eq "openai ok: exit 0" 0 "$(kgen --provider openai --model ok --cache "$T/c-ok" <"$T/req.nd" >/dev/null 2>&1; echo $?)"
expect_eq "openai ok: origin names provider, stage, model, parent" "openai write ok $sid 1" \
	"$(jq -r '"\(.origin.generator) \(.origin.stage) \(.origin.model) \(.parents[0]) \(.generation)"' "$T/out.nd")"
expect_eq "openai ok: plan kept for innovation is the first child's, with its hypothesis" "fuse passes innovation one pass saves a read" \
	"$(jq -r '"\(.origin.plan.title) \(.origin.plan.kept_for) \(.origin.hypothesis)"' "$T/out.nd")"
expect_eq "openai ok: two calls charged (plan + write), tokens counted, cost priced" "2 plan write true true" \
	"$(jq -r '"\(.origin.usage.calls) \([.origin.calls[].stage]|join(" ")) \(.origin.usage.tokens_in > 0) \(.origin.usage.cost_usd > 0)"' "$T/out.nd")"
expect_eq "openai ok: child source is the extracted code" "// mock improved" \
	"$(jq -r .source "$T/out.nd" | grep -o '// mock improved')"
expect_eq "openai ok: id matches source" "$( (printf 'ksci-v1\0tiny\0c\0'; jq -j .source "$T/out.nd") | sha256sum | cut -c1-16)" \
	"$(jq -r .id "$T/out.nd")"
expect_eq "openai ok: request carried Bearer key, max_tokens, system+user messages" "Bearer test-key 4096 system,user" \
	"$(head -1 "$T/server.log" | jq -r '"\(.headers.Authorization) \(.body.max_tokens) \([.body.messages[].role]|join(","))"')"
ok "openai ok: the prompt holds the knowledge base and the notebook" \
	grep -q 'Lab notebook' <(head -1 "$T/server.log" | jq -r '.body.messages[1].content')

# The lab notebook comes from --archive: a record with a hypothesis is one
# line of the prompt, with its status and failure; one without is not.
{
	jq -c '. + {id:"nb1", status:"wrong", origin:{hypothesis:"unroll the inner loop"}, verify:{message:"y[3] = 2, want 1"}}' "$T/seed.nd"
	jq -c '. + {id:"nb2", status:"timed", origin:{generator:"mutate", note:"not a hypothesis"}}' "$T/seed.nd"
} | gzip >"$T/nb.gz"
: >"$T/server.log"
r=$(gen ok --archive "$T/nb.gz")
expect_eq "notebook: the child is made" "generated -" "$r"
expect_eq "notebook: the plan prompt lists the archived hypothesis with its outcome" \
	"- nb1 (child of -) unroll the inner loop -> wrong: y[3] = 2, want 1" \
	"$(head -1 "$T/server.log" | jq -r '.body.messages[1].content' | grep -F 'unroll the inner loop')"
expect_eq "notebook: a record without a hypothesis is not in it" 0 \
	"$(head -1 "$T/server.log" | jq -r '.body.messages[1].content' | grep -c 'not a hypothesis')"

# The exchange pointer leads to the exact prompt and response.
check_exchange() {
	python3 - "$T/out.nd" <<'EOF'
import gzip, hashlib, json, sys, zlib
r = json.loads(open(sys.argv[1]).readline())
x = r["origin"]["exchange"]
raw = open(x["file"], "rb").read()[x["offset"]:]
d = zlib.decompressobj(31)
line = d.decompress(raw)
assert hashlib.sha256(line).hexdigest() == x["sha"], "sha"
e = json.loads(line)
assert "mock improved" in e["response"]["choices"][0], "response"
assert "# Base kernel" in e["prompt"], "prompt"
assert e["model"] == "ok" and e["prompt_hash"] == r["origin"]["calls"][1]["prompt_hash"]
EOF
}
ok "transcript: origin.exchange points at the exact prompt/response (offset, sha)" check_exchange

# --- cache: the same request again costs no call ---
before=$(nreq)
gen ok >/dev/null
expect_eq "cache: no new request" "$before" "$(nreq)"
expect_eq "cache: calls marked cached, same child" "true true" \
	"$(jq -r '"\(.origin.calls[0].cached) \(.origin.calls[1].cached)"' "$T/out.nd")"
gen ok --no-cache >/dev/null
expect_eq "--no-cache: calls again" $((before + 2)) "$(nreq)"

# --- children: the three kept plans side by side ---
r=$(gen ok --children 3)
expect_eq "children 3: one per kept plan" "innovation max_uplift min_uplift" \
	"$(jq -r .origin.plan.kept_for "$T/out.nd" | tr '\n' ' ' | sed 's/ $//')"

# --- plan records, then write ---
kgen --provider openai --model ok --cache "$T/c-ok" --stage plan <"$T/req.nd" >"$T/plans.nd"
expect_eq "stage plan: three plan requests" "3 selected" "$(wc -l <"$T/plans.nd") $(jq -r .status "$T/plans.nd" | sort -u)"
kgen --provider openai --model ok --cache "$T/c-ok" --stage write <"$T/plans.nd" >"$T/w.nd"
expect_eq "stage write: a child per plan" "3 generated" "$(wc -l <"$T/w.nd") $(jq -r .status "$T/w.nd" | sort -u)"
kgen --provider openai --model nocode --cache "$T/c-nc" --stage write <"$T/plans.nd" >"$T/nc.nd"
expect_eq "200 with no code: gen_error no_code, request kept" "gen_error no_code true" \
	"$(jq -r '"\(.status) \(.gen.status) \(.request.plan != null)"' "$T/nc.nd" | sort -u)"
expect_eq "no plan JSON: gen_error bad_plan" "gen_error bad_plan" "$(gen nocode)"

# --- edits ---
expect_eq "SEARCH/REPLACE answer: generated" "generated -" "$(gen edits)"
expect_eq "SEARCH/REPLACE answer: applied as edits" "edits" "$(jq -r .origin.extracted "$T/out.nd")"

# --- failure modes, each a clear status ---
s=$(date +%s.%N)
expect_eq "slow answer + --timeout 1: gen_error timeout" "gen_error timeout" "$(gen slow --timeout 1 --retries 0)"
ok "slow answer: gave up in time" awk -v s="$s" -v e="$(date +%s.%N)" 'BEGIN { exit !(e - s < 2.9) }'
expect_eq "timeout: exit 0 (a gen_error is a result)" 0 "$(gen slow --timeout 0.5 --retries 0 >/dev/null; jq -e . "$T/out.nd" >/dev/null; echo $?)"
s=$(date +%s.%N)
expect_eq "429 with Retry-After: retried, then generated" "generated -" "$(gen r429-once)"
ok "429: waited Retry-After (>= 1 s)" awk -v s="$s" -v e="$(date +%s.%N)" 'BEGIN { exit !(e - s >= 1) }'
expect_eq "429: two attempts recorded on the plan call" 2 "$(jq -r '.origin.calls[0].attempts' "$T/out.nd")"
before=$(nreq)
expect_eq "429 always: gen_error rate_limited" "gen_error rate_limited" "$(gen r429 --retries 2 --backoff 0.01)"
expect_eq "429 always: 1 + 2 retries" $((before + 3)) "$(nreq)"
expect_eq "500 always: gen_error server_error" "gen_error server_error" "$(gen e500 --retries 1 --backoff 0.01)"
expect_eq "500 once: retried, generated" "generated -" "$(gen e500-once --backoff 0.01)"
expect_eq "truncated body: gen_error truncated" "gen_error truncated" "$(gen truncated --retries 0)"
expect_eq "refusal (openai refusal field): gen_error refusal" "gen_error refusal" "$(gen refusal)"
expect_eq "cut at the token limit: gen_error truncated" "gen_error truncated" "$(gen length --stage write <"$T/plans.nd" >/dev/null;
	kgen --provider openai --model length --cache "$T/c-len" --stage write <"$T/plans.nd" | jq -r '"\(.status) \(.gen.status)"' | sort -u)"
before=$(nreq)
r=$(OPENAI_API_KEY=wrong gen ok --cache "$T/c-auth")
expect_eq "auth error: gen_error auth" "gen_error auth" "$r"
expect_eq "auth error: not retried" $((before + 1)) "$(nreq)"
ok "auth error: message says authentication" grep -q 'authentication' <(jq -r .gen.message "$T/out.nd")
before=$(nreq)
expect_eq "quota error: gen_error quota" "gen_error quota" "$(gen quota)"
expect_eq "quota error: not retried" $((before + 1)) "$(nreq)"
ok "quota error: message says quota" grep -q 'quota' <(jq -r .gen.message "$T/out.nd")
expect_eq "no API key for the public endpoint: auth, no call" "gen_error auth" \
	"$(env -u OPENAI_API_KEY -u OPENAI_BASE_URL kgen --provider openai --model x --cache "$T/c-nokey" <"$T/req.nd" | jq -r '"\(.status) \(.gen.status)"')"
before=$(nreq)
expect_eq "max_tokens refused: switches to max_completion_tokens" "generated -" "$(gen maxtok)"
expect_eq "max_tokens refused: second body used max_completion_tokens" "null 4096" \
	"$(tail -n +$((before + 2)) "$T/server.log" | head -1 | jq -r '"\(.body.max_tokens) \(.body.max_completion_tokens)"')"
expect_eq "o-series models get max_completion_tokens, temperature and seed sent" "4096 0.5 7" \
	"$(kgen --provider openai --model o3-mini --cache "$T/c-o3" --temperature 0.5 --seed 7 <"$T/req.nd" >/dev/null 2>&1; tail -1 "$T/server.log" | jq -r '"\(.body.max_completion_tokens) \(.body.temperature) \(.body.seed)"')"

# --- anthropic ---
ant() { kgen --provider anthropic --model "$1" --cache "$T/a-$1" --retries 1 --backoff 0.01 <"$T/req.nd" | jq -r '"\(.status) \(.gen.status // "-")"' | sort -u; }
expect_eq "anthropic ok: generated" "generated -" "$(ant ok)"
expect_eq "anthropic: x-api-key, anthropic-version, /v1/messages, system field" "test-key 2023-06-01 /v1/messages true" \
	"$(tail -1 "$T/server.log" | jq -r '"\(.headers["x-api-key"]) \(.headers["anthropic-version"]) \(.path) \(.body.system != null)"')"
expect_eq "anthropic refusal: gen_error refusal" "gen_error refusal" "$(ant refusal)"
expect_eq "anthropic 529: gen_error overloaded" "gen_error overloaded" "$(ant e529)"
expect_eq "anthropic auth: gen_error auth" "gen_error auth" "$(ANTHROPIC_API_KEY=bad ant ok2)"

# --- fix ---
jq -c '.status="compile_error" | .compile={ok:false,status:"error",log:"seed.c:2: error: expected ; before }"} | .origin={generator:"openai"}' \
	"$T/seed.nd" >"$T/failed.nd"
kgen --provider openai --model ok --cache "$T/c-ok" --stage fix <"$T/failed.nd" >"$T/fix.nd"
expect_eq "fix: failed record passes through, then a fixed child" "compile_error generated" \
	"$(jq -r .status "$T/fix.nd" | tr '\n' ' ' | sed 's/ $//')"
expect_eq "fix: child records the attempt and the fixed parent" "fix 1 $sid" \
	"$(tail -1 "$T/fix.nd" | jq -r '"\(.origin.stage) \(.origin.fix_attempt) \(.origin.fixes)"')"
ok "fix: the prompt carried the compiler log" grep -q 'expected ; before' <(tail -1 "$T/server.log" | jq -r '.body.messages[1].content')
tail -1 "$T/fix.nd" | jq -c '.status="wrong" | .verify={ok:false,status:"wrong",message:"y[3] differs"}' |
	kgen --provider openai --model ok --cache "$T/c-ok" --stage fix --max-fix 1 >"$T/fix2.nd"
expect_eq "fix: bound per lineage reached, failure passes through alone" "wrong" "$(jq -r .status "$T/fix2.nd")"
jq -c '{status:"selected",task,backend,generation:1,parents:[.id],base:.,strategy:{name:"fix"}}' "$T/failed.nd" |
	kgen --provider openai --model ok --cache "$T/c-ok" >"$T/fix3.nd"
expect_eq "fix: a request whose base failed is fixed in auto stage" "generated fix" \
	"$(jq -r '"\(.status) \(.origin.stage)"' "$T/fix3.nd")"

# --- cmd and replay ---
cat >"$T/model.sh" <<'EOF'
#!/bin/sh
in=$(cat)
case "$in" in
*"List about"*) printf '```json\n{"plans":[{"title":"t","hypothesis":"h","min_uplift":1,"max_uplift":2,"innovation":3}]}\n```\n' ;;
*) printf 'ok\n```c\n#define TILE 64 // ktune: 8 16 32 64\nvoid solve(const float *x, float *y, int n) { for (int i = 0; i < n; i++) y[i] = x[i]; }\n```\n' ;;
esac
EOF
chmod +x "$T/model.sh"
expect_eq "cmd provider: generated with hypothesis" "generated h cmd" \
	"$(kgen --provider cmd --cmd "$T/model.sh" --cache "$T/c-cmd" <"$T/req.nd" | jq -r '"\(.status) \(.origin.hypothesis) \(.origin.generator)"')"
expect_eq "cmd provider failing: gen_error cmd_failed" "gen_error cmd_failed" \
	"$(kgen --provider cmd --cmd 'exit 3' --cache "$T/c-cmd2" <"$T/req.nd" | jq -r '"\(.status) \(.gen.status)"')"
expect_eq "cmd provider hanging: gen_error timeout" "gen_error timeout" \
	"$(kgen --provider cmd --cmd 'sleep 5' --timeout 0.5 --cache "$T/c-cmd3" <"$T/req.nd" | jq -r '"\(.status) \(.gen.status)"')"
rm -f "$T/tr1.gz"
# answer-cache-shared-across-providers: the same model name and prompt at two
# providers, one cache: the second asks its own (t35 once found the openai
# run's answer, and its transcript, in the anthropic run's child).
kgen --provider openai --model ok --cache "$T/c-xp" --transcript "$T/xp-o.gz" <"$T/req.nd" >"$T/xp-o.nd" 2>/dev/null
kgen --provider anthropic --model ok --cache "$T/c-xp" --transcript "$T/xp-a.gz" <"$T/req.nd" >"$T/xp-a.nd" 2>/dev/null
expect_eq "answer-cache-shared-across-providers: the second provider's calls are not cached" "false" \
	"$(jq -r '.origin.calls[].cached' "$T/xp-a.nd" | sort -u | xargs)"
ok "and its child points at its own transcript" jq -e '.origin.exchange.file | test("xp-a.gz")' "$T/xp-a.nd"
kgen --provider openai --model ok --cache "$T/c-r1" --transcript "$T/tr1.gz" <"$T/req.nd" >"$T/orig.nd"
before=$(nreq)
kgen --provider replay --replay "$T/tr1.gz" --model ok --cache "$T/c-r2" <"$T/req.nd" >"$T/rep.nd"
expect_eq "replay: same child as the recorded run, no request" "$(jq -r .id "$T/orig.nd") $before" "$(jq -r .id "$T/rep.nd") $(nreq)"
expect_eq "replay with fresh timings in the prompt: answered by stage, parent and child" "generated" \
	"$(jq -c '.base.time.sizes = [{"size": {"n": 1}, "candidate": {"median_us": 123.4}}]' "$T/req.nd" | kgen --provider replay --replay "$T/tr1.gz" --cache "$T/c-r4" | jq -r .status | sort -u | xargs)"
expect_eq "replay miss: gen_error replay_miss" "gen_error replay_miss" \
	"$(jq -c '.base.source = "// other\n" + .base.source | .base.id = "0000000000000000"' "$T/req.nd" | kgen --provider replay --replay "$T/tr1.gz" --cache "$T/c-r3" | jq -r '"\(.status) \(.gen.status)"')"

# --- usage ---
kgen --provider nosuch </dev/null 2>"$T/err"
expect_eq "unknown provider: exit 2" 2 "$?"
expect_eq "unknown provider: named with its option" 'kgen: --provider: unknown provider "nosuch"' "$(head -n 1 "$T/err")"
# env-switch-named-as-option: a bad KSCI_PROVIDER or KSCI_STAGE was reported
# as if --provider or --stage had been given; the message names the variable.
KSCI_PROVIDER=nosuch kgen </dev/null 2>"$T/err"
expect_eq "KSCI_PROVIDER unknown: exit 2, the variable named" '2 kgen: KSCI_PROVIDER: unknown provider "nosuch"' "$? $(head -n 1 "$T/err")"
KSCI_STAGE=draft kgen </dev/null 2>"$T/err"
expect_eq "KSCI_STAGE bad: exit 2, the variable named" '2 kgen: KSCI_STAGE: "draft" is not auto, plan, write, fix or findings' "$? $(head -n 1 "$T/err")"
KSCI_STAGE=draft kgen --stage bogus </dev/null 2>"$T/err"
expect_eq "--stage given: the option named" 'kgen: --stage: "bogus" is not auto, plan, write, fix or findings' "$(head -n 1 "$T/err")"
kgen --provider cmd </dev/null 2>/dev/null
expect_eq "cmd without --cmd: exit 2" 2 "$?"
KSCI_PROVIDER=cmd KSCI_LLM_CMD="$T/model.sh" kgen --cache "$T/c-env" <"$T/req.nd" >"$T/env.nd"
expect_eq "provider from KSCI_PROVIDER" cmd "$(jq -r .origin.generator "$T/env.nd")"

done_testing
