#!/usr/bin/env bash
# t39-kgen-jobs: kgen -j N makes N model calls at once (each request in a
# process of its own, lib/tool.c) and writes the records in input order.
# The bug it answers (model-calls-serial): model calls were made one after
# another inside a generation; with reasoning models that, not the GPU,
# bounded the loop.  Checked without clocks: the scripted model waits at a
# barrier until six calls are in flight at once, which serial calls never
# reach (each then answers "alone"); the records are those of -j 1; two
# processes that make the same code give one child and one gen_error
# `duplicate`; a process killed mid-call leaves its request written on,
# marked, not lost.  A base's plan, asked by its requests at once, is one
# call; a Retry-After told to one process holds for all.
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1
mkdir inflight
# The model: writes the plan it is asked for, with a tag taken from the
# prompt (the plan's title).  It counts the calls in flight when it starts
# (a file each, removed at its end); with BARRIER=N it then waits (up to
# 120 s) until N are in flight at once, or one call has seen that.
cat >model.sh <<SH
#!/bin/sh
prompt=\$(cat)
me=\$\$
touch "$T/inflight/\$me"
ls "$T/inflight" | wc -l >>"$T/width"
n=0
while [ "\${BARRIER:-0}" -gt 0 ] && [ \$n -lt 1200 ] && [ ! -e "$T/released" ]; do
	[ "\$(ls "$T/inflight" | wc -l)" -ge "\$BARRIER" ] && touch "$T/released"
	sleep 0.1; n=\$((n + 1))
done
case \$prompt in
*"KILL-ME"*) # the kgen process that made this call
	p=\$PPID
	while [ "\$(cat /proc/\$p/comm)" != kgen ]; do p=\$(awk '{print \$4}' /proc/\$p/stat); done
	kill -KILL \$p; sleep 5 ;;
esac
tag=\$(printf '%s' "\$prompt" | grep -o 'tag-[a-zA-Z0-9-]*' | head -n 1)
printf '\`\`\`c\n'
cat "$KSCI_TASKS/rowsum/seed.c"
printf '// %s\n\`\`\`\n' "\$tag"
rm -f "$T/inflight/\$me"
SH
chmod +x model.sh
jq -cn --rawfile s "$KSCI_TASKS/rowsum/seed.c" '{id: "base0", task: "rowsum", backend: "c", generation: 0,
	parents: [], source: $s, status: "timed", time: {speedup_vs_seed: 1, sizes: []}}' >base.nd
# req TAG CHILD: a write request whose plan carries TAG.
req() {
	jq -c --arg tag "$1" --argjson c "$2" '{status: "selected", task, backend, generation: 1, parents: [.id], base: .,
		inspirations: [], child: $c, strategy: {name: "best", seed: (100 + $c)},
		plan: {title: $tag, hypothesis: "h", rubric: ["r"], min_uplift: 1, max_uplift: 1.1, innovation: 1}}' base.nd
}
{ for i in 0 1 2 3 4 5 6 7; do req "tag-a$i" "$i"; done; echo '{"status":"timed","id":"passes-through"}'; } >req.nd

