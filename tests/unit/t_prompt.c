/* t_prompt: what the model is told (lib/gen/facts.h, lib/gen/prompt.h) —
 * the timing facts (time per size with its SEM, % of the measured peaks,
 * the binding limit and its roofline floor), the resources and the
 * occupancy they allow, the detected device, knowledge chosen by its tags,
 * and the lab notebook's entries (parent, effect vs parent, the reason of a
 * failure, what a fix gave).
 *
 * The bugs they guard against (issue #15): profiling facts never reached
 * the model (facts-never-reach-model); every knowledge file went into every
 * prompt, the c softmax prompt got tensor-core and TMA advice
 * (knowledge-unfiltered); a notebook entry read "-> compile_error" without
 * the error, "0.783x vs seed" for a child 24 % faster than its parent, and
 * never said what a fix gave (notebook-forgets). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen/facts.h"
#include "gen/prompt.h"
#include "rec.h"
#include "task.h"
#include "t.h"

static json_t *J(const char *s)
{
	json_error_t e;
	json_t *j = json_loads(s, 0, &e);
	if (!j)
		printf("# bad test JSON: %s: %s\n", e.text, s);
	return j;
}

static int has(const char *s, const char *w) { return s && strstr(s, w) != NULL; }

#define ENV_H100                                                                                                 \
	"{\"device\":\"cuda\",\"gpu\":\"NVIDIA H100 80GB HBM3\",\"cc\":\"9.0\",\"sms\":132,\"l2_bytes\":52428800,"  \
	"\"mem_bytes\":85029158912,\"cuda_runtime\":12040,\"driver\":\"550.54.15\",\"sm_clock_mhz\":1980,"        \
	"\"sm_clock_max_mhz\":1980,\"mem_clock_mhz\":2619,\"peak_gbps\":3000,\"peak_gflops\":50000}"

/* A timed cuda softmax-like record: 4096x4096 at 60 us (bytes 8*n, flops 5*n). */
static const char *SOFTMAX_REC =
	"{\"id\":\"s1\",\"task\":\"softmax\",\"backend\":\"cuda\",\"status\":\"timed\","
	"\"compile\":{\"ok\":true,\"compiler\":\"nvcc 12.4\",\"flags\":[\"-gencode\",\"arch=compute_90a,code=sm_90a\",\"-O3\"],"
	"\"resources\":{\"kernels\":[{\"name\":\"k1\",\"registers\":40,\"spill_stores\":0,\"spill_loads\":0,"
	"\"smem_bytes\":8192,\"stack_bytes\":0}],\"max_registers\":40,\"max_smem_bytes\":8192,\"spills\":0}},"
	"\"time\":{\"sizes\":[{\"size\":{\"rows\":4096,\"cols\":4096},\"candidate\":{\"median_us\":60,\"sem_us\":0.125,\"n\":40},"
	"\"baseline\":{\"median_us\":75},\"seed\":{\"median_us\":90},\"speedup_vs_baseline\":1.25,\"speedup_vs_seed\":1.5,"
	"\"flops\":83886080,\"bytes\":134217728,\"converged\":true}],\"speedup_vs_baseline\":1.25,\"speedup_vs_seed\":1.5,"
	"\"env\":" ENV_H100 "}}";

