#!/usr/bin/env bash
# t39-prompt-facts: what the model is told, read from the prompts kgen sends
# (issue #15).  A scripted model (the cmd provider) saves each prompt it gets
# by stage.  The records are built with jq to hold what ktime and kcompile
# write: time.sizes with SEM and flops/bytes, time.env of an H100 with its
# measured peaks, compile.resources.  The bugs it guards against:
#   facts-never-reach-model  resources, % of peak and the device were recorded
#                            but no prompt showed them;
#   knowledge-unfiltered     every knowledge file went into every prompt (the c
#                            softmax prompt got tensor-core and TMA advice);
#   notebook-forgets         an entry read "-> compile_error" with no error, a
#                            child 24 % faster than its parent read "0.783x vs
#                            seed", fixes were never mentioned.
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1
export KSCI_PROMPTS="$ROOT/data/prompts" KSCI_KNOWLEDGE="$ROOT/data/knowledge"
D=$KSCI_TASKS/softmax

# The model: saves the prompt as plan.N / write.N / fix.N, answers in kind.
# A write or fix answer holds the prompt's hash, so every answer is new code.
cat >model.sh <<SH
#!/bin/sh
p=\$(cat)
case \$p in
*"# A candidate kernel that failed"*) s=fix ;;
*"# What to do
1. List about"*) s=plan ;;
*) s=write ;;
esac
n=\$(ls $T/prompts | grep -c "^\$s\\.")
printf '%s' "\$p" >"$T/prompts/\$s.\$n"
if [ \$s = plan ]; then
	printf '\`\`\`json\n{"plans": [{"title": "vector loads", "hypothesis": "h", "rubric": ["r"], "min_uplift": 1, "max_uplift": 2, "innovation": 3}]}\n\`\`\`\n'
else
	printf '\`\`\`\n'
	cat "$D/seed.cu"
	printf '// answer %s\n\`\`\`\n' "\$(printf '%s' "\$p" | sha256sum | cut -c1-16)"
fi
SH
chmod +x model.sh
mkdir prompts

env_h100='{"device": "cuda", "gpu": "NVIDIA H100 80GB HBM3", "cuda_device": 0, "cc": "9.0", "sms": 132,
 "l2_bytes": 52428800, "mem_bytes": 85029158912, "cuda_runtime": 12040, "driver": "550.54.15",
 "sm_clock_mhz": 1980, "sm_clock_max_mhz": 1980, "mem_clock_mhz": 2619,
 "compiler": "Cuda compilation tools, release 12.4, V12.4.131", "peak_gbps": 3000, "peak_gflops": 50000}'
res='{"kernels": [{"name": "_Z12softmax_rowsPKfPfi", "registers": 40, "spill_stores": 0, "spill_loads": 0,
 "smem_bytes": 1024, "stack_bytes": 0}], "max_registers": 40, "max_smem_bytes": 1024, "spills": 0}'
# timed ID PARENT SPEEDUP_VS_SEED: a timed cuda softmax record, as ktime leaves it.
timed() {
	jq -nc --arg id "$1" --arg par "$2" --argjson sp "$3" --argjson env "$env_h100" --argjson res "$res" \
		--rawfile src "$D/seed.cu" '
	def size(r; c; seed_us): {size: {rows: r, cols: c},
		candidate: {median_us: (seed_us / $sp), mean_us: (seed_us / $sp), sem_us: 0.25, min_us: (seed_us / $sp), n: 40},
		baseline: {median_us: 50}, seed: {median_us: seed_us}, speedup_vs_baseline: (50 * $sp / seed_us),
		speedup_vs_seed: $sp, flops: (5 * r * c), bytes: (8 * r * c), converged: true};
	{id: $id, task: "softmax", backend: "cuda", generation: 1, parents: (if $par == "" then [] else [$par] end),
	 source: $src, origin: {generator: "seed"}, status: "timed",
	 compile: {ok: true, status: "ok", compiler: "Cuda compilation tools, release 12.4, V12.4.131",
		flags: ["-gencode", "arch=compute_90a,code=sm_90a", "-O3", "-std=c++17"], resources: $res},
	 time: {ok: true, status: "ok", method: "judge",
		sizes: [size(4096; 4096; 89.48), size(32768; 1000; 174.8)],
		speedup_vs_baseline: 0.6, speedup_vs_seed: $sp, env: $env}}'
}
# The archive: seed <- a mutate child (0.631x) <- "fuse passes" (0.783x: +24 % on
# its parent) <- "wider tiles" (compile error), fixed by a fix (0.8613x);
# "online softmax" came out wrong.
timed 5eed000000000001 "" 1 >seed.nd
timed 3a7e000000000002 5eed000000000001 0.631 | jq -c '.origin = {generator: "mutate", changes: []}' >mut.nd
timed a000000000000003 3a7e000000000002 0.783 |
	jq -c '.origin = {generator: "cmd", stage: "write", plan: {title: "fuse passes"}, hypothesis: "one pass saves a read"}' >a.nd
