#!/usr/bin/env bash
# t31-redact: a password or key in the provider's base URL, and a key the
# provider quotes back in its error body, never reach the record, kgen's
# stderr, or any file the run writes (transcript, cache); the host does, so
# the message still says where the call went.  lib/http.c http_redact.
. "$(dirname "$0")/lib.sh"

start_mock_llm
export KSCI_PROMPTS="$ROOT/data/prompts" KSCI_KNOWLEDGE="$ROOT/data/knowledge"
export KSCI_TASKS="$T/tasks"
tiny_task "$KSCI_TASKS/tiny"
printf 'void solve(const float *x, float *y, int n) { for (int i = 0; i < n; i++) y[i] = x[i]; }\n' >"$KSCI_TASKS/tiny/seed.c"
echo '{"status":"selected","task":"tiny","backend":"c","generation":0,"parents":[],"base":null,"strategy":{"name":"seed"}}' |
	kgen >"$T/seed.nd"
jq -c '{status:"selected",task,backend,generation:1,parents:[.id],base:(.+{status:"timed",time:{speedup_vs_seed:1,sizes:[]}}),inspirations:[],strategy:{name:"best"},child:0}' \
	"$T/seed.nd" >"$T/req.nd"

pw=hunter2-pw-0123456789
qs=qsecret-0123456789
key=sk-proj-LEAKME0123456789abcdef
plain=plainkey-LEAKME-0123456789
# A port with nothing listening on it.
dead=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')

# gen NAME KEY [kgen options]: one openai request, everything it writes in $T/NAME/.
gen() {
	local d=$T/$1 k=$2
	shift 2
	mkdir -p "$d"
	OPENAI_API_KEY=$k kgen --provider openai --model ok --retries 0 --cache "$d/cache" --transcript "$d/tr.gz" "$@" \
		<"$T/req.nd" >"$d/out.nd" 2>"$d/err"
}
# leaks DIR SECRET...: the files under DIR (gzip members read through) holding any SECRET.
leaks() {
	local d=$1 f s
	shift
	find "$d" -type f | sort | while read -r f; do
		for s in "$@"; do gzip -dcf "$f" | grep -qF -- "$s" && echo "$f holds $s"; done
	done
	return 0
}

# --- nothing listening: curl's error message names the URL ---
OPENAI_BASE_URL="http://user:$pw@127.0.0.1:$dead/v1?api_key=$qs" gen dead "$key"
expect_eq "dead endpoint: gen_error connect" "gen_error connect" "$(jq -r '"\(.status) \(.gen.status)"' "$T/dead/out.nd")"
msg=$(jq -r .gen.message "$T/dead/out.nd")
# The check that can fail: the message does carry the URL, host and all.
ok "dead endpoint: the message names the host, port and path" grep -qF "@127.0.0.1:$dead/v1?api_key=" <<<"$msg"
ok "dead endpoint: the userinfo and the key parameter read ***" grep -qF "http://***@127.0.0.1:$dead/v1?api_key=***" <<<"$msg"
ok "dead endpoint: the transcript was written" test -s "$T/dead/tr.gz"
expect_eq "dead endpoint: no secret in the record, stderr, transcript or cache" "" "$(leaks "$T/dead" "$pw" "$qs" user:)"

# --- the mock answers 401 and quotes the key back (as OpenAI does) ---
gen auth "$key" --base-url "http://user:$pw@127.0.0.1:$port/v1?api_key=$qs"
expect_eq "401: gen_error auth" "gen_error auth" "$(jq -r '"\(.status) \(.gen.status)"' "$T/auth/out.nd")"
ok "401: the server did get the key (so it could have been quoted)" grep -qF "Bearer $key" "$T/server.log"
ok "401: the quoted key keeps its first 4 characters" \
	grep -qF "Incorrect API key provided: sk-p***." <(jq -r .gen.message "$T/auth/out.nd")
expect_eq "401: no secret in the record, stderr, transcript or cache" "" "$(leaks "$T/auth" "$pw" "$qs" "$key" LEAKME)"

# A key that does not look like sk-...: the configured key is masked wherever it shows.
gen plain "$plain"
ok "401, key not sk-...: quoted as its first 4 characters" \
	grep -qF "Incorrect API key provided: plai***." <(jq -r .gen.message "$T/plain/out.nd")
expect_eq "401, key not sk-...: no secret in the record, stderr, transcript or cache" "" "$(leaks "$T/plain" "$plain" LEAKME)"

# kgen puts a failed call's message in the record; kselect -s llm says it
# on stderr: the same message, redacted the same way.
{
	jq -c '. + {status: "timed", time: {ok: true, status: "ok", speedup_vs_baseline: 1.5, sizes: []}}' "$T/seed.nd"
	jq -c '. + {id: "b", status: "timed", time: {ok: true, status: "ok", speedup_vs_baseline: 1.2, sizes: []}}' "$T/seed.nd"
} >"$T/archive.nd"
mkdir -p "$T/sel"
OPENAI_API_KEY=$key kselect -s llm --provider openai --model ok -n 1 --timeout 1.5 \
	--base-url "http://user:$pw@127.0.0.1:$dead/v1?api_key=$qs" "$T/archive.nd" >"$T/sel/out" 2>"$T/sel/err.dead"
OPENAI_API_KEY=$key kselect -s llm --provider openai --model ok -n 1 \
	--base-url "http://user:$pw@127.0.0.1:$port/v1?api_key=$qs" "$T/archive.nd" >>"$T/sel/out" 2>"$T/sel/err.auth"
ok "kselect, dead endpoint: stderr names the host" grep -qF "http://***@127.0.0.1:$dead/v1?api_key=***" "$T/sel/err.dead"
ok "kselect, 401: stderr quotes the key masked" grep -qF "Incorrect API key provided: sk-p***." "$T/sel/err.auth"
expect_eq "kselect: no secret on stderr or stdout" "" "$(leaks "$T/sel" "$pw" "$qs" "$key" LEAKME)"

done_testing
