#!/usr/bin/env bash
# t37-evolve-fix: evolve.sh runs a fix pass inside each generation (model
# providers).  The bug it guards against (fix-stage-never-ran): kselect
# returns only timed parents and no pipeline called kgen --stage fix, so a
# child that failed was lost to the search; run by hand, --stage fix
# repaired such children.  A scripted model (the cmd provider) writes one
# child with a planted compile error and one with a planted wrong answer;
# asked to fix, it corrects each.  Checked in the archive: both failures
# kept, both fixed children there, verified and timed, each pointing at the
# child it fixes; --max-fix 0 turns the pass off.
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

run "$T/nofix.gz" --max-fix 0
expect_eq "--max-fix 0: exit 0, no fix stage" "0|" "$?|$(g1 nofix.gz 'select(.origin.stage == "fix") | .id')"
run "$T/bad.gz" --max-fix x
expect_eq "--max-fix x: usage error" 2 $?

done_testing
