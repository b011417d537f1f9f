#!/usr/bin/env bash
# pipelines/evolve.sh end to end on a CPU task: archive contents, resume, failure.
. "$(dirname "$0")/lib.sh"

a=$T/run/matmul.ndjson.gz
run() { evolve.sh --task matmul --population 4 --budget 0.05 --seed 1 --archive "$a" "$@"; }

run --generations 1 >"$T/out1" 2>"$T/err1"
expect_eq "evolve.sh exits 0" 0 $?
expect_eq "archive holds the seed and 4 children" 5 "$(gzip -dc "$a" | wc -l)"
ok "the archive is whole by karchive check (one member per generation, every line read back)" karchive check "$a"
ok "a summary line per generation" grep -q '^generation 1: ' "$T/out1"
run --generations 2 >"$T/out2" 2>&1
expect_eq "re-running continues with generation 2 only" "0 1 1 1 1 2 2 2 2" "$(gzip -dc "$a" | jq -r .generation | xargs)"
run --generations 2 >"$T/out3" 2>&1
expect_eq "re-running a finished run adds nothing" 9 "$(gzip -dc "$a" | wc -l)"
expect_eq "every record has a final status" "" \
	"$(gzip -dc "$a" | jq -r 'select(.status | IN("timed","slow","compile_error","wrong","crashed","timeout","unsupported","gen_error","invalid") | not) | .id')"
expect_eq "ids are unique" 9 "$(gzip -dc "$a" | jq -r .id | sort -u | wc -l)"
expect_eq "children name their parents and knob changes" "true true true true" "$(gzip -dc "$a" | jq 'select(.generation == 1) | (.parents | length) >= 1 and (.origin.changes | length) >= 1' | xargs)"
best=$(gzip -dc "$a" | jq -s 'map(select(.status == "timed") | .time.speedup_vs_seed) | max')
ok "best speedup over the seed is >= 1 ($best)" jq -en "$best >= 1"

# A stage that fails fatally leaves the archive as it was.
mkdir -p "$T/fake"
for t in kselect kgen kcompile kverify; do ln -s "$KSCIBIN/$t" "$T/fake/$t"; done
printf '#!/bin/sh\ncat >/dev/null\necho "ktime: simulated failure" >&2\nexit 3\n' >"$T/fake/ktime"
chmod +x "$T/fake/ktime"
before=$(gzip -dc "$a" | md5sum)
KSCIBIN=$T/fake run --generations 3 >"$T/out4" 2>"$T/err4"
expect_eq "a fatal stage failure exits 3" 3 $?
expect_eq "archive unchanged after a failed generation" "$before" "$(gzip -dc "$a" | md5sum)"
ok "the failure is reported" grep -q 'generation 3 failed' "$T/err4"

# Regression (torn last line of a gzip archive): with a last member cut
# short, last_generation printed two numbers and evolve.sh ran away; now it
# is refused before anything runs with exit 4 (damaged), the archive
# untouched, and the repair command (more cases: t71-evolve-archive-guard.sh).
size=$(wc -c <"$a")
head -c "$((size - 30))" "$a" >"$T/torn.ndjson.gz"
before=$(md5sum <"$T/torn.ndjson.gz")
timeout 120 evolve.sh --task matmul --population 4 --budget 0.05 --seed 1 --archive "$T/torn.ndjson.gz" \
	--generations 4 >"$T/out5" 2>"$T/err5"
expect_eq "torn archive: evolve.sh exits 4" 4 $?
expect_eq "torn archive: nothing appended" "$before" "$(md5sum <"$T/torn.ndjson.gz")"
ok "torn archive: says it is damaged and how to repair it" \
	grep -qF "evolve.sh: $T/torn.ndjson.gz: damaged (a truncated or corrupt gzip member); nothing appended; repair with: karchive repair $T/torn.ndjson.gz" "$T/err5"

not_ok_is "unknown option is refused" evolve.sh --no-such-thing
evolve.sh --population x >/dev/null 2>&1
expect_eq "bad number is a usage error" 2 $?
ok "--help" sh -c 'evolve.sh --help | grep -q "^usage: evolve.sh"'
done_testing
