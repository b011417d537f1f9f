#!/usr/bin/env bash
# t39-loop: the whole Kernel Scientist loop through evolve.sh, offline
# (scripts/loop-prompts.sh: softmax on the c back end, 2 generations, the
# llm selector, a scripted model through the cmd provider, kgen -j 2), and
# every part of it checked in the archive, the transcript and the ledger
# (docs/loop.md): the selector chose the bases; each base yielded one child
# per kept plan, of three kinds; a fix round repaired the planted compile
# error and the planted wrong answer; the model's timed children were tuned;
# the prompts hold the device, the timings with their SEM, the resources
# and the binding limit, and only knowledge that fits the c back end; the
# findings file keeps what cites real records and reaches the next plan; no
# child was a duplicate; the ledger's calls are the archive's calls plus the
# selector's; a stop rule ends a run with its reason.
. "$(dirname "$0")/lib.sh"
skip_without_bwrap
d=$T/loop
"$ROOT/scripts/loop-prompts.sh" "$d" >"$T/prompts.md" 2>"$T/run.err"
rc=$?
expect_eq "the loop runs: exit 0" 0 "$rc"
[ "$rc" = 0 ] || sed 's/^/# /' "$T/run.err"
a=$d/run.ndjson.gz
recs() { gzip -dc "$a" | jq -c "$1"; }
cnt() { gzip -dc "$a" | jq -r "$1" | wc -l | tr -d ' '; }
for g in 1 2; do
	expect_eq "generation $g: the llm selector chose the base" llm \
		"$(recs "select(.generation == $g and .origin.stage == \"write\") | .origin.strategy.name" | sort -u | xargs)"
	expect_eq "generation $g: one base, one child per kept plan, of three kinds" "compute memory tuning" \
		"$(recs "select(.generation == $g and .origin.stage == \"write\") | .origin.kind" | sort | xargs)"
	expect_eq "generation $g: the planted failures" "compile_error timed wrong" \
		"$(recs "select(.generation == $g and .origin.stage == \"write\") | .status" | sort | xargs)"
	expect_eq "generation $g: a fix round repaired both, each pointing at its failure" \
		"$(recs "select(.generation == $g and .origin.stage == \"write\" and .status != \"timed\") | .id" | sort | xargs)" \
		"$(recs "select(.generation == $g and .origin.stage == \"fix\" and .status == \"timed\") | .origin.fixes" | sort | xargs)"
	expect_eq "generation $g: model, then tune: 2 mutate children of each timed model child" \
		"$(recs "select(.generation == $g and .origin.generator == \"cmd\" and .status == \"timed\") | .id, .id" | sort | xargs)" \
		"$(recs "select(.generation == $g and .origin.generator == \"mutate\") | .parents[0]" | sort | xargs)"
done
expect_eq "no duplicate: no child refused as one, no id twice" "0|" \
	"$(cnt 'select(.gen.status == "duplicate")')|$(gzip -dc "$a" | jq -r .id | sort | uniq -d | xargs)"

# The prompts, as sent (the transcript).
tr=$d/transcript.ndjson
prompts() { jq -r --arg s "$1" 'select((.replay_key // "") | startswith($s)) | .prompt' "$tr"; }
for s in plan.txt write.txt fix.txt; do
	p=$(prompts "$s:")
	ok "${s%.txt} prompts: the device (this CPU)" grep -q "CPU" <<<"$p"
	ok "${s%.txt} prompts: the binding limit" grep -qi "bound\|binding limit" <<<"$p"
	ok "${s%.txt} prompts: the CPU knowledge (tagged backend=c)" grep -q "## CPU kernels (the c back end)" <<<"$p"
	ok "${s%.txt} prompts: no GPU-only knowledge (tensor cores, TMA, warp shuffles)" \
		sh -c '! grep -q "[Tt]ensor [Cc]ore\|\bTMA\b\|wgmma\|__shfl"' <<<"$p"
done
ok "plan prompts: per-size timings with their SEM" grep -q "SEM" <<<"$(prompts plan.txt:)"
ok "plan prompts: the base's compiled resources" grep -q "Compiled resources of the base kernel" <<<"$(prompts plan.txt:)"
ok "plan prompts of generation 2: the notebook names a failure's reason and its fix" \
	grep -q "compile_error: .*fixed by" <<<"$(prompts plan.txt: | tail -n 400)"
ok "select prompts: the uncertainty of each speedup (±)" grep -q "±" <<<"$(prompts select:)"
ok "select prompts of generation 2: the failures so far" grep -q "compile_error 1" <<<"$(prompts select:softmax:2)"

# The findings: rewritten after each generation, only what cites real records.
f=$(find "$a.findings" -name 'softmax-c-*.json' | head -n 1)
ok "the findings file of the task, back end and this CPU is there" test -s "$f"
expect_eq "findings: the one citing a real record kept, with only the real id; the made-up one dropped" \
	"1|1|$(gzip -dc "$a" | jq -r 'select(.id) | .id' | grep -c "$(jq -r '.findings[0].records[0]' "$f")")" \
	"$(jq -r '.findings | length' "$f")|$(jq -r '.findings[0].records | length' "$f")|1"
expect_eq "findings: one update per generation, its calls kept in the file" 2 "$(jq -r '.calls | length' "$f")"
ok "findings: the plan prompt of generation 2 shows them" \
	grep -q "plan-three kept the seed and timed" <<<"$(prompts plan.txt: | tail -n 400)"

# The ledger: every call of the archive's records (origin.calls), each
# selector call once (by call_id) and the findings updates, nothing else.
led=$a.ledger.ndjson
archive_ids=$( (gzip -dc "$a" | jq -r '(.origin.calls // [])[].call_id, (.origin.strategy.llm.call_id // empty)'
	jq -r '.calls[].call_id' "$f") | sort -u)
ledger_ids=$(jq -r 'select(.kind == "call") | .call_id' "$led" | sort)
expect_eq "the ledger holds exactly the calls the archive charges, each once" "$archive_ids" "$ledger_ids"
expect_eq "the ledger's tokens are the archive's and the findings'" \
	"$( (gzip -dc "$a"; jq -c '{origin: {calls: .calls}}' "$f") | jq -s '[.[] | (.origin.calls // [])[], (.origin.strategy.llm // empty)] | unique_by(.call_id) | map(.tokens_in + .tokens_out) | add')" \
	"$(jq -s 'map(select(.kind == "call") | .tokens_in + .tokens_out) | add' "$led")"

# A stop rule: the best is far past 0.001x the seed, so a longer run stops at once.
before=$(gzip -dc "$a" | wc -l)
"$ROOT/scripts/loop-prompts.sh" "$d" --generations 4 --target-speedup 0.001 >/dev/null 2>"$T/stop.err"
expect_eq "--target-speedup: exit 0, nothing run" "0|$before" "$?|$(gzip -dc "$a" | wc -l)"
expect_eq "--target-speedup: the reason recorded" target_speedup "$(jq -r .reason "$a.stop.json")"
ok "--target-speedup: said on stderr" grep -q "stopped after generation 2 by --target-speedup" "$T/stop.err"
done_testing
