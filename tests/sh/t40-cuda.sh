#!/usr/bin/env bash
# The cuda and hip back ends where there is no GPU: nvcc/hipcc compile,
# resources in the record, the gfx942 message (and nvcc's for an unknown
# architecture), and kverify/ktime saying
# "unsupported" instead of pretending.  Skips what the machine lacks.
. "$(dirname "$0")/lib.sh"

rec() { # TASK SOURCE-FILE BACKEND [STATUS]
	jq -cn --arg t "$1" --rawfile s "$2" --arg b "$3" --arg st "${4:-generated}" \
		'{task: $t, backend: $b, generation: 0, parents: [], source: $s, status: $st}'
}
field() { jq -r "$1" "$2"; }

if command -v "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" >/dev/null; then
	rec matmul "$ROOT/data/tasks/matmul/seed.cu" cuda >"$T/mm.json"
	kcompile <"$T/mm.json" >"$T/mm.c.json"
	expect_eq "cuda seed compiles" compiled "$(field .status "$T/mm.c.json")"
	# The seed's two instances of one templated kernel: sgemm<true> (whole
	# tiles) and sgemm<false> (checked).
	expect_eq "ptxas kernel names in resources" "_Z5sgemmILb0EEvPKfS1_Pfiii _Z5sgemmILb1EEvPKfS1_Pfiii" \
		"$(jq -r '[.compile.resources.kernels[].name] | sort | join(" ")' "$T/mm.c.json")"
	ok "registers recorded, no spills" jq -e '.compile.resources.max_registers > 0 and
		all(.compile.resources.kernels[]; .spill_stores == 0 and .spill_loads == 0)' "$T/mm.c.json"
	expect_eq "shared cudart (one runtime with the harness)" true \
		"$(jq '.compile.flags | index("shared") != null' "$T/mm.c.json")"
	kcompile <"$T/mm.json" >"$T/mm.c2.json"
	expect_eq "second compile is a cache hit" true "$(field .compile.cached "$T/mm.c2.json")"
	# compile-seconds-left-out-the-plan: the stage's seconds were the
	# compiler's run alone, without nvcc's --dryrun plan and the build
	# directory (0.07 s of a cuda compile on an H100 machine).  Now all of
	# it, the compiler's part apart; a cache hit keeps the compile's in
	# compile_seconds.
	ok "compile-seconds-left-out-the-plan: seconds cover the plan and the compiler, compiler_seconds the compiler" \
		jq -e '.compile.steps == "parallel" and .compile.seconds > .compile.compiler_seconds and .compile.compiler_seconds > 0' "$T/mm.c.json"
	ok "...a cache hit keeps both of the compile that made it" \
		jq -se '.[0].compile.seconds == .[1].compile.compile_seconds and .[0].compile.compiler_seconds == .[1].compile.compiler_seconds' \
		"$T/mm.c.json" "$T/mm.c2.json"
	# bad-cuda-arch-was-the-source's-error: an architecture nvcc does not
	# know (--cuda-arch sm90a) made every candidate a compile_error of its
	# own, cached, which a model provider's fix pass would send to be fixed;
	# it is unsupported (the machine's target), with nvcc's words and what
	# to give instead.
	rec softmax "$ROOT/data/tasks/softmax/seed.cu" cuda | kcompile --cuda-arch sm90a >"$T/arch.json" 2>"$T/arch.err"
	expect_eq "an architecture nvcc does not know: exit 0, unsupported" "0 unsupported unsupported" \
		"$? $(jq -r '"\(.status) \(.compile.status)"' "$T/arch.json")"
	ok "...the message quotes nvcc and says what to give" jq -e '.compile.message |
		test("Unsupported gpu architecture .sm90a.") and test("--cuda-arch or KSCI_CUDA_ARCH")' "$T/arch.json"
	# A knob value the kernel rejects is a compile error, not a crash later
	# (a value off the ktune list: mutate never writes it, a model might).
	sed 's/^#define THREAD_TILE 808 /#define THREAD_TILE 606 /' "$ROOT/data/tasks/matmul/seed.cu" >"$T/big.cu"
	rec matmul "$T/big.cu" cuda | kcompile >"$T/big.json"
	expect_eq "static_assert on the micro-tile" compile_error "$(field .status "$T/big.json")"
	ok "the compiler's message is kept" grep -q "THREAD_TILE is TM\*100+TN, multiples of 4" "$T/big.json"
	# Without a GPU: unsupported, with the reason.
	for t in softmax matmul; do
		rec "$t" "$ROOT/data/tasks/$t/seed.cu" cuda | kcompile | kverify >"$T/v.json" 2>/dev/null
		st=$(field .status "$T/v.json")
		if [ "$st" = unsupported ]; then
			ok "$t: kverify says no CUDA device" grep -q "no CUDA device" "$T/v.json"
			rec "$t" "$ROOT/data/tasks/$t/seed.cu" cuda verified | ktime >"$T/t.json" 2>/dev/null
			expect_eq "$t: ktime unsupported too" unsupported "$(field .status "$T/t.json")"
		else
			echo "# a GPU is here (kverify: $st); see make check-gpu"
		fi
	done
	rec axpy "$ROOT/tests/gpu/tasks/axpy/seed.cu" cuda | KSCI_TASKS=$ROOT/tests/gpu/tasks kcompile >"$T/ax.json"
	expect_eq "tests/gpu task compiles" compiled "$(field .status "$T/ax.json")"
	# nvcc's steps run as two halves at once (lib/nvcc_steps.h) against nvcc
	# alone: the same verdict, the same compiler output (ptxas's timings
	# aside) and the same registers, for a kernel that compiles, one with
	# warnings from both front ends, and errors of each half.
	expect_eq "cuda compiles run nvcc's steps two halves at once" parallel "$(field .compile.steps "$T/mm.c.json")"
	printf '%s\n' '__global__ void k(float *x) { int unused = 3; x[0] = 1.f; }' \
		'extern "C" void solve(const float* x, float* y, int rows, int cols) { int hv; k<<<1, 1>>>(y); }' >"$T/warn.cu"
	printf '%s\n' '__global__ void k(float *x) { x[0] = 1.f }' \
		'extern "C" void solve(const float* x, float* y, int rows, int cols) { }' >"$T/syntax.cu"
	printf '%s\n' '__global__ void k(float *x) { x[0] = no_such_device_fn(); }' \
		'extern "C" void solve(const float* x, float* y, int rows, int cols) { }' >"$T/undef.cu"
	printf '%s\n' '__device__ int h(); __global__ void k(float *x) { x[0] = h(); }' \
		'extern "C" void solve(const float* x, float* y, int rows, int cols) { k<<<1, 1>>>(y); }' >"$T/devlink.cu"
	for c in seed warn syntax undef devlink; do
		src=$T/$c.cu
		[ "$c" = seed ] && src=$ROOT/data/tasks/softmax/seed.cu
		for m in parallel serial; do
			rec softmax "$src" cuda | KSCI_NVCC_STEPS=$m kcompile --no-cache >"$T/$c.$m.json" 2>/dev/null
			jq -r '.compile.log // ""' "$T/$c.$m.json" | grep -v "Compile time = " >"$T/$c.$m.log"
		done
		expect_eq "$c: the steps ran as two halves" parallel "$(field .compile.steps "$T/$c.parallel.json")"
		expect_eq "$c: the same verdict as nvcc alone" "$(field '[.status, .compile.message] | tostring' "$T/$c.serial.json")" \
			"$(field '[.status, .compile.message] | tostring' "$T/$c.parallel.json")"
		ok "$c: the same compiler output as nvcc alone" diff "$T/$c.serial.log" "$T/$c.parallel.log"
		expect_eq "$c: the same registers, spills and shared memory" "$(field '.compile.resources | tojson' "$T/$c.serial.json")" \
			"$(field '.compile.resources | tojson' "$T/$c.parallel.json")"
	done
	expect_eq "nvcc alone says why" "KSCI_NVCC_STEPS=serial" "$(field .compile.steps_why "$T/seed.serial.json")"
	# nvcc-steps-intermediates-in-the-cache: the kept steps' 4 MB of
	# preprocessed source went into every cache entry (for a 100 KB out.so).
	rec softmax "$ROOT/data/tasks/softmax/seed.cu" cuda | kcompile --no-cache >"$T/seed.again.json" 2>/dev/null
	entry=$(dirname "$(field .compile.artifact "$T/seed.again.json")")
	ok "the cache entry keeps the steps' recipe, not their intermediates" \
		sh -c "test -f '$entry/ksci-steps.sh' && ! test -e '$entry/ksci-steps' && test \$(du -sk '$entry' | cut -f1) -lt 1024"
	ok "warnings of both front ends are kept" grep -q 'variable "hv" was declared but never referenced' "$T/warn.parallel.log"
	expect_eq "a syntax error is reported once" 1 "$(grep -c 'error: expected a ";"' "$T/syntax.parallel.log")"
	if command -v nm >/dev/null; then
		ok "the object exports what nvcc's does" diff <(nm -D --defined-only "$(field .compile.artifact "$T/seed.serial.json")" | awk '{print $3}') \
			<(nm -D --defined-only "$(field .compile.artifact "$T/seed.parallel.json")" | awk '{print $3}')
	fi
	# The host link with gold where ld.gold is there (0.17 -> 0.04 s of
	# matmul's link here): the device code in the .so is the same bytes.
	if [ -x /usr/bin/ld.gold ] && command -v objcopy >/dev/null; then
		rec matmul "$ROOT/data/tasks/matmul/seed.cu" cuda >"$T/mmg.json"
		kcompile --no-cache <"$T/mmg.json" >"$T/mm.gold.json" 2>/dev/null
		KSCI_HOST_LD=default kcompile --no-cache <"$T/mmg.json" >"$T/mm.ld.json" 2>/dev/null
		expect_eq "links with gold where ld.gold is on the PATH" '["-Xcompiler","-fuse-ld=gold"]' \
			"$(jq -c '.compile.flags[-2:]' "$T/mm.gold.json")"
		expect_eq "...not with KSCI_HOST_LD=default" false "$(jq '.compile.flags | index("-fuse-ld=gold") != null' "$T/mm.ld.json")"
		# Every kernel's machine code (the .text sections of each cubin in
		# the .so's fatbinary; the rest holds the build directory's name).
		texts() {
			objcopy -O binary --only-section=.nv_fatbin "$1" "$T/fb"
			grep -obUaP '\x7fELF' "$T/fb" | cut -d: -f1 | while read -r off; do
				tail -c +$((off + 1)) "$T/fb" >"$T/elf"
				readelf -S -W "$T/elf" 2>/dev/null | grep -o ' \.text\.[^ ]*' | while read -r sec; do
					readelf -x "$sec" "$T/elf" 2>/dev/null
				done
			done
		}
		texts "$(field .compile.artifact "$T/mm.gold.json")" >"$T/text.gold"
		texts "$(field .compile.artifact "$T/mm.ld.json")" >"$T/text.ld"
		ok "...the same machine code of both kernels either way" sh -c "grep -q sgemm '$T/text.gold' && cmp '$T/text.gold' '$T/text.ld'"
		# (gold also exports the linker's own __bss_start, _edata and _end.)
		exports() { nm -D --defined-only "$(field .compile.artifact "$1")" | awk '$3 !~ /^(__bss_start|_edata|_end)$/ {print $3}'; }
		exports "$T/mm.gold.json" >"$T/exports"
		ok "...the same exports" diff "$T/exports" <(exports "$T/mm.ld.json")
		ok "...ksci_call and solve among them" sh -c "grep -qx ksci_call '$T/exports' && grep -qx solve '$T/exports'"
	fi
