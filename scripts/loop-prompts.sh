#!/usr/bin/env bash
# scripts/loop-prompts.sh [DIR [EVOLVE-OPTION...]] — run the whole Kernel Scientist loop offline
# (evolve.sh on softmax, c back end, 2 generations, the llm selector, a
# scripted model through the cmd provider) and print one real prompt of
# each model stage — select, plan, write, fix — as kgen and kselect sent it,
# taken from the run's transcript.  docs/loop.md shows its output.  The
# scripted model: the selector picks the first id it is shown; the planner
# gives three plans; the writer plants a compile error for the first plan, a
# wrong answer for the second and the seed's code with a comment for the
# third; the fixer answers with the seed's code; the findings are one that
# cites the notebook's first id and one that cites a made-up id.  Each answer it writes is
# numbered (a fresh call, fresh code), so a duplicate child can only come
# from an answer served twice.  The run is kept in DIR (default: a
# temporary directory, removed); tests/sh/t39-loop.sh checks it.
set -euo pipefail
case ${1:-} in -h | --help) sed -n '2,/^\([^#]\|$\)/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
if [ -n "${1:-}" ]; then d=$1; shift; mkdir -p "$d"; else
	d=$(mktemp -d "${TMPDIR:-/tmp}/ksci-loop.XXXXXX")
	trap 'rm -rf "$d"' EXIT
fi
export KSCI_CACHE=$d/cache KSCI_TASKS=${KSCI_TASKS:-$root/data/tasks}
seed_c=$KSCI_TASKS/softmax/seed.c
cat >"$d/model.sh" <<SH
#!/bin/sh
prompt=\$(cat)
mkdir -p "$d/calls"
n=\$(mktemp "$d/calls/XXXXXX")
n=\${n##*/}
fenced() { printf '\`\`\`c\n'; sed "\$1" "$seed_c"; printf '%s // answer %s\n\`\`\`\n' "\$2" "\$n"; }
case \$prompt in
*'{"base": "<id>"'*)
	id=\$(printf '%s\n' "\$prompt" | grep -o '\b[0-9a-f]\{16\}\b' | head -n 1)
	printf '{"base": "%s", "reference": "%s", "reasoning": "the fastest so far"}\n' "\$id" "\$id" ;;
*"# A candidate kernel that failed"*) fenced 's/^//' "// fixed" ;;
*'{"findings": [{"text"'*) # one finding on the notebook's first id (and a made-up one), one on a made-up id only
	id=\$(printf '%s\n' "\$prompt" | sed -n '/^# The lab notebook/,\$p' | grep -o '\b[0-9a-f]\{16\}\b' | head -n 1)
	printf '\`\`\`json\n{"findings": [{"text": "plan-three kept the seed and timed; plan-one does not compile", "records": ["%s", "ffffffffffffffff"]}, {"text": "made up", "records": ["0000000000000000"]}]}\n\`\`\`\n' "\$id" ;;
*'"avenues": ["..."]'*)
	printf '\`\`\`json\n{"avenues": ["a", "b", "c"], "plans": ['
	printf '{"title": "plan-one", "hypothesis": "h1", "rubric": ["r"], "min_uplift": 1.0, "max_uplift": 1.5, "innovation": 3, "kind": "memory"},'
	printf '{"title": "plan-two", "hypothesis": "h2", "rubric": ["r"], "min_uplift": 1.2, "max_uplift": 1.2, "innovation": 1, "kind": "compute"},'
	printf '{"title": "plan-three", "hypothesis": "h3", "rubric": ["r"], "min_uplift": 1.3, "max_uplift": 1.3, "innovation": 2, "kind": "tuning"}'
	printf ']}\n\`\`\`\n' ;;
*plan-one*) fenced 's/^//' "this is not C;" ;;
*plan-two*) fenced 's|yr\[c\] \*= inv;|yr[c] *= 2 * inv;|; s|yr\[c\] /= s;|yr[c] /= s / 2;|' "// two" ;;
*) fenced 's/^//' "// three" ;;
esac
SH
chmod +x "$d/model.sh"
tr=$d/transcript.ndjson.gz
"$root/pipelines/evolve.sh" --task softmax --backend c --generations 2 --population 3 --budget 0.05 \
	--stop-slower 0 --tune 2 --archive "$d/run.ndjson.gz" -q --strategy llm --provider cmd \
	--kgen-opt --cmd --kgen-opt "$d/model.sh" --kgen-opt --transcript --kgen-opt "$tr" \
	--kselect-opt --provider --kselect-opt cmd --kselect-opt --cmd --kselect-opt "$d/model.sh" \
	--kselect-opt --transcript --kselect-opt "$tr" --kgen-opt -j --kgen-opt 2 "$@" >&2
gzip -dc "$tr" >"$d/transcript.ndjson"
for stage in select plan.txt write.txt fix.txt findings.txt; do
	echo "### ${stage%.txt}"
	echo
	jq -rn --arg s "$stage:" 'first(inputs | select((.replay_key // "") | startswith($s)) | select(.prompt)) |
		"system:\n\n" + (.system | split("\n") | map("    " + .) | join("\n")) +
		"\n\nprompt:\n\n" + (.prompt | split("\n") | map("    " + .) | join("\n"))' "$d/transcript.ndjson"
	echo
done
