#!/usr/bin/env bash
# evolve.sh runs with any provider by changing one flag: openai, anthropic
# (against the mock server on 127.0.0.1), cmd, and replay of a recorded run (mutate: t70).
. "$(dirname "$0")/lib.sh"

start_mock_llm

# run ARCHIVE PROVIDER [evolve options]: seed + one generation of 2 children on
# softmax, its transcript beside the archive (ARCHIVE without .gz, .tr.gz): one
# run's alone (replay-answered-from-another-run: the nocode run once wrote into
# openai's transcript, and where the replay's seed timings were nocode's, the
# replay's plan prompt was nocode's word for word and got its answer).
run() {
	local a=$1 p=$2
	shift 2
	# --stop-slower 0: the children are timed in full whatever their speed (t19 tests early rejection)
	# --tune 0: only the model's children (t37 tests the tune pass)
	evolve.sh --task softmax --generations 1 --population 2 --budget 0.05 --archive "$a" --stop-slower 0 --tune 0 \
		--provider "$p" --kgen-opt --transcript --kgen-opt "${a%.gz}.tr.gz" "$@" >"${a%.gz}.out" 2>"${a%.gz}.err"
}
final='select(.status | IN("timed","compile_error","wrong","crashed","timeout","gen_error","invalid") | not)'

for p in openai anthropic; do
	run "$T/$p.gz" "$p" --model ok
	expect_eq "$p: evolve.sh exits 0" 0 $?
	expect_eq "$p: seed + 2 model children archived" "seed $p $p" \
		"$(gzip -dc "$T/$p.gz" | jq -r .origin.generator | xargs)"
	expect_eq "$p: every record final" "" "$(gzip -dc "$T/$p.gz" | jq -r "$final | .id")"
	expect_eq "$p: children verified and timed" "timed timed" \
		"$(gzip -dc "$T/$p.gz" | jq -r 'select(.generation == 1) | .status' | xargs)"
	ok "$p: children point at their exchange in the transcript" \
		sh -c "gzip -dc '$T/$p.gz' | jq -e 'select(.generation == 1) | .origin.exchange.file | test(\"$p.tr.gz\")' >/dev/null"
done
ok "the mock server saw both wire protocols" sh -c "grep -q chat/completions '$T/server.log' && grep -q /v1/messages '$T/server.log'"

# A model that answers without code: the request is kept as gen_error (one
# base for 2 children: its plan answer already holds no plans).
run "$T/nocode.gz" openai --model nocode
expect_eq "nocode: the request kept as gen_error" "gen_error" \
	"$(gzip -dc "$T/nocode.gz" | jq -r 'select(.generation == 1) | .status' | xargs)"

# Replay the openai run from its transcript: same children, no request to the server.
before=$(wc -l <"$T/server.log")
run "$T/replay.gz" replay --kgen-opt --replay --kgen-opt "$T/openai.tr.gz"
expect_eq "replay: evolve.sh exits 0" 0 $?
expect_eq "replay: same child ids as the recorded run" \
	"$(gzip -dc "$T/openai.gz" | jq -r 'select(.generation == 1) | .id' | sort | xargs)" \
	"$(gzip -dc "$T/replay.gz" | jq -r 'select(.generation == 1) | .id' | sort | xargs)"
expect_eq "replay: no request reached the server" "$before" "$(wc -l <"$T/server.log")"

# cmd: any program that reads the prompt and prints an answer.
cat >"$T/model.sh" <<'SH'
#!/bin/sh
# A plan prompt gets one plan; a write prompt gets the task's baseline kernel, fenced.
prompt=$(cat)
case $prompt in
*"# What to do
1. List about"*)
	printf '```json\n{"plans": [{"title": "plain loops", "hypothesis": "simpler code vectorises",'
	printf ' "rubric": ["three passes"], "min_uplift": 1.0, "max_uplift": 1.2, "innovation": 1}]}\n```\n' ;;
*)
	printf 'Here is the kernel:\n```c\n'
	cat "$KSCI_TASKS/softmax/baseline.c"
	printf '```\n' ;;
esac
SH
chmod +x "$T/model.sh"
run "$T/cmd.gz" cmd --kgen-opt --cmd --kgen-opt "$T/model.sh"
# Both children get the same answer: the second is kept as a duplicate, not archived twice as code.
expect_eq "cmd: one child timed, the identical second kept as gen_error duplicate" "duplicate timed" \
	"$(gzip -dc "$T/cmd.gz" | jq -r 'select(.generation == 1 and .origin.generator == "cmd") | .gen.status // .status' | sort | xargs)"

# Bug (home-unset): kgen kept its own cache-directory rule and, with $HOME unset,
# cached model answers nowhere, while the other tools use /tmp/.cache/ksci.  Now
# it asks lib/cache like them: the second identical call is answered from there.
gzip -dc "$T/cmd.gz" | jq -c 'select(.generation == 0) | {status:"selected",task,backend,generation:1,parents:[.id],base:.}' >"$T/home.req"
model="home-unset-$$-$RANDOM"
touch "$T/home.stamp"
for i in 1 2; do
	env -u HOME -u XDG_CACHE_HOME -u KSCI_CACHE kgen --provider cmd --cmd "$T/model.sh" --model "$model" \
		--children 1 --stage write --transcript "$T/home.tr.gz" <"$T/home.req" >"$T/home$i.nd" 2>"$T/home$i.err"
done
expect_eq "home-unset: kgen answers the second call from /tmp/.cache/ksci/llm" "false true" \
	"$(jq -r '.origin.calls[0].cached' "$T/home1.nd" "$T/home2.nd" | xargs)"
# What the test left in the shared cache: only its own entries (the model name is unique).
find /tmp/.cache/ksci/llm -newer "$T/home.stamp" -type f -name '*.json' -delete 2>/dev/null
done_testing
