#!/usr/bin/env bash
# t19-early-rejection: ktime --stop-slower stops timing a candidate that is
# far slower than the best so far (status slow, time.slow), and the pipelines
# pass it by default with the archive's best.  The bar is a factor of the
# best, and every candidate here is at least 5.6x to the right side of it: two
# identical c kernels have measured up to 2x apart on a 2-core machine under
# a load of 6-8 (docs/testing.md), which an 8x-slower candidate against a bar
# of 0.5 (2x from the seed's copy) did not survive.
. "$(dirname "$0")/lib.sh"
skip_without_bwrap
cd "$T" || exit 1
seed=$ROOT/data/tasks/rowsum/seed.c
rec() { jq -cn --arg id "$1" --rawfile s "$2" '{id: $id, task: "rowsum", backend: "c", generation: 1, parents: [], source: $s, status: "generated"}'; }
# The seed's solve, done 32 times over: right, and 32x slower.  The bar is
# 0.18 (sqrt(1/32)): the slow one 5.8x below it, the seed's copy 5.6x above.
{ sed 's/^void solve(/static void once(/' "$seed"
  printf 'void solve(const float* x, float* y, int rows, int cols)\n{\n\tfor (volatile int k = 0; k < 32; k++)\n\t\tonce(x, y, rows, cols);\n}\n'; } >slow.c
{ rec slow slow.c; rec same "$seed"; } | kcompile | kverify >v.nd
expect_eq "both verify" "verified verified" "$(jq -r .status v.nd | xargs)"

ktime --budget 0.3 --stop-slower 0.18 <v.nd >t.nd 2>t.err
expect_eq "--stop-slower 0.18: the 32x slower one is slow, the seed's copy timed" "slow timed" "$(jq -r .status t.nd | xargs)"
# Stopped on medians after --min-runs (10) batches (beyond doubt would need
# its fastest batch against the seed's slowest below 0.18 / 16 on the c back
# end: 1/32 is not).
ok "slow: time.slow says where and by how much" jq -se '.[0].time.slow | .speedup_vs_seed < 0.18 and .bound == 0.18 and
	.candidate_median_us > .seed_median_us and (.batches >= 10 or (.beyond_doubt and .batches >= 2)) and (.size | type) == "object"' t.nd
ok "slow: the message says why" jq -se '.[0].time.message | test("far slower than the best: 0\\.[0-9]+x the seed at size .* below the bound 0\\.180x; timing stopped")' t.nd
# Stopped at a size, it goes on to the next, where it is stopped again — as a
# rule (both sizes in slow_sizes), but the stop is decided once, on the
# first 12 batches' medians, and under the load of `make check` beside two
# busy loops one run of 3771 tests saw a size of it not stopped (the record
# was not kept; slow-size-finished-under-load).  A size it finished must then
# be one whose speed-up was not below the bound when it was checked.
slow_both='.[0].time | (.slow_sizes | length) >= 1 and (.slow_sizes | length) + (.sizes | length) == 2
	and all(.sizes[]; .speedup_vs_seed >= 0.18) and (has("speedup_vs_seed") | not)'
ok "slow: stopped at a size and went on to the other, stopped there too or finished only above the bound; no speed-up over all sizes" \
	jq -se "$slow_both" t.nd
# Where it was not stopped at both (or the check failed): what it was.
[ "$(jq -s '.[0].time.slow_sizes | length' t.nd)" = 2 ] || jq -c '{id, status, slow_sizes: .time.slow_sizes,
	sizes: [.time.sizes[]? | {size, speedup_vs_seed, candidate: .candidate.median_us, seed: .seed.median_us}]}' t.nd |
	sed 's/^/# not stopped at both sizes: /'
