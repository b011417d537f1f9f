#!/usr/bin/env bash
# t37-evolve-fix: evolve.sh runs a fix pass inside each generation (model
# providers).  The bug it guards against (fix-stage-never-ran): kselect
# returns only timed parents and no pipeline called kgen --stage fix, so a
# child that failed was lost to the search; run by hand, --stage fix
# repaired such children.  A scripted model (the cmd provider) writes one
# child with a planted compile error and one with a planted wrong answer;
# asked to fix, it corrects each.  Checked in the archive: both failures
# kept, both fixed children there, verified and timed, each pointing at the
# child it fixes; --max-fix 0 turns the pass off.  Then "model, then tune"
# (--tune): the timed model children that keep ktune knobs get a mutate
# sweep in the same generation.  evolve-parallel.sh runs both passes too.
. "$(dirname "$0")/lib.sh"
skip_without_bwrap
cd "$T" || exit 1
base=$KSCI_TASKS/softmax/seed.c
cp "$base" good.c
sed 's|yr\[c\] \*= inv;|yr[c] *= 2 * inv;|; s|yr\[c\] /= s;|yr[c] /= s / 2;|' "$base" >wrong.c
{ cat "$base"; echo 'this is not C;'; } >broken.c
cat >model.sh <<SH
#!/bin/sh
prompt=\$(cat)
fenced() { printf 'Here:\n\`\`\`c\n'; cat "\$1"; printf '%s\n\`\`\`\n' "\$2"; }
case \$prompt in
*"# A candidate kernel that failed"*)
	case \$prompt in
	*"lineage: compile"*) fenced $T/good.c "// fixed: compile" ;;
	*) fenced $T/good.c "// fixed: answer" ;;
	esac ;;
*"# What to do
1. List about"*)
	printf '\`\`\`json\n{"plans": ['
	printf '{"title": "plan-compile", "hypothesis": "h1", "rubric": ["r"], "min_uplift": 1.0, "max_uplift": 1.5, "innovation": 3},'
	printf '{"title": "plan-answer", "hypothesis": "h2", "rubric": ["r"], "min_uplift": 1.2, "max_uplift": 1.2, "innovation": 1}'
	printf ']}\n\`\`\`\n' ;;
*plan-compile*) fenced $T/broken.c "// lineage: compile" ;;
*) fenced $T/wrong.c "// lineage: answer" ;;
esac
SH
chmod +x model.sh
run() { # ARCHIVE [evolve options]: the seed and one generation of two children
	local a=$1
	shift
	# --stop-slower 0: every child timed in full, whatever its speed (t19 tests that)
	evolve.sh --task softmax --generations 1 --population 2 --budget 0.05 --archive "$a" -q --stop-slower 0 \
		--provider cmd --kgen-opt --cmd --kgen-opt "$T/model.sh" "$@" 2>"$a.err"
}
run "$T/fix.gz"
rc=$?
expect_eq "evolve.sh with the fix pass: exit 0" 0 "$rc"
[ "$rc" = 0 ] || sed 's/^/# /' "$T/fix.gz.err"
g1() { gzip -dc "$1" | jq -r "select(.generation == 1) | $2"; }
expect_eq "the written children failed as planted" "compile_error wrong" \
	"$(g1 fix.gz 'select(.origin.stage == "write") | .status' | sort | xargs)"
expect_eq "fix-stage-never-ran: each failed child got a fixed child, verified and timed" "timed timed" \
	"$(g1 fix.gz 'select(.origin.stage == "fix") | .status' | xargs)"
expect_eq "each fixed child points at the child it fixes" \
	"$(g1 fix.gz 'select(.origin.stage == "write") | .id' | sort | xargs)" \
	"$(g1 fix.gz 'select(.origin.stage == "fix") | .origin.fixes' | sort | xargs)"
expect_eq "the compile error's fix and the wrong answer's fix are what the model wrote" "answer compile" \
	"$(g1 fix.gz 'select(.origin.stage == "fix") | .source | capture("fixed: (?<w>[a-z]+)").w' | sort | xargs)"
