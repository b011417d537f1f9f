#!/usr/bin/env bash
# t41-compose: kgen --generator compose — the archive's per-size winners in
# one candidate that dispatches on the size: which records it takes (per-size
# speedup over the seed, a 2 % margin over the default, compositions and
# results held back as implausible never variants, a slow record's finished
# sizes as candidates for those sizes), what it refuses (c, no
# archive, nothing to compose, the same composition again), the record it
# writes, that nvcc compiles it (and a composition of every tuned seed's
# variants), and the pipelines' compose pass.
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1
seed=$ROOT/data/tasks/softmax/seed.cu
sed 's/^#define BLOCK 128 /#define BLOCK 256 /' "$seed" >b256.cu
sed 's/^#define ONLINE 0 /#define ONLINE 1 /' "$seed" >online.cu
# A timed cuda record: ID SOURCE speedup-at-4096x4096 at-32768x1000 overall [BACKEND]
timed() {
	jq -cn --arg id "$1" --rawfile s "$2" --argjson a "$3" --argjson b "$4" --argjson g "$5" --arg be "${6:-cuda}" \
		'{id: $id, task: "softmax", backend: $be, generation: 1, parents: [], source: $s, status: "timed",
		  time: {speedup_vs_seed: $g, speedup_vs_baseline: $g, sizes: [{size: {rows: 4096, cols: 4096}, speedup_vs_seed: $a},
		                                      {size: {rows: 32768, cols: 1000}, speedup_vs_seed: $b}]}}'
}
req() { echo "{\"task\": \"softmax\", \"backend\": \"${1:-cuda}\", \"generation\": 2, \"parents\": [], \"status\": \"selected\"}"; }
{ timed seedcopy "$seed" 1.0 1.0 1.0; timed bigblock b256.cu 1.5 0.8 1.095; timed online online.cu 0.9 1.4 1.12
  timed other-backend b256.cu 9 9 9 hip
  timed held-back online.cu 9 9 9 | jq -c '.time.implausible = {sizes: [], rechecked: true}'; } >arch.ndjson

req | kgen --generator compose --archive arch.ndjson >c.nd 2>c.err
expect_eq "winners differ: exit 0, one child" "0 1" "$? $(wc -l <c.nd)"
expect_eq "the child: generated, generation of the request, parents default first" \
	'generated|2|["online","bigblock"]' "$(jq -r '[.status, .generation, (.parents | tojson)] | join("|")' c.nd)"
expect_eq "origin: compose, the default is the best overall (1.12x)" "compose online" "$(jq -r '.origin | "\(.generator) \(.default)"' c.nd)"
ok "origin: 4096x4096 goes to bigblock (1.5x against the default's 0.9x), 32768x1000 stays with the default" jq -e '
	.origin.variants == [{id: "online", sizes: [{size: {rows: 32768, cols: 1000}, speedup_vs_seed: 1.4, default_speedup_vs_seed: 1.4}]},
	                     {id: "bigblock", sizes: [{size: {rows: 4096, cols: 4096}, speedup_vs_seed: 1.5, default_speedup_vs_seed: 0.9}]}]' c.nd
ok "the record of another back end is no variant (hip's 9x ignored)" jq -e '.parents | index("other-backend") == null' c.nd
ok "a result held back as above the device's peak is no variant (its 9x ignored)" jq -e '.parents | index("held-back") == null' c.nd
# A slow record (ktime --stop-slower stopped it at one size) that finished
# the other is a size's winner there, never the default
# (slow-record-finished-size-never-a-winner: the composer took timed records only).
{ cat arch.ndjson; jq -cn --rawfile s b256.cu '{id: "slow-fast-at-32768", task: "softmax", backend: "cuda", generation: 1, parents: [],
	source: $s, status: "slow", time: {slow: {size: {rows: 4096, cols: 4096}}, slow_sizes: [{size: {rows: 4096, cols: 4096}}],
	sizes: [{size: {rows: 32768, cols: 1000}, speedup_vs_seed: 2.0}]}}'; } >slow.ndjson
req | kgen --generator compose --archive slow.ndjson >cs.nd 2>/dev/null
ok "a slow record's finished size (2.0x at 32768x1000) is that size's winner; the default stays online" jq -e '.origin.default == "online"
	and (.origin.variants | map(select(.id == "slow-fast-at-32768")) | .[0].sizes | map(.size.rows)) == [32768]' cs.nd

jq -r .source c.nd >comp.cu
expect_eq "the source: marked, both variants in namespaces, one branch" "1 1 1 1" \
	"$(grep -c '^// ksci compose: 2 variants of task softmax; default online' comp.cu) $(grep -c '^namespace ksci_v0 {' comp.cu) $(grep -c '^namespace ksci_v1 {' comp.cu) $(grep -c 'ksci_v1::ksci_v1_solve(x, y, rows, cols);' comp.cu)"
ok "each variant keeps its own BLOCK (256 in the second)" grep -q '^#define BLOCK 256 ' comp.cu