ktime --budget 0.3 --stop-slower 0.18 --best 32 <v.nd >t4.nd 2>/dev/null
expect_eq "--best 32: both below 0.18 x 32 = 5.76x the seed, both slow" "slow slow" "$(jq -r .status t4.nd | xargs)"
# far-slower-timed-min-runs-batches-before-its-stop: the median rule waits
# for --min-runs batches a role, each sized for the seed (on an H100 a
# candidate 32x slower than matmul's seed spent 6 x 0.64 s at 4096^3 before
# its stop).  Beyond doubt it stops after 2: here the seed's own copy against
# a bound of 1000x the seed, where even its fastest batch against the seed's
# slowest (about 1x; 3.4x seen under load) is far below 1000 / 16.
sed -n 2p v.nd | ktime --budget 0.3 --stop-slower 1 --best 1000 >tfar.nd 2>/dev/null
ok "far-slower-timed-min-runs-batches-before-its-stop: stopped beyond doubt after 2 batches a role, at both sizes" \
	jq -se '.[0] | .status == "slow" and .time.slow.beyond_doubt and .time.slow.batches == 2
	and (.time.slow_sizes | length) == 2 and all(.time.slow_sizes[]; .beyond_doubt and .batches == 2 and .far_factor == 16)' tfar.nd
ok "…the message says so" jq -se '.[0].time.message | test("after 2 batches \\(beyond doubt: its fastest batch against the seed.s slowest below the bound / 16\\)")' tfar.nd
ok "…and a stop on medians says it was not" jq -se '[.[] | select(.status == "slow") | .time.slow_sizes[] | select(.batches >= 10)] | all(.beyond_doubt == false)' t.nd t4.nd
# --best-sizes: a size's own best bounds it (slower-at-one-size-stopped-at-
# every-size: one best over all sizes bounded every size, so a kernel behind
# at one size was never timed at the others — where it may be the best).
# rowsum's c sizes are rows=1024 cols=4096 and rows=4 cols=1048576; this one
# is 32x slower only at the second.
{ sed 's/^void solve(/static void once(/' "$seed"
  printf 'void solve(const float* x, float* y, int rows, int cols)\n{\n\tfor (volatile int k = 0; k < (rows == 4 ? 32 : 1); k++)\n\t\tonce(x, y, rows, cols);\n}\n'; } >half.c
rec half half.c | kcompile | kverify >vh.nd
ktime --budget 0.3 --stop-slower 0.18 <vh.nd >th.nd 2>/dev/null
ok "slow at one size: status slow, stopped at that size only, the other timed into time.sizes" jq -se '.[0] | .status == "slow"
	and (.time.slow_sizes | map(.size.rows)) == [4] and .time.slow.size.rows == 4
	and (.time.sizes | map(.size.rows)) == [1024] and .time.sizes[0].speedup_vs_seed > 0.5' th.nd
ok "slow at one size: the message counts the sizes" jq -se '.[0].time.message | test("timing stopped there \\(1 of 2 sizes stopped, 1 timed\\)")' th.nd
ktime --budget 0.3 --stop-slower 0.18 --best 32 --best-sizes '{"rows=1024 cols=4096": 1, "rows=4 cols=1048576": 1}' <v.nd >tb.nd 2>/dev/null
expect_eq "--best-sizes overrides --best per size: the seed's copy timed, the 32x one slow" "slow timed" "$(jq -r .status tb.nd | xargs)"
ok "--best-sizes: the bound at each size is F x the size's own best" jq -se '.[0].time.slow_sizes | map(.bound) == [0.18, 0.18]' tb.nd
ktime --budget 0.3 --stop-slower 0.18 --best-sizes '{"rows=4 cols=1048576": 32}' <v.nd >tp.nd 2>/dev/null
ok "--best-sizes: a size not in it is bounded by --best (1)" jq -se '.[1] | .status == "slow" and (.time.slow_sizes | map(.size.rows)) == [4]
	and (.time.sizes | map(.size.rows)) == [1024]' tp.nd
for bad in '[1]' '{"rows=4 cols=1048576": "x"}' '{"a": 0}' 'nope'; do
	ktime --stop-slower 0.5 --best-sizes "$bad" </dev/null >/dev/null 2>err
	expect_eq "--best-sizes '$bad': usage error, exit 2, says so first" "2 1" "$? $(head -n 1 err | grep -c '^ktime: --best-sizes: ')"
done

