#!/usr/bin/env bash
# Bug (provider-failures-ignored): evolve.sh went on through authentication
# and quota failures (every generation gen_error, exit 0, nothing on stderr).
# Now the provider failure policy stops the run at the first auth or quota
# failure, and after --max-provider-failures consecutive failures of any kind:
# a message on stderr, exit 6, the generations before archived, the one that
# stopped the run not.  The provider is the mock server on 127.0.0.1.
. "$(dirname "$0")/lib.sh"

start_mock_llm

base=$T/base.ndjson.gz
evolve.sh --task softmax --generations 0 --population 1 --budget 0.05 --archive "$base" -q 2>"$T/base.err"
expect_eq "the seed archive is made" "0 1" "$? $(gzip -dc "$base" | wc -l)"

# run NAME SCRIPT [options]: SCRIPT on a copy of the seed archive, openai provider, no retries.
run() {
	local n=$1 s=$2
	shift 2
	cp "$base" "$T/$n.gz"
	timeout 300 "$s" --task softmax --population 2 --generations 3 --budget 0.05 --archive "$T/$n.gz" -q --tune 0 \
		--provider openai --kgen-opt --retries --kgen-opt 0 "$@" >"$T/$n.out" 2>"$T/$n.err"
	echo $? >"$T/$n.rc"
}
gens() { gzip -dc "$T/$1.gz" | jq -r .generation | xargs; }

OPENAI_API_KEY=wrong-key-123 run auth evolve.sh --model ok
expect_eq "provider-failures-ignored: auth: exit 6" 6 "$(cat "$T/auth.rc")"
expect_eq "provider-failures-ignored: auth: the generation is not archived" 0 "$(gens auth)"
ok "provider-failures-ignored: auth: says so" grep -q "evolve.sh: generation 1: stopped by the provider failure policy: an authentication failure (last: auth: " "$T/auth.err"
ok "provider-failures-ignored: auth: the key is not shown" sh -c "! grep -q wrong-key-123 '$T/auth.err'"
ok "provider-failures-ignored: auth: at most one request a child of generation 1 (2)" test \
	"$(grep -c . "$T/server.log")" -le 2

run quota evolve.sh --model quota
expect_eq "provider-failures-ignored: quota: exit 6" 6 "$(cat "$T/quota.rc")"
expect_eq "provider-failures-ignored: quota: the generation is not archived" 0 "$(gens quota)"
ok "provider-failures-ignored: quota: says so" grep -q "stopped by the provider failure policy: a quota failure (last: quota: " "$T/quota.err"

# 500s: one child a generation, two failures allowed: generation 1 (one
# failure) is archived, generation 2 (the second in a row) stops the run.
run e500 evolve.sh --model e500 --population 1 --max-provider-failures 2
expect_eq "provider-failures-ignored: 500s: exit 6" 6 "$(cat "$T/e500.rc")"
expect_eq "provider-failures-ignored: 500s: generation 1 archived, 2 not" "0 1" "$(gens e500)"
ok "provider-failures-ignored: 500s: says so" grep -q "generation 2: stopped by the provider failure policy: 2 consecutive provider failures (last: server_error: " "$T/e500.err"
expect_eq "provider-failures-ignored: 500s: one message line" 1 "$(wc -l <"$T/e500.err")"

# --max-provider-failures 0: no limit on the count (the old behaviour for 500s).
run nolimit evolve.sh --model e500 --population 1 --generations 2 --max-provider-failures 0
expect_eq "provider-failures-ignored: --max-provider-failures 0: runs to the end" "0 0 1 2" \
	"$(cat "$T/nolimit.rc") $(gens nolimit)"
# A child that succeeds resets the count: the first call fails, the rest do not.
run once evolve.sh --model e500-once --generations 1 --max-provider-failures 1
expect_eq "provider-failures-ignored: one failure, then answers: exit 6 at the limit of 1" 6 "$(cat "$T/once.rc")"
run once2 evolve.sh --model e500-b-once --generations 2 --max-provider-failures 2
# (population 2 is one base with a child per kept plan: generation 1 is the
# failed plan call's one record, generation 2 the base's two children)
expect_eq "provider-failures-ignored: one failure, then answers: runs to the end under a limit of 2" "0 0 1 2 2" \
	"$(cat "$T/once2.rc") $(gens once2)"

# evolve-parallel.sh: the policy reads the candidates before they are spread.
run pauth evolve-parallel.sh --model quota
expect_eq "provider-failures-ignored: evolve-parallel.sh, quota: exit 6" 6 "$(cat "$T/pauth.rc")"
expect_eq "provider-failures-ignored: evolve-parallel.sh: not archived" 0 "$(gens pauth)"
ok "provider-failures-ignored: evolve-parallel.sh: no candidates kept" test ! -e "$T/pauth.gz.work/softmax-c-g1/candidates.ndjson"
ok "provider-failures-ignored: evolve-parallel.sh: says so" grep -q "evolve-parallel.sh: generation 1: stopped by the provider failure policy: a quota failure" "$T/pauth.err"

evolve.sh --max-provider-failures -1 --archive "$T/x.gz" 2>/dev/null
expect_eq "--max-provider-failures -1 is a usage error" 2 $?
done_testing