jq -c '.id = "b000000000000004" | .parents = ["a000000000000003"] | .status = "compile_error" | del(.time)
	| .compile = {ok: false, status: "error", message: "nvcc exited with status 2",
		log: "In file included from /tmp/ksci-c1/w.cu:1:\n/tmp/ksci-c1/k.cu(12): error: identifier \"TILEX\" is undefined\n\n1 error detected\n"}
	| .origin = {generator: "cmd", stage: "write", plan: {title: "wider tiles"}, hypothesis: "wider tiles"}' a.nd >b.nd
jq -c '.id = "c000000000000005" | .parents = ["b000000000000004"] | .time.speedup_vs_seed = 0.8613
	| .origin = {generator: "cmd", stage: "fix", fix_attempt: 1, fixes: "b000000000000004"}' a.nd >c.nd
jq -c '.id = "d000000000000006" | .parents = ["a000000000000003"] | .status = "wrong" | del(.time)
	| .verify = {ok: false, status: "wrong", message: "y[3] = 2, want 1"}
	| .origin = {generator: "cmd", stage: "write", plan: {title: "online softmax"}, hypothesis: "one read"}' a.nd >d.nd
cat seed.nd mut.nd a.nd b.nd c.nd d.nd | gzip >archive.gz
jq -c '{status: "selected", task, backend, generation: 2, parents: [.id], base: ., inspirations: [],
	strategy: {name: "best", seed: 7}, child: 0}' a.nd >req.nd

kgen --provider cmd --cmd "$T/model.sh" --children 1 --archive archive.gz <req.nd >out.nd 2>err
expect_eq "plan then write: one child, exit 0" "0 generated" "$? $(jq -r .status out.nd | xargs)"
kgen --provider cmd --cmd "$T/model.sh" --stage fix --archive archive.gz <d.nd >fix.nd 2>>err
expect_eq "fix: the wrong kernel passes, then its fixed child" "wrong generated" "$(jq -r .status fix.nd | xargs)"
expect_eq "one prompt per stage" "prompts/fix.0 prompts/plan.0 prompts/write.0" "$(echo prompts/*)"
sed 's/^/# /' err

# has STAGE NAME TEXT: the stage's prompt holds TEXT (fixed string).
has() { ok "$1: $2" grep -qF -- "$3" "prompts/$1.0"; }
hasnt() { not_ok_is "$1: $2" grep -qiE -- "$3" "prompts/$1.0"; }

for s in plan write fix; do
	has "$s" "facts-never-reach-model: the detected device" \
		"GPU: NVIDIA H100 80GB HBM3, compute capability 9.0 (sm_90), 132 SMs, 50.0 MiB L2"
	has "$s" "the device's measured peaks and ridge" \
		"Measured peaks: 3000 GB/s copy bandwidth (device-to-device, bytes read + written), 50000 GFLOP/s fp32 (cuBLAS SGEMM); ridge point 16.7 flop/byte"
	has "$s" "the device's clocks" "SM 1980 MHz (max 1980 MHz), memory 2619 MHz"
	has "$s" "facts-never-reach-model: registers, spills, shared memory of the base" \
		"- kernel _Z12softmax_rowsPKfPfi: 40 registers/thread, 1024 B static shared memory/block, 0 B stack frame, no spills"
	has "$s" "the occupancy they allow" "40 registers/thread allow at most 51 of 64 warps per SM (80%)"
	has "$s" "knowledge-unfiltered: the Hopper note (cuda on sm_90)" "## NVIDIA Hopper (H100/H200) notes"
	has "$s" "knowledge for the memory-bound base" "## When memory bandwidth binds"
	has "$s" "knowledge says what it was chosen for" \
		"(Notes chosen for the cuda back end, a memory-bound base, architecture sm_90.)"
	hasnt "$s" "knowledge-unfiltered: no compute-bound notes for a memory-bound base" \
		"## (Tensor cores|When compute binds|Register blocking|Tiling)"
	hasnt "$s" "knowledge-unfiltered: no other back end's notes" "## (AMD CDNA3|CPU kernels)"
	hasnt "$s" "no tag line reaches the model" "^tags:"