if command -v "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" >/dev/null; then
	kcompile <c.nd >cc.nd 2>/dev/null
	expect_eq "nvcc compiles the composition" compiled "$(jq -r .status cc.nd)"
	ok "both variants' kernels are in it" jq -e '[.compile.resources.kernels[].name] | (map(test("ksci_v0")) | any) and (map(test("ksci_v1")) | any)' cc.nd
	# Every tuned seed composes: three of its variants (the defaults and two
	# knob changes) in one candidate, compiled.  A seed whose code cannot
	# live in a namespace (a global of one name, a macro it never undefines)
	# would break every composition the offline search makes.
	mk() { # TASK 'KNOB=V ...': the seed with those knobs
		local src kv
		src=$(cat "$ROOT/data/tasks/$1/seed.cu")
		for kv in $2; do src=$(printf '%s\n' "$src" | sed "s/^#define ${kv%%=*} [^ ]* /#define ${kv%%=*} ${kv#*=} /"); done
		printf '%s\n' "$src"
	}
	vt() { # ID TASK SOURCE K: timed, 2x the seed at size K, 1x elsewhere
		jq -cn --arg id "$1" --arg t "$2" --arg s "$3" --argjson k "$4" --slurpfile tj "$ROOT/data/tasks/$2/task.json" \
			'{id: $id, task: $t, backend: "cuda", generation: 1, parents: [], source: $s, status: "timed",
			  time: {speedup_vs_seed: 1.1, speedup_vs_baseline: 1.1,
			         sizes: [$tj[0].bench_cuda | to_entries[] | {size: .value, speedup_vs_seed: (if .key == $k then 2 else 1 end)}]}}'
	}
	while read -r t k1 k2; do
		{ vt "$t-a" "$t" "$(mk "$t" "")" 0; vt "$t-b" "$t" "$(mk "$t" "${k1//,/ }")" 1; vt "$t-c" "$t" "$(mk "$t" "${k2//,/ }")" 2; } >"seeds-$t.nd"
		echo "{\"task\": \"$t\", \"backend\": \"cuda\", \"generation\": 2, \"parents\": [], \"status\": \"selected\"}"
	done <<'VARIANTS' >seeds-req.nd
rowsum ROW_THREADS=8,VEC=4,UNROLL=1 SPLIT=64,FINISH=1
layernorm ROW_THREADS=32,CACHE=8 CLUSTER=4,CACHE=8
rmsnorm ROW_THREADS=1024,BLOCK=1024 ROW_THREADS=32,BLOCK=128
bias_gelu THREADS=512,ROWS=1 VEC=2
transpose TC=64,TR=128,LOADS=16 ALIGN=0,LOADS=16
matmul THREAD_TILE=1608,LANES_N=16,WARPS=24,FRAGDB=1 MINB=2
VARIANTS
	while IFS= read -r r; do
		t=$(jq -r .task <<<"$r")
		printf '%s\n' "$r" | kgen --generator compose --archive "seeds-$t.nd" 2>/dev/null
	done <seeds-req.nd | kcompile >seeds-c.nd 2>/dev/null
	expect_eq "every tuned seed composes with two of its variants, and nvcc compiles it" \
		"rowsum:compiled layernorm:compiled rmsnorm:compiled bias_gelu:compiled transpose:compiled matmul:compiled" \
		"$(jq -r '"\(.task):\(.status)"' seeds-c.nd | xargs)"
else
	echo "# no nvcc here: the composition's compile is not checked"
fi

# The composition, timed and best everywhere, is never a variant itself; the
# same winners give the same composition, which the archive already holds.
jq -c '.status = "timed" | .time = {speedup_vs_seed: 50, sizes: [{size: {rows: 4096, cols: 4096}, speedup_vs_seed: 50},
	{size: {rows: 32768, cols: 1000}, speedup_vs_seed: 50}]}' c.nd >>arch.ndjson
req | kgen --generator compose --archive arch.ndjson >again.nd 2>/dev/null
expect_eq "compositions-are-no-variants: the same composition again is nothing to compose" "gen_error nothing_to_compose" \
	"$(jq -r '"\(.status) \(.gen.status)"' again.nd)"
ok "…and the message says the archive holds it" jq -e '.gen.message | test("already in the archive")' again.nd

# The margin: a size's winner must beat the default there by more than 2 %.
{ timed seedcopy "$seed" 1.0 1.0 1.0; timed bigblock b256.cu 1.01 0.8 0.9; timed online online.cu 1.0 1.4 1.18; } >near.ndjson
req | kgen --generator compose --archive near.ndjson >near.nd 2>/dev/null
expect_eq "1 % better at a size is within the noise: nothing to compose" "gen_error nothing_to_compose" \
	"$(jq -r '"\(.status) \(.gen.status)"' near.nd)"
ok "…and the message names the default and the margin" jq -e '.gen.message | test("2 % faster than the best overall \\(online, 1.180x")' near.nd

