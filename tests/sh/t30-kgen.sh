#!/usr/bin/env bash
# t30-kgen: kgen with the seed request and the built-in mutate generator,
# through real pipes: ids, determinism, duplicate avoidance, exhaustion,
# bad input and the exit-code contract.
. "$(dirname "$0")/lib.sh"

export KSCI_TASKS="$T/tasks"
# A valid task (kgen reads tasks through lib/task.h, which validates them);
# the seed doubles as the reference.
tiny_task "$KSCI_TASKS/tiny"
cat >"$KSCI_TASKS/tiny/seed.c" <<'EOF'
/* tiny: copy */
#define TILE 32 // ktune: 8 16 32 64
#define UNROLL 4 // ktune: 1 2 4
static const int VEC = 1; // ktune: 1 2
void solve(const float *x, float *y, int n) { for (int i = 0; i < n; i++) y[i] = x[i]; }
EOF

seedreq='{"status":"selected","task":"tiny","backend":"c","generation":0,"parents":[],"base":null,"inspirations":[],"strategy":{"name":"seed"},"child":0}'

printf '%s\n' "$seedreq" | kgen >"$T/seed.nd"
expect_eq "seed request: exit 0" 0 "$?"
expect_eq "seed request: one generated record" "generated 0 [] seed" \
	"$(jq -r '"\(.status) \(.generation) \(.parents|tostring) \(.origin.generator)"' "$T/seed.nd")"
expect_eq "seed request: source is the seed file" "$(cat "$KSCI_TASKS/tiny/seed.c")" "$(jq -j .source "$T/seed.nd")"
expect_eq "seed request: no base/inspirations/strategy copied" "false false false" \
	"$(jq -r '"\(has("base")) \(has("inspirations")) \(has("strategy"))"' "$T/seed.nd")"
sid=$(jq -r .id "$T/seed.nd")
# id is the documented hash: sha256("ksci-v1\0tiny\0c\0" source)
want=$( (printf 'ksci-v1\0tiny\0c\0'; jq -j .source "$T/seed.nd") | sha256sum | cut -c1-16)
expect_eq "seed id is the documented content hash" "$want" "$sid"

jq -c '{status:"selected",task,backend,generation:1,parents:[.id],base:.,inspirations:[],strategy:{name:"best",seed:7},child:0,island:2,note:"kept"}' \
	"$T/seed.nd" >"$T/req.nd"

kgen --seed 1 --children 5 <"$T/req.nd" >"$T/kids.nd"
expect_eq "mutate: exit 0" 0 "$?"
expect_eq "mutate: 5 children" 5 "$(wc -l <"$T/kids.nd")"
expect_eq "mutate: all generated, gen 1, parent, island, unknown field kept" "generated 1 $sid 2 kept mutate best" \
	"$(jq -r '"\(.status) \(.generation) \(.parents[0]) \(.island) \(.note) \(.origin.generator) \(.origin.strategy.name)"' "$T/kids.nd" | sort -u)"
expect_eq "mutate: 5 distinct ids" 5 "$(jq -r .id "$T/kids.nd" | sort -u | wc -l)"
expect_eq "mutate: no base/inspirations in children" 0 "$(jq -c 'select(has("base") or has("inspirations"))' "$T/kids.nd" | wc -l)"
expect_eq "mutate: one or two changes each" "" "$(jq -c 'select((.origin.changes|length) < 1 or (.origin.changes|length) > 2)' "$T/kids.nd")"

# Each child differs from the parent in exactly the recorded knobs, and its id matches its source.
check_kids() {
	python3 - "$T/seed.nd" "$T/kids.nd" <<'EOF'
import hashlib, json, re, sys
parent = json.loads(open(sys.argv[1]).readline())["source"].split("\n")
bad = 0
for line in open(sys.argv[2]):
    r = json.loads(line)
    kid = r["source"].split("\n")
    diff = [i + 1 for i, (a, b) in enumerate(zip(parent, kid)) if a != b]
    want = sorted(c["line"] for c in r["origin"]["changes"])
    if len(parent) != len(kid) or diff != want:
        print("lines differ", diff, want); bad += 1
    for c in r["origin"]["changes"]:
        p, k = parent[c["line"] - 1], kid[c["line"] - 1]
        if not re.search(r"\b%s\b" % c["knob"], p) or p.replace(c["from"], c["to"], 1) != k or c["from"] == c["to"]:
            print("change not as recorded", c, p, k); bad += 1
    h = hashlib.sha256(b"ksci-v1\0tiny\0c\0" + r["source"].encode()).hexdigest()[:16]
    if h != r["id"]:
        print("id mismatch", r["id"]); bad += 1
sys.exit(1 if bad else 0)
EOF
}
ok "mutate: children differ from the parent in exactly the recorded knobs" check_kids