else
	echo "# no nvcc: cuda compile tests skipped"
fi

if command -v "${KSCI_HIPCC:-hipcc}" >/dev/null; then
	cat >"$T/s.hip" <<'HIP'
__global__ void k(const float* x, float* y, int n)
{
	__shared__ float t[256];
	int i = blockIdx.x * 256 + threadIdx.x;
	t[threadIdx.x] = i < n ? x[i] : 0.f;
	__syncthreads();
	if (i < n)
		y[i] = expf(t[threadIdx.x] - t[0]);
}
extern "C" void solve(const float* x, float* y, int rows, int cols)
{
	int n = rows * cols;
	if (n > 0)
		k<<<(n + 255) / 256, 256>>>(x, y, n);
}
HIP
	rec softmax "$T/s.hip" hip >"$T/h.json"
	kcompile --hip-arch gfx90a <"$T/h.json" >"$T/h90a.json"
	expect_eq "hip compiles for gfx90a" compiled "$(field .status "$T/h90a.json")"
	ok "VGPRs, SGPRs and LDS recorded" test "$(field '.compile.resources.kernels[0].registers' "$T/h90a.json")" -gt 0 -a \
		"$(field '.compile.resources.kernels[0].sgprs' "$T/h90a.json")" -gt 0 -a \
		"$(field '.compile.resources.kernels[0].smem_bytes' "$T/h90a.json")" = 1024
	KSCI_HIP_ARCH=gfx940 kcompile <"$T/h.json" >"$T/h940.json"
	expect_eq "hip compiles for gfx940 (KSCI_HIP_ARCH)" compiled "$(field .status "$T/h940.json")"
	kcompile --hip-arch gfx942 <"$T/h.json" >"$T/h942.json"
	expect_eq "gfx942: unsupported, not compile_error" unsupported "$(field .status "$T/h942.json")"
	ok "gfx942: the record says why" grep -q "does not support the AMD target gfx942" "$T/h942.json"
	kverify <"$T/h90a.json" >"$T/hv.json"
	expect_eq "hip kverify: unsupported" unsupported "$(field .status "$T/hv.json")"
	ok "hip kverify: no HIP device" grep -q "no HIP device" "$T/hv.json"
else
	echo "# no hipcc: hip tests skipped"
fi
done_testing