: >empty.ndjson
req | kgen --generator compose --archive empty.ndjson >empty.nd 2>/dev/null
expect_eq "no timed record: nothing to compose" "gen_error nothing_to_compose" "$(jq -r '"\(.status) \(.gen.status)"' empty.nd)"
req c | kgen --generator compose --archive arch.ndjson >c-backend.nd 2>/dev/null
expect_eq "c has no namespaces: unsupported, exit 0" "0 gen_error unsupported" "$? $(jq -r '"\(.status) \(.gen.status)"' c-backend.nd)"

kgen --generator compose </dev/null >/dev/null 2>err
expect_eq "without --archive: usage error" "2 1" "$? $(grep -c 'needs --archive FILE' err)"
{ echo '{"id": "x", "status": "timed", "task": "softmax"}'; echo '{"backend": "cuda", "generation": 1, "parents": [], "status": "selected"}'; } |
	kgen --generator compose --archive arch.ndjson >mixed.nd 2>mixed.err
expect_eq "a record not selected passes; a request without a task is invalid (exit 1)" "1 timed invalid" \
	"$?$(jq -r '" " + .status' mixed.nd | xargs printf ' %s')"
ok "…named on stderr with its line" grep -q 'line 2: missing field "task"' mixed.err

printf '\037\213\010\000\000\000\000\000' >torn.gz
req | kgen --generator compose --archive torn.gz >/dev/null 2>torn.err
expect_eq "a damaged archive: exit 4 with the repair command" "4 1" "$? $(grep -c 'karchive repair' torn.err)"

# --- the pipelines: after each generation, when the winners differ ---------
if command -v "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" >/dev/null; then
	a=$T/run.ndjson.gz
	{ timed seedcopy "$seed" 1.0 1.0 1.0 | jq -c '.generation = 0 | .origin = {generator: "seed"}'
	  timed bigblock b256.cu 1.5 0.8 1.095; timed online online.cu 0.9 1.4 1.12; } | karchive append "$a"
	evolve.sh --task softmax --backend cuda --generations 2 --population 1 --archive "$a" -q 2>ev.err
	expect_eq "evolve.sh --backend cuda: exit 0" 0 $?
	zcat "$a" | jq -c 'select(.origin.generator == "compose")' >composed.nd
	expect_eq "one composition appended to generation 2 (no GPU here: unsupported at kverify)" "1 2 unsupported" \
		"$(wc -l <composed.nd) $(jq -r '"\(.generation) \(.status)"' composed.nd)"
	ok "its parents: the default and the size's winner" jq -e '.parents == ["online", "bigblock"]' composed.nd
	evolve.sh --task softmax --backend cuda --generations 3 --population 1 --archive "$a" -q 2>/dev/null
	expect_eq "the next generation: the same winners, nothing new to compose" 1 \
		"$(zcat "$a" | jq -c 'select(.origin.generator == "compose")' | wc -l)"
	p=$T/par.ndjson.gz
	zcat "$a" | jq -c 'select(.generation <= 1)' | karchive append "$p"
	evolve-parallel.sh --task softmax --backend cuda --generations 2 --population 1 --archive "$p" -q 2>par.err
	expect_eq "evolve-parallel.sh: exit 0, the same composition appended to generation 2" "0 1 2" \
		"$? $(zcat "$p" | jq -c 'select(.origin.generator == "compose")' | wc -l) $(zcat "$p" | jq -r 'select(.origin.generator == "compose") | .generation')"
	# compose-pass-bad-input-exit-1: the compose pass's kgen reporting bad
	# input (exit 1) makes the run exit 1, as one in the main step does
	# (docs/exit-codes.md); both pipelines exited 0. A kgen that exits 1 when
	# asked to compose stands for it.
	bad_input_tools wrap kgen "--generator compose"
	for ev in evolve.sh evolve-parallel.sh; do
		c=$T/bad-$ev.ndjson.gz
		zcat "$a" | jq -c 'select(.generation <= 1)' | karchive append "$c"
		KSCIBIN=$PWD/wrap "$ev" --task softmax --backend cuda --generations 2 --population 1 --archive "$c" -q 2>/dev/null
		expect_eq "compose-pass-bad-input-exit-1: $ev exits 1, the composition appended" "1 1" \
			"$? $(zcat "$c" | jq -c 'select(.origin.generator == "compose")' | wc -l)"
	done
	b=$T/off.ndjson.gz
	zcat "$a" | jq -c 'select(.generation <= 1)' | karchive append "$b"
	evolve.sh --task softmax --backend cuda --generations 2 --population 1 --archive "$b" -q --compose off 2>/dev/null
	expect_eq "--compose off: none" 0 "$(zcat "$b" | jq -c 'select(.origin.generator == "compose")' | wc -l)"
	evolve.sh --task softmax --backend cuda --generations 2 --compose maybe --archive "$b" 2>err
	expect_eq "--compose maybe: usage error" "2|evolve.sh: --compose: \"maybe\" is not on or off" "$?|$(cat err)"
else
	echo "# no nvcc here: the compose pass of the pipelines is not checked"
fi

done_testing