static void test_timings(void)
{
	json_t *r = J(SOFTMAX_REC);
	struct fact_ctx c = {"cuda", NULL, rec_path(r, "time.env")};
	char *t = fact_timings(r, &c);
	/* 134217728 B / 60 us = 2237 GB/s = 74.6 % of 3000; floor 134217728 / 3000e3 = 44.7 us */
	T_OK(has(t, "- rows=4096 cols=4096: 60.00 us (SEM 0.125 us, 40 batches)"), "timings: size, median and SEM");
	T_OK(has(t, "1.250x vs baseline (75.00 us), 1.500x vs seed (90.00 us)"), "timings: speedups with the roles' times");
	T_OK(has(t, "2237 GB/s = 74.6% of peak bandwidth"), "timings: GB/s as %% of the measured copy peak");
	T_OK(has(t, "1398 GFLOP/s = 2.80% of peak fp32"), "timings: GFLOP/s as %% of the measured SGEMM peak");
	T_OK(has(t, "memory-bound (0.625 flop/byte < ridge 16.7), roofline floor 44.7 us"),
	     "timings: the binding limit by the roofline, with intensity, ridge and floor");
	T_OK(has(t, "binding limit: memory at every size; at best 74.6% of the roofline"), "timings: the summary line");
	T_OK(t && t[strlen(t) - 1] != '\n', "timings: no trailing newline (the template lays out lines)");
	T_OK(fact_bound(r, &c) == FACT_MEMORY, "bound: memory");
	free(t);
	/* The same record with its speedups' intervals (ktime's *_ci). */
	json_t *rc = json_deep_copy(r);
	json_t *c0 = json_array_get(rec_path(rc, "time.sizes"), 0);
	json_object_set_new(c0, "speedup_vs_baseline_ci", json_pack("[f, f]", 1.2401, 1.2602));
	json_object_set_new(c0, "speedup_vs_seed_ci", json_pack("[f, f]", 1.488, 1.512));
	json_object_set_new(json_object_get(rc, "time"), "speedup_vs_seed_ci", json_pack("[f, f]", 1.488, 1.512));
	t = fact_timings(rc, &c);
	T_OK(has(t, "1.250x vs baseline [95 % interval 1.240-1.260] (75.00 us), 1.500x vs seed [95 % interval 1.488-1.512] (90.00 us)"),
	     "timings-show-intervals: each speedup with its 95 %% interval where ktime gave one");
	T_OK(has(t, "geometric mean: 1.250x vs baseline, 1.500x vs seed [95 % interval 1.488-1.512]"),
	     "…the geometric mean too (and none where the record has none)");
	free(t);
	json_decref(rc);

	/* Compute-bound: same bytes, 100x the flops, at 200 us: 41.9 TFLOP/s = 83.9 % of 50. */
	json_t *s0 = json_array_get(rec_path(r, "time.sizes"), 0);
	json_object_set_new(s0, "flops", json_real(8388608000.0));
	json_object_set_new(json_object_get(s0, "candidate"), "median_us", json_real(200));
	t = fact_timings(r, &c);
	T_OK(has(t, "41943 GFLOP/s = 83.9% of peak fp32") &&
		     has(t, "compute-bound (62.5 flop/byte >= ridge 16.7), roofline floor 168 us") &&
		     has(t, "binding limit: compute at every size; at best 83.9% of the roofline"),
	     "timings: compute-bound");
	T_OK(fact_bound(r, &c) == FACT_COMPUTE, "bound: compute");
	free(t);

	/* Tensor work has no measured compute peak: above the fp32 ridge it is unknown. */
	json_object_set_new(json_array_get(rec_path(r, "time.sizes"), 0), "flops_unit", json_string("tensor-f16"));
	t = fact_timings(r, &c);
	T_OK(has(t, "binding limit unknown: tensor-f16 work has no measured compute peak") &&
		     !has(t, "% of peak fp32"),
	     "timings: tensor work, no %% of the fp32 peak, no binding limit");
	T_OK(fact_bound(r, &c) == FACT_UNKNOWN, "bound: unknown for tensor work above the fp32 ridge");
	free(t);
	/* ... below the fp32 ridge it is memory-bound whatever the tensor peak. */
	json_object_set_new(json_array_get(rec_path(r, "time.sizes"), 0), "flops", json_real(83886080));
	T_OK(fact_bound(r, &c) == FACT_MEMORY, "bound: tensor work below the fp32 ridge is memory-bound");

	/* Two sizes binding differently: mixed. */
	json_t *s2 = json_deep_copy(json_array_get(rec_path(r, "time.sizes"), 0));
	json_object_del(s2, "flops_unit");
	json_object_set_new(s2, "flops", json_real(8388608000.0));
	json_array_append_new(rec_path(r, "time.sizes"), s2);
	json_object_del(json_array_get(rec_path(r, "time.sizes"), 0), "flops_unit");
	T_OK(fact_bound(r, &c) == FACT_MIXED, "bound: mixed when sizes differ");
	t = fact_timings(r, &c);
	T_OK(has(t, "binding limit: mixed (memory at 1 size, compute at 1)"), "timings: mixed summary");
	free(t);

	/* A device without peaks (the c back end): figures, no binding limit. */
	json_t *cpu = J("{\"device\":\"cpu\",\"cpu\":\"AMD EPYC 7B13\",\"cpus\":2,\"kernel\":\"6.1.0\"}");
	struct fact_ctx cc = {"c", NULL, cpu};
	t = fact_timings(r, &cc);
	T_OK(has(t, "671 GB/s, 419 GFLOP/s; binding limit unknown: no measured peaks") && !has(t, "% of peak"),
	     "timings: no peaks, no %% and no binding limit");
	T_OK(fact_bound(r, &cc) == FACT_UNKNOWN, "bound: unknown without peaks");
	free(t);
	json_decref(r);
	json_decref(cpu);

	/* Not timed: the task's roofline at its benchmark sizes (softmax, cuda). */
	char e[ERRBUF];
	const struct task *tk = task_get(NULL, "softmax", e);
	T_OK(tk != NULL, "the softmax task loads (%s)", tk ? "ok" : e);
	json_t *env = J(ENV_H100);
	json_t *failed = J("{\"status\":\"compile_error\",\"compile\":{\"ok\":false}}");
	struct fact_ctx fc = {"cuda", tk, env};
	t = fact_timings(failed, &fc);
	T_OK(has(t, "(not timed: status compile_error)") &&
		     has(t, "- rows=4096 cols=4096: memory-bound (0.625 flop/byte < ridge 16.7), roofline floor 44.7 us") &&
		     has(t, "- rows=32768 cols=1000: memory-bound"),
	     "timings of a failed kernel: the task's roofline per benchmark size");
	T_OK(fact_bound(failed, &fc) == FACT_MEMORY, "bound of a failed kernel: from the task's formulas");
	free(t);
	/* The task's formulas stand in for a record made before time.sizes had flops/bytes. */
	json_t *old = J("{\"status\":\"timed\",\"time\":{\"sizes\":[{\"size\":{\"rows\":4096,\"cols\":4096},"
			"\"candidate\":{\"median_us\":60}}]}}");
	t = fact_timings(old, &fc);
	T_OK(has(t, "2237 GB/s = 74.6% of peak bandwidth") && has(t, "memory-bound"), "timings: formulas from the task");
	free(t);
	json_decref(old);
	json_decref(failed);
	json_decref(env);
}