ktime --budget 0.3 <v.nd >t0.nd 2>/dev/null
expect_eq "without --stop-slower: both timed in full" "timed timed" "$(jq -r .status t0.nd | xargs)"
ok "without --stop-slower: the slow one measures below 0.18x the seed" jq -se '.[0].time.speedup_vs_seed < 0.18' t0.nd
ktime --budget 0.3 --force <t.nd >tf.nd 2>/dev/null
expect_eq "--force re-times a slow record" "timed timed" "$(jq -r .status tf.nd | xargs)"

# --- the pipelines pass it, with the archive's best --------------------------
# An archive whose best (a timed record, the seed's source) claims 100x the
# seed, with an interval to match (the crown needs its lower end above the
# seed's): every child of the generation is far below 0.5 x 100.
a=$T/run.ndjson.gz
evolve.sh --task rowsum --generations 0 --population 2 --budget 0.05 --archive "$a" -q 2>/dev/null
zcat "$a" | jq -c 'select(.generation == 0) | .id = "claims-100x" | .time.speedup_vs_seed = 100 | .time.speedup_vs_baseline = 100
	| .time.speedup_vs_seed_ci = [99, 101] | .time.speedup_vs_baseline_ci = [99, 101] | .time.sizes[].speedup_vs_seed = 100' |
	karchive append "$a"
evolve.sh --task rowsum --generations 1 --population 3 --budget 0.05 --archive "$a" -q 2>err
expect_eq "evolve.sh: exit 0" 0 $?
expect_eq "evolve.sh: every child of generation 1 verified and stopped as slow" "slow slow slow" \
	"$(zcat "$a" | jq -r 'select(.generation == 1) | .status' | xargs)"
ok "evolve.sh: the bound is 0.5 x the archive's best" \
	jq -se 'map(select(.generation == 1) | .time.slow.bound == 50) | all' <(zcat "$a")
# children-of-a-composition-all-slow: the best over all sizes (a
# composition, 316x the seed) is far ahead at one size only (100000x); the
# other size's best is the seed's own speed (1x; the seed's record says so
# too, whatever it measured under load).  At --stop-slower 0.01 every child
# is stopped at the first size alone (bound 1000, children near 1x) and
# timed at the second (bound 0.01): margins of 1000x and 100x.  With a bound
# of 10 (a 1000x composition) this failed once under a heavier load than
# check-under-load.sh's (7e1d877); its directory went with it, so what the
# child was is not known.  The likeliest: a child measured past the bound at
# rows=4, where a call takes microseconds and --budget 0.05 gives a few
# batches, so one preempted seed batch moves the ratio far.
c=$T/comp.ndjson.gz
zcat "$a" | jq -c 'select(.generation == 0 and .id != "claims-100x") | .time.sizes[].speedup_vs_seed = 1' | karchive append "$c"
zcat "$c" | jq -c '.id = "composition-316x" | .time.speedup_vs_seed = 316.2 | .time.speedup_vs_baseline = 316.2
	| .time.speedup_vs_seed_ci = [316.1, 316.3] | .time.speedup_vs_baseline_ci = [316.1, 316.3]
	| .time.sizes[0].speedup_vs_seed = 100000 | .time.sizes[1].speedup_vs_seed = 1' | karchive append "$c"
evolve.sh --task rowsum --generations 1 --population 3 --budget 0.05 --archive "$c" -q --compose off --stop-slower 0.01 2>err
expect_eq "children-of-a-composition-all-slow: exit 0" 0 $?
all_slow='map(select(.generation == 1)) | length == 3 and all(.status == "slow" and (.time.slow_sizes | map(.bound)) == [1000]
	and (.time.sizes | length) == 1 and (.time.sizes[0].size.rows == 4))'
ok "children-of-a-composition-all-slow: each child stopped at the composition's size alone (bound 1000), timed at the other" \
	jq -se "$all_slow" <(zcat "$c")