kgen --seed 1 --children 5 <"$T/req.nd" >"$T/kids2.nd"
expect_eq "mutate: same seed, same children" "$(jq -r .id "$T/kids.nd")" "$(jq -r .id "$T/kids2.nd")"
kgen --seed 2 --children 5 <"$T/req.nd" >"$T/kids3.nd"
if [ "$(jq -r .id "$T/kids.nd")" != "$(jq -r .id "$T/kids3.nd")" ]; then r=0; else r=1; fi
_report "$r" "mutate: another seed, other children"
expect_eq "mutate: origin.seed recorded" 2 "$(jq -r .origin.seed "$T/kids3.nd" | sort -u)"
kgen --children 1 <"$T/req.nd" >"$T/kids4.nd"
expect_eq "mutate: without --seed, strategy.seed is used" 7 "$(jq -r .origin.seed "$T/kids4.nd")"

# Duplicate avoidance against a gzip archive and within the run.
cat "$T/seed.nd" "$T/kids.nd" | gzip >"$T/archive.ndjson.gz"
kgen --seed 1 --children 3 --archive "$T/archive.ndjson.gz" <"$T/req.nd" >"$T/kids5.nd"
expect_eq "archive: 3 new children" 3 "$(wc -l <"$T/kids5.nd")"
expect_eq "archive: none already in the archive" "" \
	"$(cat "$T/kids.nd" "$T/kids5.nd" "$T/seed.nd" | jq -r .id | sort | uniq -d)"

# The archive is walked, not parsed line by line: a bad line is still
# reported with its number and the other ids still count; a gzip archive cut
# short is an error (exit 3), not a shorter archive.
{ echo 'not json'; cat "$T/seed.nd" "$T/kids.nd"; } | gzip >"$T/badline.gz"
kgen --seed 1 --children 3 --archive "$T/badline.gz" <"$T/req.nd" >"$T/kids6.nd" 2>"$T/badline.err"
expect_eq "archive with a bad line: exit 0" 0 "$?"
ok "archive with a bad line: warned with its number" grep -q "archive $T/badline.gz: line 1: not JSON" "$T/badline.err"
expect_eq "archive with a bad line: the other ids still count" "$(jq -r .id "$T/kids5.nd")" "$(jq -r .id "$T/kids6.nd")"
head -c "$(($(wc -c <"$T/archive.ndjson.gz") / 2))" "$T/archive.ndjson.gz" >"$T/cut.gz"
kgen --archive "$T/cut.gz" <"$T/req.nd" >/dev/null 2>"$T/cut.err"
expect_eq "truncated gzip archive: exit 4 (damaged, docs/exit-codes.md)" 4 "$?"
ok "truncated gzip archive: said so, with the repair" \
	grep -qE "^kgen: $T/cut.gz: damaged at byte 0 \(truncated gzip member\); repair with: karchive repair $T/cut.gz\$" "$T/cut.err"

# Knob space: 3 + 2 + 1 singles, 3*2 + 3*1 + 2*1 pairs = 17 children in all.
cat "$T/req.nd" "$T/req.nd" "$T/req.nd" | kgen --seed 3 --children 6 >"$T/all.nd"
expect_eq "exhaustion: 17 distinct children over three requests" "17 17" \
	"$(jq -r 'select(.status=="generated") | .id' "$T/all.nd" | wc -l) $(jq -r 'select(.status=="generated") | .id' "$T/all.nd" | sort -u | wc -l)"
cat "$T/seed.nd" "$T/all.nd" >"$T/full.nd"
kgen --seed 9 --archive "$T/full.nd" <"$T/req.nd" >"$T/ex.nd"
expect_eq "exhaustion: exit 0" 0 "$?"
expect_eq "exhaustion: gen_error exhausted, request kept" "gen_error exhausted $sid false" \
	"$(jq -r '"\(.status) \(.gen.status) \(.request.base.id) \(has("source"))"' "$T/ex.nd")"