static void test_resources_device(void)
{
	json_t *r = J(SOFTMAX_REC);
	struct fact_ctx c = {"cuda", NULL, rec_path(r, "time.env")};
	char *t = fact_resources(r, &c);
	T_OK(has(t, "- kernel k1: 40 registers/thread, 8192 B static shared memory/block, 0 B stack frame, no spills"),
	     "resources: registers, shared memory, stack, spills");
	/* 40 registers: 1280 per warp, 65536 / 1280 = 51 warps of 64; 8192 + 1024 B: 228 KiB / 9216 = 25 blocks */
	T_OK(has(t, "allow at most 51 of 64 warps per SM (80%)") && has(t, "allow at most 25 blocks per SM"),
	     "resources: the occupancy bound by registers and shared memory");
	free(t);
	json_t *k = json_array_get(rec_path(r, "compile.resources.kernels"), 0);
	json_object_set_new(k, "spill_stores", json_integer(24));
	json_object_set_new(k, "spill_loads", json_integer(16));
	t = fact_resources(r, &c);
	T_OK(has(t, "SPILLS: 24 B stored, 16 B loaded"), "resources: spills stand out");
	free(t);
	struct fact_ctx nc = {"cuda", NULL, NULL};
	t = fact_resources(r, &nc);
	T_OK(has(t, "Occupancy: not estimated"), "resources: no occupancy without a known compute capability");
	free(t);
	struct fact_ctx cc = {"c", NULL, NULL};
	json_t *crec = J("{\"compile\":{\"ok\":true}}");
	t = fact_resources(crec, &cc);
	T_OK(has(t, "the c back end reports no registers"), "resources: the c back end has none");
	free(t);
	json_decref(crec);

	t = fact_device(&c, r);
	T_OK(has(t, "GPU: NVIDIA H100 80GB HBM3, compute capability 9.0 (sm_90), 132 SMs, 50.0 MiB L2"),
	     "device: GPU, capability, SMs, L2");
	T_OK(has(t, "SM 1980 MHz (max 1980 MHz), memory 2619 MHz") && has(t, "driver 550.54.15, CUDA runtime 12.4"),
	     "device: clocks and software");
	T_OK(has(t, "3000 GB/s copy bandwidth") && has(t, "50000 GFLOP/s fp32") && has(t, "ridge point 16.7 flop/byte"),
	     "device: measured peaks and the ridge");
	T_OK(has(t, "65536 32-bit registers, 228 KiB shared memory, at most 2048 resident threads"),
	     "device: per-SM limits of the compute capability");
	T_OK(has(t, "Compiled by nvcc 12.4 with: -gencode arch=compute_90a,code=sm_90a -O3"), "device: compiler and flags");
	free(t);
	json_t *cpu = J("{\"device\":\"cpu\",\"cpu\":\"AMD EPYC 7B13\",\"cpus\":2,\"kernel\":\"6.1.0\"}");
	struct fact_ctx pc = {"c", NULL, cpu};
	t = fact_device(&pc, NULL);
	T_OK(has(t, "CPU: AMD EPYC 7B13, 2 logical CPUs online, Linux 6.1.0") && has(t, "No measured peaks"),
	     "device: a CPU");
	free(t);
	t = fact_device(&nc, NULL);
	T_OK(has(t, "No device detected yet"), "device: none detected");
	free(t);

	/* Which device: the record's, else another's, else the notebook's newest of the task and back end. */
	json_t *nb = json_pack("[O, {s:s, s:s, s:{s:{s:s}}}]", r, "task", "softmax", "backend", "hip", "time", "env",
			       "gpu", "MI300X");
	json_t *bare = J("{\"status\":\"wrong\"}");
	T_OK(fact_env(r, NULL, NULL, NULL, NULL) == rec_path(r, "time.env"), "env: the record's own");
	T_OK(fact_env(bare, NULL, nb, "softmax", "cuda") == rec_path(r, "time.env"), "env: the notebook's, same back end");
	T_OK(fact_env(bare, NULL, nb, "softmax", "hip") == rec_path(json_array_get(nb, 1), "time.env"),
	     "env: the newest of the back end");
	T_OK(fact_env(bare, NULL, nb, "matmul", "cuda") == NULL, "env: none for another task");
	json_decref(nb);
	json_decref(bare);
	json_decref(cpu);

	char a[64];
	T_OK(strcmp(fact_arch(rec_path(r, "time.env"), NULL, a, sizeof a), "sm_90") == 0, "arch: from env.cc");
	T_OK(strcmp(fact_arch(NULL, r, a, sizeof a), "sm_90") == 0, "arch: from -gencode code=sm_90a, suffix cut");
	json_t *h = J("{\"compile\":{\"flags\":[\"--offload-arch=gfx942:xnack-\",\"-O3\"]}}");
	T_OK(strcmp(fact_arch(NULL, h, a, sizeof a), "gfx942") == 0, "arch: from --offload-arch, features cut");
	json_decref(h);
	T_OK(strcmp(fact_arch(NULL, NULL, a, sizeof a), "") == 0, "arch: none");
	json_decref(r);
}