run() { # JOBS OUT: kgen on req.nd, one child per request
	rm -f width released inflight/*
	kgen --provider cmd --cmd "$T/model.sh" --stage write --children 1 --no-cache -j "$1" \
		--archive base.nd <req.nd >"$2" 2>"$2.err"
}
BARRIER=6 run 6 j4.nd
expect_eq "-j 6: exit 0" 0 $?
expect_eq "-j 6: every record out, in input order" \
	"tag-a0 tag-a1 tag-a2 tag-a3 tag-a4 tag-a5 tag-a6 tag-a7 -" \
	"$(jq -r '.origin.plan.title // "-"' j4.nd | xargs)"
ok "-j 6: six calls were in flight at once (-j raised the 4 call slots to 6)" test -e released
expect_eq "-j 6: eight children" 8 "$(jq -r 'select(.status == "generated") | .id' j4.nd | sort -u | wc -l)"
run 1 j1.nd
expect_eq "-j 1: the calls one at a time" 1 "$(sort -un width | tail -n 1)"
strip() { jq -c 'del(.origin.calls, .origin.usage, .origin.exchange)' "$1"; }
expect_eq "-j 1 and -j 6: the same records" "$(strip j1.nd)" "$(strip j4.nd)"

# --- two processes, the same code ---------------------------------------
# Requests 1 and 2 carry the same tag: their answers are the same kernel.
{ req tag-x 0; req tag-same 1; req tag-same 2; req tag-y 3; } >dup.nd
rm -f width released inflight/*
kgen --provider cmd --cmd "$T/model.sh" --stage write --children 1 --no-cache -j 4 \
	--archive base.nd <dup.nd >dup.out 2>dup.err
expect_eq "same code from two processes: one child, then a duplicate" \
	"generated generated gen_error generated" "$(jq -r .status dup.out | xargs)"
# shellcheck disable=SC2016 # a jq variable
ok "the duplicate names the child it repeats and keeps its call's accounting" \
	jq -se '.[1].id as $id | .[2] | .gen.status == "duplicate" and .duplicate_of == $id and
		(.origin.calls | length) == 1 and (.source == null)' dup.out

# --- a process killed mid-call --------------------------------------------
{ req tag-k0 0; req tag-KILL-ME 1; req tag-k2 2; req tag-k3 3; } >kill.nd
export BARRIER=0
rm -f width released inflight/*
kgen --provider cmd --cmd "$T/model.sh" --stage write --children 1 --no-cache -j 4 \
	--archive base.nd <kill.nd >kill.out 2>kill.err
expect_eq "killed process: exit 1" 1 $?
expect_eq "killed process: its request written on as gen_error, the others made" \
	"generated gen_error generated generated" "$(jq -r .status kill.out | xargs)"
ok "killed process: reason lost, with the signal, and the request kept" \
	jq -se '.[1] | .gen.status == "lost" and (.gen.message | test("signal 9")) and .request.plan.title == "tag-KILL-ME"' kill.out
ok "killed process: said on stderr with its line" grep -q "kgen: <stdin>: line 2: its process was killed by signal 9" kill.err
# --- concurrent-identical-calls-paid-twice ----------------------------------
# Four requests on one base, no plan given: each plans first, and the plan
# prompt is the same for all four (the plan is shared by a base's requests
# through the cache).  Made at once by -j 4, the four plan calls all missed
# the cache; a lock per cache key now makes one call and the other three
# read its answer.  The planner is slow on purpose (1 s), so four unlocked
# calls would overlap.
cat >planner.sh <<SH
#!/bin/sh
prompt=\$(cat)
case \$prompt in
*'"avenues": ["..."]'*)
	touch "$T/plans/\$\$"; sleep 1
	printf '\`\`\`json\n{"plans": ['
	for k in 0 1 2; do printf '{"title": "p%s", "hypothesis": "h", "rubric": ["r"], "min_uplift": 1, "max_uplift": %s, "innovation": %s}' \$k \$((2 + k)) \$((3 - k)); [ \$k = 2 ] || printf ','; done
	printf ']}\n\`\`\`\n' ;;
*)
	printf '\`\`\`c\n'; cat "$KSCI_TASKS/rowsum/seed.c"; printf '// call %s\n\`\`\`\n' "\$\$" ;;
esac
SH
chmod +x planner.sh
mkdir plans
for c in 0 1 2 3; do
	jq -c --argjson c "$c" '{status: "selected", task, backend, generation: 1, parents: [.id], base: .,
		inspirations: [], child: $c, strategy: {name: "best", seed: (200 + $c)}}' base.nd
done >same.nd
kgen --provider cmd --cmd "$T/planner.sh" --children 1 -j 4 --archive base.nd <same.nd >same.out 2>same.err
expect_eq "four requests on one base at once: one plan call" 1 "$(find plans -type f | wc -l)"
expect_eq "four requests on one base at once: four children" "generated generated generated generated" \
	"$(jq -r .status same.out | xargs)"
expect_eq "the plan charged once (to one record), read from the cache by the rest" "1 3" \
	"$(jq -rs '[.[] | .origin.calls[] | select(.stage == "plan")] | "\(map(select(.cached | not)) | length) \(map(select(.cached)) | length)"' same.out)"

# --- retry-after-held-by-one-process ---------------------------------------
# A Retry-After told to one process holds for every process that shares the
# cache: it is written to CACHE/slots/pause, read before any call starts.
start_mock_llm
t0=$(date +%s)
kgen --provider openai --model r429-once --cache "$T/c429" --children 1 --stage write -j 2 \
	--archive base.nd <same.nd >r429.out 2>r429.err
expect_eq "r429-once: no request failed for the rate limit (4 records, each a child or a duplicate)" \
	"4|" "$(wc -l <r429.out | tr -d ' ')|$(jq -r 'select(.status != "generated" and .gen.status != "duplicate") | .gen.status' r429.out)"
# shellcheck disable=SC2016 # an awk program
ok "the Retry-After is shared: CACHE/slots/pause holds a time past the call's start" \
	awk -v t0="$t0" '{ exit !($1 >= t0 + 1) }' "$T/c429/slots/pause"
done_testing