# No knobs at all.
jq -c '.base.source = "void solve(void) {}\n"' "$T/req.nd" | kgen >"$T/nok.nd"
expect_eq "no knobs: gen_error no_knobs" "gen_error no_knobs" "$(jq -r '"\(.status) \(.gen.status)"' "$T/nok.nd")"
jq -c '.base.source = "foo(); // ktune: 1 2\n"' "$T/req.nd" | kgen >"$T/badk.nd"
expect_eq "bad knob line: gen_error bad_knob" "gen_error bad_knob" "$(jq -r '"\(.status) \(.gen.status)"' "$T/badk.nd")"

# Bad input: non-JSON line (reported with its number, skipped), missing field, unknown task.
{ echo 'not json'; cat "$T/req.nd"; echo '{"status":"selected","task":"tiny","backend":"c","parents":[],"base":null}'; } |
	kgen --seed 1 >"$T/bad.nd" 2>"$T/bad.err"
expect_eq "bad input: exit 1" 1 "$?"
expect_eq "bad input: the good request still made a child, the bad one is invalid" "generated invalid" \
	"$(jq -r .status "$T/bad.nd" | tr '\n' ' ' | sed 's/ $//')"
expect_eq "bad input: invalid names the field and line" 'kgen 3 missing field "generation"' \
	"$(jq -r 'select(.status=="invalid") | "\(.error.tool) \(.error.line) \(.error.message)"' "$T/bad.nd")"
ok "bad input: stderr names line 1 as not JSON" grep -q 'line 1: not JSON' "$T/bad.err"
printf '%s\n' "$seedreq" | jq -c '.task="nosuch"' | kgen >"$T/unk.nd" 2>/dev/null
expect_eq "unknown task: exit 1" 1 "$?"
expect_eq "unknown task: status invalid" invalid "$(jq -r .status "$T/unk.nd")"
printf '%s\n' "$seedreq" | jq -c '.backend="hip"' | kgen >"$T/nos.nd"
expect_eq "no seed for back end: gen_error no_seed" "gen_error no_seed" "$(jq -r '"\(.status) \(.gen.status)"' "$T/nos.nd")"

# Other statuses pass through untouched.
echo '{"status":"timed","id":"x","zz":1}' | kgen >"$T/pass.nd"
expect_eq "pass-through of non-requests" '{"status":"timed","id":"x","zz":1}' "$(cat "$T/pass.nd")"

# Usage errors.
kgen --children 0 </dev/null 2>/dev/null
expect_eq "usage: --children 0 exits 2" 2 "$?"
kgen --generator nosuch </dev/null 2>/dev/null
expect_eq "usage: unknown generator exits 2" 2 "$?"
kgen --archive "$T/nonexistent" </dev/null 2>/dev/null
expect_eq "missing archive exits 3" 3 "$?"
ok "--help exits 0" kgen --help

# mutate-ignored-the-bandits-knob: kselect's bandit over knobs names the knob
# its arm pulls (strategy.knob); mutate used to pick moves in its seeded order
# whatever the arm.  Now the arm's single moves come first, then its pairs.
for s in 1 2 3 4 5; do
	jq -c '.strategy = {name: "bandit", arm: "knob:VEC", knob: "VEC", seed: 7}' "$T/req.nd" |
		kgen --seed "$s" --children 3 >"$T/arm$s.nd"
done
expect_eq "strategy.knob VEC: the first child of each of 5 seeds changes VEC alone" "VEC VEC VEC VEC VEC" \
	"$(for s in 1 2 3 4 5; do head -n 1 "$T/arm$s.nd" | jq -r '.origin.changes | map(.knob) | join("+")'; done | xargs)"
expect_eq "then VEC's pairs (VEC has one other value: one single move)" "0" \
	"$(for s in 1 2 3 4 5; do sed -n '2,3p' "$T/arm$s.nd"; done | jq -r 'select(.origin.changes | map(.knob) | index("VEC") | not) | .id' | wc -l)"
expect_eq "origin.knob_arm says the arm and that the child changed it" '{"knob":"VEC","changed":true}' \
	"$(head -n 1 "$T/arm1.nd" | jq -c .origin.knob_arm)"
jq -c '.strategy = {name: "bandit", arm: "knob:NOPE", knob: "NOPE"}' "$T/req.nd" | kgen --seed 1 --children 5 >"$T/nope.nd"
expect_eq "an arm the base has no knob for: the seeded order, knob_arm.changed false" \
	"$(jq -r .id "$T/kids.nd" | xargs) false" "$(jq -r .id "$T/nope.nd" | xargs) $(jq -r .origin.knob_arm.changed "$T/nope.nd" | sort -u)"
done_testing
