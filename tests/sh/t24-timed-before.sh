#!/usr/bin/env bash
# t24-timed-before: ktime confirms a candidate it timed before instead of
# timing it in full (docs/tools/ktime.md "Timed before", lib/timecache.h).
# On the c back end, where timings under load spread widely, agreement is
# made certain with --confirm-within 1e9 and disagreement with 0 (a
# difference is never below 0), so no check depends on a timing.  Checks:
# the second of two identical candidates gets the first's figures with
# time.retime agreed; so does one in another ktime run (the entries are on
# disk); a copy that differs by a comment is timed in full; --confirm-within 0
# times in full after the confirmation and keeps the new figures; --retime
# full and --force time in full, --force --retime confirm confirms; an
# entry edited by hand is not served (said on stderr); implausible figures
# are never kept; earlier figures below --stop-slower's bound are not served
# (the full timing says slow); every timing job says whether the judge wakes
# a child's CPU first (ktime --wake-cpu).
# shellcheck disable=SC2016 # $task, $r: jq's variables
. "$(dirname "$0")/lib.sh"
skip_without_bwrap
cd "$T" || exit 1

gen() { jq -cn --rawfile s "$ROOT/data/tasks/rowsum/seed.c" --arg i "$1" --arg tail "${2:-}" \
	'{id: $i, task: "rowsum", backend: "c", generation: 1, parents: [], source: ($s + $tail), status: "generated"}'; }
kt() { ktime --budget 0.05 --min-runs 2 "$@"; }
{
	gen a
	gen b
	gen c
	gen comment "// another candidate"
} | kcompile 2>c.err | kverify 2>v.err >v.nd
expect_eq "all four verified" "verified verified verified verified" "$(jq -r .status v.nd | xargs)"