expect_eq "fixed children are generation 1 (not 2: one past their parent) with their failed parent" \
	"$(g1 fix.gz 'select(.origin.stage == "fix") | .origin.fixes' | sort | xargs)" \
	"$(g1 fix.gz 'select(.origin.stage == "fix") | .parents[0]' | sort | xargs)"
expect_eq "no id twice in the archive, nothing past generation 1" "|1" \
	"$(gzip -dc fix.gz | jq -r .id | sort | uniq -d)|$(gzip -dc fix.gz | jq -s 'map(.generation) | max')"
ok "the archive is whole" karchive check fix.gz
# rerun-of-a-finished-run-crashed: the stop record's last line read an unset
# variable (set -u) when no stop rule had fired: exit 1, "unbound variable".
before=$(gzip -dc fix.gz | wc -l)
run "$T/fix.gz"
expect_eq "a finished run run again: exit 0, nothing added" "0|$before" "$?|$(gzip -dc fix.gz | wc -l)"
ok "a finished run run again: no shell error" sh -c "! grep -q 'unbound variable' '$T/fix.gz.err'"

# --- model, then tune (model-children-never-tuned) --------------------------
# The fixed children are the seed's code, which keeps three ktune knobs: each,
# timed, gets a short mutate sweep (--tune, default 4) in the same
# generation; the failed children (not verified) and the seed get none.
expect_eq "model, then tune: 4 mutate children of each timed model child, in generation 1" \
	"$(g1 fix.gz 'select(.origin.stage == "fix") | .id' | sort | sed 'p;p;p' | xargs)" \
	"$(g1 fix.gz 'select(.origin.generator == "mutate") | .parents[0]' | sort | xargs)"
expect_eq "the tune children: strategy tune, compiled, verified and timed" "tune timed" \
	"$(g1 fix.gz 'select(.origin.generator == "mutate") | "\(.origin.strategy.name) \(.status)"' | sort -u | xargs)"

run "$T/nofix.gz" --max-fix 0 --tune 0
expect_eq "--max-fix 0 --tune 0: exit 0, no fix stage, no tune pass" "0||" \
	"$?|$(g1 nofix.gz 'select(.origin.stage == "fix") | .id')|$(g1 nofix.gz 'select(.origin.generator == "mutate") | .id')"
run "$T/bad.gz" --max-fix x
expect_eq "--max-fix x: usage error" 2 $?
run "$T/bad2.gz" --tune -1
expect_eq "--tune -1: usage error" 2 $?

# --- evolve-parallel.sh: the same passes, each spread like the main step ----
evolve-parallel.sh --task softmax --generations 1 --population 2 --budget 0.05 --archive "$T/par.gz" -q \
	--stop-slower 0 --tune 1 --provider cmd --kgen-opt --cmd --kgen-opt "$T/model.sh" 2>"$T/par.err"
rc=$?
expect_eq "evolve-parallel.sh with the passes: exit 0" 0 "$rc"
[ "$rc" = 0 ] || sed 's/^/# /' "$T/par.err"
expect_eq "evolve-parallel.sh: the same model records as evolve.sh (stage, status)" \
	"$(g1 fix.gz 'select(.origin.generator == "cmd") | "\(.origin.stage) \(.status)"' | sort | xargs)" \
	"$(g1 par.gz 'select(.origin.generator == "cmd") | "\(.origin.stage) \(.status)"' | sort | xargs)"
expect_eq "evolve-parallel.sh --tune 1: one timed mutate child of each fixed child" \
	"$(g1 par.gz 'select(.origin.stage == "fix") | .id' | sort | xargs)" \
	"$(g1 par.gz 'select(.origin.generator == "mutate" and .status == "timed") | .parents[0]' | sort | xargs)"
expect_eq "evolve-parallel.sh: each fixed child points at the child it fixes" \
	"$(g1 par.gz 'select(.origin.stage == "write") | .id' | sort | xargs)" \
	"$(g1 par.gz 'select(.origin.stage == "fix") | .origin.fixes' | sort | xargs)"
ok "evolve-parallel.sh: the work directory is gone once appended" test ! -e "$T/par.gz.work/softmax-c-g1"

done_testing