/* ---- knowledge ---- */

static void put(const char *dir, const char *name, const char *text)
{
	char p[512];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	fputs(text, f);
	fclose(f);
}

static void test_tags(void)
{
	char e[ERRBUF];
	struct prm_fit cuda_mem = {"cuda", FACT_MEMORY, "sm_90"}, c_unk = {"c", FACT_UNKNOWN, ""};
	struct prm_fit cuda_none = {"cuda", FACT_COMPUTE, ""};
	T_OK(prm_tags_fit("## no tags\n", &c_unk, e) == 1, "tags: a file without a tag line fits anything");
	T_OK(prm_tags_fit("tags: backend=cuda,hip\n", &cuda_mem, e) == 1, "tags: back end listed");
	T_OK(prm_tags_fit("tags: backend=cuda,hip\n", &c_unk, e) == 0, "tags: back end not listed");
	T_OK(prm_tags_fit("tags: bottleneck=compute\n", &cuda_mem, e) == 0, "tags: the other bottleneck");
	T_OK(prm_tags_fit("tags: bottleneck=compute\n", &c_unk, e) == 1, "tags: an unknown binding limit fits any");
	T_OK(prm_tags_fit("tags: backend=cuda; bottleneck=memory; arch=sm_90a\n", &cuda_mem, e) == 1,
	     "tags: all three dimensions, sm_90a matches sm_90");
	T_OK(prm_tags_fit("tags: arch=sm_90\n", &cuda_none, e) == 0, "tags: an arch tag needs a detected architecture");
	T_OK(prm_tags_fit("tags:  backend = cuda ;  ; arch = sm_80 , sm_90 \n", &cuda_mem, e) == 1,
	     "tags: spaces and an empty clause");
	T_OK(prm_tags_fit("tags: arch=sm_80\n", &cuda_mem, e) == 0, "tags: another architecture");
	T_OK(prm_tags_fit("tags: backend=cuda; bottleneck=compute\n", &cuda_mem, e) == 0, "tags: every dimension must fit");
	T_OK(prm_tags_fit("tags: bakend=cuda\n", &cuda_mem, e) == -1 && has(e, "unknown tag key \"bakend\""),
	     "tags: an unknown key is an error (%s)", e);
	T_OK(prm_tags_fit("tags: backend=cude\n", &cuda_mem, e) == -1 && has(e, "cude"), "tags: an unknown back end");
	T_OK(prm_tags_fit("tags: bottleneck=latency\n", &cuda_mem, e) == -1, "tags: an unknown bottleneck");
	T_OK(prm_tags_fit("tags: backend\n", &cuda_mem, e) == -1, "tags: no value");
	T_OK(prm_tags_fit("tags: backend=cuda,\n", &cuda_mem, e) == -1, "tags: an empty value");

	char dir[] = "/tmp/t_prompt.XXXXXX";
	if (!mkdtemp(dir))
		return;
	put(dir, "a.md", "tags: backend=cuda\n## Alpha\ncuda only\n");
	put(dir, "b.md", "## Beta\nfor all\n");
	put(dir, "c.md", "tags: bottleneck=compute\n## Gamma\ncompute\n");
	put(dir, "notes.txt", "not markdown\n");
	char *k = prm_knowledge(dir, &cuda_mem, 48000, e);
	T_OK(k && has(k, "## Alpha\ncuda only") && has(k, "## Beta") && !has(k, "Gamma") && !has(k, "tags:") &&
		     !has(k, "not markdown"),
	     "knowledge: fitting files, tag lines removed");
	T_OK(has(k, "(Notes chosen for the cuda back end, a memory-bound base, architecture sm_90.)"),
	     "knowledge: says what it was chosen for");
	free(k);
	k = prm_knowledge(dir, &c_unk, 48000, e);
	T_OK(k && !has(k, "Alpha") && has(k, "Beta") && has(k, "Gamma"), "knowledge: the c back end, binding unknown");
	free(k);
	put(dir, "d.md", "tags: bottelneck=memory\n## Delta\n");
	k = prm_knowledge(dir, &c_unk, 48000, e);
	T_OK(!k && has(e, "d.md") && has(e, "bottelneck"), "knowledge: a malformed tag line names the file (%s)", e);
	free(k);
	const char *names[] = {"a.md", "b.md", "c.md", "d.md", "notes.txt"};
	for (size_t i = 0; i < 5; i++) {
		char p[512];
		snprintf(p, sizeof p, "%s/%s", dir, names[i]);
		unlink(p);
	}
	rmdir(dir);

	/* The shipped knowledge: every tag line parses, and each request gets what fits. */
	const char *kd = prm_knowledge_dir(NULL);
	static const char *const be[] = {"c", "cuda", "hip"};
	static const char *const ar[] = {"", "sm_90", "sm_80", "gfx942"};
	int all = 1;
	for (int i = 0; i < 3; i++)
		for (int b = 0; b < 4; b++)
			for (int a = 0; a < 4; a++) {
				struct prm_fit f = {be[i], (enum fact_bound)b, ar[a]};
				char *s = prm_knowledge(kd, &f, 48000, e);
				all &= s != NULL;
				free(s);
			}
	T_OK(all, "data/knowledge: every tag line parses");
	struct prm_fit csoft = {"c", FACT_UNKNOWN, ""};
	k = prm_knowledge(kd, &csoft, 48000, e);
	T_OK(k && !strcasestr(k, "tensor core") && !strstr(k, "TMA") && !strstr(k, "wgmma") && has(k, "CPU kernels"),
	     "knowledge-unfiltered: the c softmax prompt gets no tensor-core or TMA advice, and the CPU notes");
	free(k);
	k = prm_knowledge(kd, &cuda_mem, 48000, e);
	T_OK(k && has(k, "NVIDIA Hopper") && has(k, "When memory bandwidth binds") && !has(k, "## Tensor cores") &&
		     !has(k, "When compute binds") && !has(k, "AMD CDNA3") && !has(k, "CPU kernels"),
	     "knowledge: cuda, memory-bound, sm_90");
	free(k);
	struct prm_fit gemm = {"cuda", FACT_COMPUTE, "sm_80"};
	k = prm_knowledge(kd, &gemm, 48000, e);
	T_OK(k && has(k, "## Tensor cores") && has(k, "When compute binds") && !has(k, "NVIDIA Hopper") &&
		     !has(k, "When memory bandwidth binds"),
	     "knowledge: cuda, compute-bound, sm_80: no Hopper note");
	free(k);
	struct prm_fit mi = {"hip", FACT_MIXED, "gfx942"};
	k = prm_knowledge(kd, &mi, 48000, e);
	T_OK(k && has(k, "AMD CDNA3") && !has(k, "NVIDIA Hopper") && has(k, "When compute binds") &&
		     has(k, "When memory bandwidth binds"),
	     "knowledge: hip on gfx942, mixed: both bottlenecks' notes");
	free(k);
}