head -n 2 v.nd | kt --confirm-within 1e9 >t1.nd 2>t1.err
expect_eq "ktime: exit 0" 0 $?
expect_eq "both timed" "timed timed" "$(jq -r .status t1.nd | xargs)"
expect_eq "timed-before-confirmed: the first timed in full, the second confirmed" "null true" \
	"$(jq -r '.time.retime | if . then "\(.agreed)\(.why // "" | if . != "" then " (" + . + ")" else "" end)" else "null" end' t1.nd | xargs)"
ok "the second carries the first's figures" jq -se '.[0].time.sizes == .[1].time.sizes and
	.[0].time.speedup_vs_seed == .[1].time.speedup_vs_seed' t1.nd
ok "and says what it compared, at one of the benchmark sizes" jq -se --slurpfile task "$ROOT/data/tasks/rowsum/task.json" \
	'.[1].time.retime | .mode == "confirm" and .compared == "speedup_vs_seed" and .then > 0 and .now > 0 and
	 (.diff_pct | type) == "number" and .within_pct == 1e9 and (.stored_at | test("^20[0-9-]+T")) and (.seeds | length) > 0' t1.nd
ok "with its own log and judge job (2 of the same judge)" jq -se '(.[1].time.log | test("time ")) and .[1].time.judge.job == 2' t1.nd
expect_eq "one entry kept" 1 "$(find "$KSCI_CACHE/time" -name '*.json' | wc -l)"

sed -n 3p v.nd | kt --confirm-within 1e9 >t2.nd 2>t2.err
expect_eq "timed-before-in-another-run: confirmed from the entry on disk" "timed true" \
	"$(jq -r '"\(.status) \(.time.retime.agreed)"' t2.nd)"

sed -n 4p v.nd | kt --confirm-within 1e9 >t3.nd 2>t3.err
expect_eq "comment-is-another-candidate: timed in full" "timed null" "$(jq -r '"\(.status) \(.time.retime.agreed)"' t3.nd)"

sed -n 3p v.nd | kt --confirm-within 0 >t4.nd 2>t4.err
expect_eq "confirm-within-0: the confirmation disagrees, the candidate is timed in full" "timed false" \
	"$(jq -r '"\(.status) \(.time.retime.agreed)"' t4.nd)"
ok "it says why" jq -e '.time.retime.why | test("not within 0 %")' t4.nd
ok "every benchmark size timed" jq -e --slurpfile task "$ROOT/data/tasks/rowsum/task.json" \
	'(.time.sizes | length) == ($task[0] | .bench_c // .bench | length)' t4.nd
ok "the new figures replaced the entry's (two entries: this one's and the comment's)" \
	jq -se --slurpfile r t4.nd 'length == 2 and any(.[]; .result.sizes == $r[0].time.sizes)' "$KSCI_CACHE"/time/*.json

sed -n 3p v.nd | kt --retime full >t5.nd 2>t5.err
expect_eq "retime-full: timed in full" "timed null" "$(jq -r '"\(.status) \(.time.retime)"' t5.nd)"
kt --force --confirm-within 1e9 <t2.nd >t6.nd 2>t6.err
expect_eq "force-times-in-full: a timed record with --force" "timed null" "$(jq -r '"\(.status) \(.time.retime)"' t6.nd)"
kt --force --retime confirm --confirm-within 1e9 <t2.nd >t7.nd 2>t7.err
expect_eq "force-with-retime-confirm: confirmed" "timed true" "$(jq -r '"\(.status) \(.time.retime.agreed)"' t7.nd)"

# An entry edited by hand (its figures made better) no longer matches its
# seal: not served, timed in full, and ktime says so.
for entry in "$KSCI_CACHE"/time/*.json; do
	jq -c '.result.speedup_vs_seed = 99' "$entry" >e.json && cp e.json "$entry"
done
sed -n 3p v.nd | kt --confirm-within 1e9 >t8.nd 2>t8.err
expect_eq "edited-entry-not-served: timed in full" "timed null" "$(jq -r '"\(.status) \(.time.retime)"' t8.nd)"
ok "ktime says the entry does not match its seal" grep -q "does not match its seal" t8.err
ok "the figures are not the edited ones" jq -e '.time.speedup_vs_seed != 99' t8.nd

# Earlier figures below --stop-slower's bound: timed in full, which stops it.
kt --confirm-within 1e9 --stop-slower 0.5 --best 1000 <<<"$(sed -n 3p v.nd)" >t9.nd 2>t9.err
expect_eq "below-the-bound-timed-in-full: slow, no confirmation" "slow null" "$(jq -r '"\(.status) \(.time.retime)"' t9.nd)"

# Another stopping rule is another timing: a candidate confirmed above is
# timed in full under --stop-stat median, and every size says which rule.
sed -n 3p v.nd | kt --confirm-within 1e9 --stop-stat median >t11.nd 2>t11.err
expect_eq "stop-stat-median-is-another-entry: timed in full" "timed null" "$(jq -r '"\(.status) \(.time.retime)"' t11.nd)"
ok "stop-stat-median-recorded: every size says median" jq -e '[.time.sizes[] | .stop_stat == "median"] | all and length > 0' t11.nd
ok "the rule of the mean says nothing (the default)" jq -e '[.time.sizes[] | has("stop_stat")] | any | not' t8.nd
# The paired ratios' rule is a third: another entry, and every size says it.
sed -n 3p v.nd | kt --confirm-within 1e9 --stop-stat paired >t11p.nd 2>t11p.err
expect_eq "stop-stat-paired-is-another-entry: timed in full" "timed null" "$(jq -r '"\(.status) \(.time.retime)"' t11p.nd)"
ok "stop-stat-paired-recorded: every size says paired" jq -e '[.time.sizes[] | .stop_stat == "paired"] | all and length > 0' t11p.nd
# So is a timing without the child's CPU woken first (GPU; the key says so
# on every back end).
sed -n 3p v.nd | kt --confirm-within 1e9 --wake-cpu off >t12.nd 2>t12.err
expect_eq "wake-cpu-off-is-another-entry: timed in full" "timed null" "$(jq -r '"\(.status) \(.time.retime)"' t12.nd)"

# Implausible figures (a peak far below anything) are never kept.
export KSCI_CACHE=$T/cache2
sed -n 1p v.nd | kt --peak-gbps 0.000001 --peak-gflops 0.000001 >t10.nd 2>t10.err
ok "the figures are implausible" jq -e '.time.implausible' t10.nd
expect_eq "implausible-not-kept: no entry" 0 "$(find "$KSCI_CACHE/time" -name '*.json' 2>/dev/null | wc -l)"

# wake-cpu-in-the-job: every timing job says whether the judge wakes a
# child's CPU before its requests (GPU only; docs/harness.md): on unless
# --wake-cpu off; on the c back end no size reports wake-ups.
sed -n 1p v.nd | KSCI_JOB_DUMP=$T/job-on.json kt --retime full >w1.nd 2>w1.err
expect_eq "wake-cpu-in-the-job: on by default" on "$(jq -r .wake_cpu job-on.json)"
sed -n 1p v.nd | KSCI_JOB_DUMP=$T/job-off.json kt --retime full --wake-cpu off >w2.nd 2>w2.err
expect_eq "...and off when asked" off "$(jq -r .wake_cpu job-off.json)"
ok "a CPU back end's sizes report no CPU wake-ups" jq -e '.status == "timed" and ([.time.sizes[] | has("cpu_wakes")] | any | not)' w1.nd
done_testing