done
# 8*4096*4096 B in 89.48/0.783 = 114.3 us: 1174 GB/s = 39.1 % of 3000; floor 44.7 us.
for s in plan write; do
	has "$s" "facts-never-reach-model: per size, time, SEM and speedups" \
		"- rows=4096 cols=4096: 114.28 us (SEM 0.25 us, 40 batches); 0.438x vs baseline (50.00 us), 0.783x vs seed (89.48 us)"
	has "$s" "% of the measured peaks" "1174 GB/s = 39.1% of peak bandwidth, 734 GFLOP/s = 1.47% of peak fp32"
	has "$s" "the binding limit by the roofline, with its floor" \
		"memory-bound (0.625 flop/byte < ridge 16.7), roofline floor 44.7 us"
	has "$s" "the second size" "- rows=32768 cols=1000: 223.24 us"
	has "$s" "the binding limit over all sizes" "binding limit: memory at every size; at best 39.1% of the roofline"
done
has plan "the plan is told which limit binds" "By the roofline the limit that binds here is: memory."

# The notebook (plan).
has plan "notebook-forgets: child id, parent, plan, effect vs parent (+24 %) and vs seed" \
	"- a000000000000003 (child of 3a7e000000000002) \"fuse passes\": one pass saves a read -> timed, 1.241x vs parent, 0.783x vs seed"
has plan "notebook-forgets: the compile error's first line, and what its fix gave" \
	"- b000000000000004 (child of a000000000000003) \"wider tiles\" -> compile_error: k.cu(12): error: identifier \"TILEX\" is undefined; fixed by c000000000000005 -> timed, 1.100x vs a000000000000003"
has plan "notebook-forgets: the fix's own entry" \
	"- c000000000000005 (fix 1 of b000000000000004, child of a000000000000003) -> timed, 1.100x vs a000000000000003, 0.861x vs seed"
has plan "notebook: a wrong answer with verify.message" \
	"- d000000000000006 (child of a000000000000003) \"online softmax\": one read -> wrong: y[3] = 2, want 1"

# The fix prompt: the failed kernel has no time, the device comes from the
# archive, the roofline from the task's formulas at its benchmark sizes.
has fix "the failure" '"verify.message": "y[3] = 2, want 1"'
has fix "not timed, so the task's roofline per benchmark size" \
	"- rows=4096 cols=4096: memory-bound (0.625 flop/byte < ridge 16.7), roofline floor 44.7 us"

# The c back end on a CPU: no tensor cores, no TMA, no peaks.
rm prompts/*
jq -c '.backend = "c" | .id = "cccc000000000001" | .source = "void solve(const float* x, float* y, int rows, int cols) {}\n"
	| .time.env = {device: "cpu", cpu: "Test CPU 9000", cpus: 2, kernel: "6.1.0", compiler: "gcc 12.2.0"}
	| .compile = {ok: true, status: "ok", compiler: "gcc 12.2.0", flags: ["-std=gnu11", "-O3", "-march=native", "-fopenmp"]}
	| .time.sizes |= map(del(.flops, .bytes))' a.nd >ca.nd
jq -c '{status: "selected", task, backend, generation: 2, parents: [.id], base: ., inspirations: [],
	strategy: {name: "best", seed: 9}, child: 0}' ca.nd | kgen --provider cmd --cmd "$T/model.sh" --children 1 \
	--stage plan --archive archive.gz >cplan.nd 2>err
expect_eq "c softmax: planned" "selected" "$(jq -r .status cplan.nd | sort -u)"
has plan "c: the CPU" "CPU: Test CPU 9000, 2 logical CPUs online, Linux 6.1.0."
has plan "c: no peaks, so no binding limit" "binding limit unknown: no measured peaks for this device"
has plan "c: figures from the task's formulas" "1174 GB/s, 734 GFLOP/s"
has plan "c: no resources" "(the c back end reports no registers or shared memory)"
has plan "c: the CPU notes" "## CPU kernels (the c back end)"
hasnt plan "knowledge-unfiltered: the c softmax prompt gets no tensor-core advice" "tensor core|tensor-core|wgmma|mma\.sync"
not_ok_is "plan: knowledge-unfiltered: the c softmax prompt gets no TMA advice" grep -qw TMA prompts/plan.0
has plan "c: the notebook holds no cuda experiment" "(empty: no experiment on this task yet)"

done_testing
