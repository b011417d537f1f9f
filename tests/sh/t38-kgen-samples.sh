#!/usr/bin/env bash
# t38-kgen-samples: two children asking the same write prompt each get an
# answer of their own.  The bug (same-prompt-same-child): the answer cache
# was keyed on the prompt alone, so the second child of the same base and
# plan was served the first one's answer and came out `duplicate` (1 child in
# 4 per generation).  Now a write or fix call's key holds the child's own
# seed (strategy.seed); the plan, shared by a request's children, does not.
# A run again with the same requests is answered from the cache, as before.
# And the children of one request (kgen's default for model providers: one
# per kept plan, three) have samples of their own too
# (children-of-a-request-share-a-sample), also when they write the same plan.
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1
# A model that numbers its answers: a fresh call gets a new number.
cat >model.sh <<SH
#!/bin/sh
cat >/dev/null
n=\$(( \$(cat $T/calls 2>/dev/null || echo 0) + 1 ))
echo "\$n" >$T/calls
printf '\`\`\`c\n'
cat "$KSCI_TASKS/rowsum/seed.c"
printf '// answer %s\n\`\`\`\n' "\$n"
SH
chmod +x model.sh
# The seed, then two write requests on it with the same plan, seeds 11 and 12.
jq -cn --rawfile s "$KSCI_TASKS/rowsum/seed.c" '{id: "base0", task: "rowsum", backend: "c", generation: 0,
	parents: [], source: $s, status: "timed", time: {speedup_vs_seed: 1, sizes: []}}' >base.nd
for c in 0 1; do
	jq -c --argjson c "$c" '{status: "selected", task, backend, generation: 1, parents: [.id], base: ., inspirations: [],
		child: $c, strategy: {name: "best", seed: (11 + $c)},
		plan: {title: "same plan", hypothesis: "h", rubric: ["r"], min_uplift: 1, max_uplift: 1.1, innovation: 1}}' base.nd
done >req.nd
kgen --provider cmd --cmd "$T/model.sh" --stage write --children 1 --archive base.nd <req.nd >out1.nd 2>err1
expect_eq "same-prompt-same-child: two calls, two children of their own" "2|generated generated" \
	"$(cat calls)|$(jq -r .status out1.nd | xargs)"
expect_eq "same-prompt-same-child: the answers differ" "answer 1|answer 2" \
	"$(jq -r '.source | capture("(?<a>answer [0-9]+)").a' out1.nd | paste -sd'|')"
kgen --provider cmd --cmd "$T/model.sh" --stage write --children 1 --archive base.nd <req.nd >out2.nd 2>err2
expect_eq "the same requests again: both answered from the cache, no call" "2|true true" \
	"$(cat calls)|$(jq -r '.origin.calls[-1].cached' out2.nd | xargs)"
expect_eq "the same requests again: the same children" "$(jq -r .id out1.nd | xargs)" "$(jq -r .id out2.nd | xargs)"
# --- children-of-a-request-share-a-sample --------------------------------
# One request, its plan given, the default number of children: three calls
# (one sample each), three distinct children.
rm -f calls
head -n 1 req.nd | jq -c '.strategy.seed = 21' >one.nd
kgen --provider cmd --cmd "$T/model.sh" --stage write --archive base.nd <one.nd >out3.nd 2>err3
expect_eq "one request: three children by default, each from a call of its own" "3|generated generated generated" \
	"$(cat calls)|$(jq -r .status out3.nd | xargs)"
expect_eq "one request: three distinct children" 3 "$(jq -r .id out3.nd | sort -u | wc -l)"
kgen --provider cmd --cmd "$T/model.sh" --stage write --archive base.nd <one.nd >out4.nd 2>err4
expect_eq "one request again: the same three children, from the cache" "3|$(jq -r .id out3.nd | xargs)" \
	"$(cat calls)|$(jq -r .id out4.nd | xargs)"
done_testing