/* ---- the notebook ---- */

static void test_notebook(void)
{
	/* seed (1.0) <- mutate child m (0.631) <- a "fuse" (0.783, +24 %) <- b compile_error, fixed by c (0.8613) */
	json_t *recs = J(
		"[{\"id\":\"a1\",\"task\":\"softmax\",\"backend\":\"cuda\",\"parents\":[\"m1\"],\"status\":\"timed\","
		"  \"origin\":{\"plan\":{\"title\":\"fuse passes\"},\"hypothesis\":\"one pass saves a read\"},"
		"  \"time\":{\"speedup_vs_seed\":0.783}},"
		" {\"id\":\"b1\",\"task\":\"softmax\",\"backend\":\"cuda\",\"parents\":[\"a1\"],\"status\":\"compile_error\","
		"  \"origin\":{\"plan\":{\"title\":\"wider tiles\"},\"hypothesis\":\"wider tiles\"},"
		"  \"compile\":{\"ok\":false,\"message\":\"nvcc exited with status 2\",\"log\":\"In file included from x:\\n"
		"/tmp/ksci-x1/k.cu(12): error: identifier \\\"TILEX\\\" is undefined\\n1 error detected\\n\"}},"
		" {\"id\":\"c1\",\"task\":\"softmax\",\"backend\":\"cuda\",\"parents\":[\"b1\"],\"status\":\"timed\","
		"  \"origin\":{\"stage\":\"fix\",\"fix_attempt\":1,\"fixes\":\"b1\"},\"time\":{\"speedup_vs_seed\":0.8613}},"
		" {\"id\":\"d1\",\"task\":\"softmax\",\"backend\":\"cuda\",\"parents\":[\"a1\"],\"status\":\"wrong\","
		"  \"origin\":{\"hypothesis\":\"online softmax\"},\"verify\":{\"ok\":false,\"message\":\"y[3] = 2, want 1\"}},"
		" {\"id\":\"e1\",\"task\":\"softmax\",\"backend\":\"cuda\",\"parents\":[\"d1\"],\"status\":\"crashed\","
		"  \"origin\":{\"fixes\":\"d1\",\"fix_attempt\":1},\"verify\":{\"ok\":false,\"message\":\"signal 11\"}},"
		" {\"task\":\"softmax\",\"backend\":\"cuda\",\"parents\":[\"a1\"],\"status\":\"gen_error\","
		"  \"origin\":{\"plan\":{\"title\":\"split rows\"}},\"gen\":{\"ok\":false,\"status\":\"bad_edit\","
		"  \"message\":\"SEARCH text not found\"}},"
		" {\"id\":\"f1\",\"task\":\"softmax\",\"backend\":\"c\",\"parents\":[\"a1\"],\"status\":\"timed\","
		"  \"origin\":{\"hypothesis\":\"on the CPU\"},\"time\":{\"speedup_vs_seed\":2}},"
		" {\"id\":\"g1\",\"task\":\"matmul\",\"backend\":\"cuda\",\"parents\":[],\"status\":\"timed\","
		"  \"origin\":{\"hypothesis\":\"another task\"}}]");
	json_t *sp = J("{\"m1\": 0.631, \"s0\": 1.0}");
	char *nb = prm_notebook(recs, sp, "softmax", "cuda", 40);
	T_OK(has(nb, "- a1 (child of m1) \"fuse passes\": one pass saves a read -> timed, 1.241x vs parent, 0.783x vs seed"),
	     "notebook-forgets: effect vs parent from the two records' speedups (parent outside the notebook)");
	T_OK(has(nb, "- b1 (child of a1) \"wider tiles\" -> compile_error: k.cu(12): error: identifier \"TILEX\" is undefined"),
	     "notebook-forgets: the first error line of compile.log, directories cut, title once");
	T_OK(has(nb, "; fixed by c1 -> timed, 1.100x vs a1"), "notebook-forgets: the fix outcome on the failed entry");
	T_OK(has(nb, "- c1 (fix 1 of b1, child of a1) -> timed, 1.100x vs a1, 0.861x vs seed"),
	     "notebook: the fix's own entry, its effect against the failed kernel's parent");
	T_OK(has(nb, "- d1 (child of a1) online softmax -> wrong: y[3] = 2, want 1; fix e1 -> crashed"),
	     "notebook: wrong with verify.message, and a fix that failed");
	T_OK(has(nb, "- e1 (fix 1 of d1, child of a1) -> crashed: signal 11"), "notebook: a failed fix's reason");
	T_OK(has(nb, "- (no code) (child of a1) \"split rows\" -> gen_error: bad_edit: SEARCH text not found"),
	     "notebook: a gen_error's reason word and message");
	T_OK(!has(nb, "on the CPU") && !has(nb, "another task"), "notebook: only the task and back end asked for");
	free(nb);
	nb = prm_notebook(recs, NULL, "softmax", "cuda", 2);
	T_OK(!has(nb, "- a1") && has(nb, "- e1") && has(nb, "split rows") && !has(nb, "- d1"),
	     "notebook: the newest max entries");
	T_OK(has(nb, "child of a1"), "notebook: ids still name parents outside the window");
	free(nb);
	nb = prm_notebook(recs, NULL, "softmax", "cuda", 40);
	T_OK(has(nb, "- a1 (child of m1) \"fuse passes\": one pass saves a read -> timed, 0.783x vs seed"),
	     "notebook: no effect vs parent when the parent's time is unknown");
	free(nb);
	nb = prm_notebook(recs, NULL, "transpose", NULL, 40);
	T_OK(nb && strcmp(nb, "(empty: no experiment on this task yet)") == 0, "notebook: empty");
	free(nb);
	json_decref(recs);
	json_decref(sp);

	char b[256];
	T_OK(strcmp(prm_first_error("x.c: In function 'solve':\n/tmp/k/x.c:5:1: error: unknown type name 'this'\n", b,
				    sizeof b),
		    "x.c:5:1: error: unknown type name 'this'") == 0,
	     "first error: gcc (%s)", b);
	T_OK(strcmp(prm_first_error("ptxas fatal   : Unresolved extern function 'f'\r\n", b, sizeof b),
		    "ptxas fatal   : Unresolved extern function 'f'") == 0,
	     "first error: ptxas fatal");
	T_OK(strcmp(prm_first_error("all fine\nwarning: x\n", b, sizeof b), "") == 0, "first error: none");
}

int main(void)
{
	test_timings();
	test_resources_device();
	test_tags();
	test_notebook();
	return T_DONE();
}