# When it fails, say what each child was.
zcat "$c" | jq -se "$all_slow" >/dev/null ||
	zcat "$c" | jq -c 'select(.generation == 1) | {id, status, parents, slow_sizes: .time.slow_sizes,
		sizes: [.time.sizes[]? | {size, speedup_vs_seed}], message: (.time.message // .verify.message // .compile.message)}' |
	sed 's/^/#   /'
b=$T/full.ndjson.gz
zcat "$a" | jq -c 'select(.generation == 0)' | karchive append "$b"
evolve.sh --task rowsum --generations 1 --population 3 --budget 0.05 --archive "$b" -q --stop-slower 0 2>/dev/null
expect_eq "evolve.sh --stop-slower 0: every child timed in full" "timed timed timed" \
	"$(zcat "$b" | jq -r 'select(.generation == 1) | .status' | xargs)"
evolve.sh --task rowsum --generations 2 --archive "$b" --stop-slower 1.5 2>err
expect_eq "evolve.sh --stop-slower 1.5: usage error, exit 2" "2|evolve.sh: --stop-slower: 1.5 is outside 0..1" "$?|$(cat err)"

# Regression (the-seed-is-never-stopped-as-slow): with nothing timed yet the
# pipelines pass no early rejection, so the seed of generation 0 is always
# timed in full — under load an identical copy measured 2x off and the seed,
# stopped as slow, left no parent (t70, 2026-11-26).
(
	# shellcheck disable=SC2030 # this subshell's own
	stop_slower=0.5 best=1 best_id=""
	. "$ROOT/pipelines/evolve-lib.sh"
	stop_slower=0.5 best=1 best_id=""
	evolve_time_opts --ktime-opt
	echo "none:${gen_time[*]}" >opts.txt
	best_id=abc best=2 best_sizes="{}"
	evolve_time_opts --ktime-opt
	echo "some:${gen_time[*]}" >>opts.txt
)
expect_eq "the-seed-is-never-stopped-as-slow: no --stop-slower while nothing is timed, then the bound" \
	"none: some:--ktime-opt --stop-slower=0.5 --ktime-opt --best=2 --ktime-opt --best-sizes={}" "$(paste -sd ' ' opts.txt)"
# Regression (best-sizes-out-of-range): a size timed under load at 2.5e9x the
# seed (before the harness held such sizes back) was passed as it was to
# ktime --best-sizes, which takes 1e-6..1e9: every job of the next generation
# exited 3 (t81 in CI).  The pipelines keep the bounds within ktime's range.
o=$T/outlier.ndjson.gz
zcat "$a" | jq -c 'select(.generation == 0 and .id != "claims-100x")' >"$T/o.nd"
jq -c '.id = "0utlier0utlier00" | .generation = 1 | .parents = [] | .time.sizes[1].speedup_vs_seed = 2.5e9
	| .time.speedup_vs_seed = 5e4 | .time.speedup_vs_seed_ci = [4e4, 6e4] | .time.speedup_vs_baseline = 5e4
	| .time.speedup_vs_baseline_ci = [4e4, 6e4]' "$T/o.nd" >"$T/o2.nd"
cat "$T/o.nd" "$T/o2.nd" | karchive append "$o"
(
	. "$ROOT/pipelines/evolve-lib.sh"
	archive=$o task=rowsum backend=c stop_slower=0.5
	evolve_read_state
	evolve_time_opts
	printf '%s\n' "${gen_time[@]}" >outlier.opts
)
ok "best-sizes-out-of-range: the bounds handed to ktime are within 1e-6..1e9 (the size's 2.5e9 as 1e9)" \
	jq -Rne '[inputs | select(startswith("--best-sizes=")) | ltrimstr("--best-sizes=") | fromjson | to_entries[]
		| .value] | length == 2 and max == 1e9 and min >= 1e-6' outlier.opts
mapfile -t opts <outlier.opts
zcat "$a" | jq -c 'select(.generation == 0)' | ktime --budget 0.05 "${opts[@]}" >/dev/null 2>outlier.err
expect_eq "…and ktime takes them" 0 "$?"
s=$T/seedonly.ndjson.gz
evolve.sh --task rowsum --generations 0 --budget 0.05 --archive "$s" -q --stop-slower 1 2>/dev/null
expect_eq "…end to end: the seed of generation 0 timed in full at --stop-slower 1 (bound = its own speed)" timed \
	"$(zcat "$s" | jq -r .status)"

done_testing
