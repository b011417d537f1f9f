#!/usr/bin/env bash
# t45-nvcc-prefix: kcompile's device half preprocesses the wrapper's header
# part once per host and header set and, per candidate, only the rest
# (lib/nvcc_steps.h, "The prefix"; lib/nvcc_prefix.h).  With the real nvcc
# (skipped without it), each build both ways — the prefix, and nvcc's own
# (KSCI_NVCC_PREFIX=off) — in a PID namespace of its own: the build
# directory's name, tmp.PID@HOST.XXXXXX, is in the device code's line table,
# so the PID must be the same both ways; its random part is masked, as is
# the mtime of the files the build writes (candidate.cu, in the line
# table's file entry: a LEB128 of 5 bytes).
# - nvcc-prefix-same-device-code-every-seed: every task's seed, and three
#   again (served the prefix from the cache): the fatbinary the same byte
#   for byte both ways, the compile log the same.
# - with a header of the prefix put in by hand (a <stdint.h> before the
#   system's: KSCI_NVCC is nvcc with -I of it), each the same both ways:
#   nvcc-prefix-header-undefines-a-predefined-macro (undefined again),
#   nvcc-prefix-header-poisons (poisoned again: the candidate's part alone
#   fails on it, and nvcc's run says so); and where the prefix cannot
#   stand for it, nvcc's way with the reason: the header uses __COUNTER__,
#   is #pragma once, pushes a macro; the candidate has text from a header of
#   the prefix, enters a file by a relative name, names import.
# - nvcc-prefix-header-changed: a header of the prefix rewritten, the prefix
#   is made again (the cached one's reason given).
# - nvcc-dlink-early-same-device-code-every-seed: the device link beside the
#   halves (lib/nvcc_steps.c), against after them on the joined object
#   (KSCI_NVCC_DLINK=joined): every seed's fatbinaries the same bytes; a host
#   object with a section of NVIDIA's name is linked the joined way.
# - in bubblewrap's sandbox (kcompile's default): made, then from the cache.
. "$(dirname "$0")/lib.sh"
nvcc=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
if ! command -v "$nvcc" >/dev/null || ! command -v objcopy >/dev/null || ! command -v perl >/dev/null; then
	echo "ok 1 # SKIP no nvcc, objcopy or perl here"
	done_testing
	exit 0
fi
skip_without_bwrap
cd "$T" || exit 1
unset KSCI_NVCC_PREFIX KSCI_NVCC_STEPS

rec() { # TASK SOURCE-FILE
	jq -cn --arg t "$1" --rawfile s "$2" '{task: $t, backend: "cuda", generation: 0, parents: [], source: $s, status: "generated"}'
}
# CACHE: a name, then 1 (the prefix) or 0 (nvcc's own): the two ways' build
# directories have names of the same length.
kc() { # CACHE [VAR=VALUE...]: kcompile of stdin, one record at a time, as PID 2
	local c=$1
	shift
	env KSCI_CACHE="$T/$c" "$@" bwrap --unshare-pid --dev-bind / / kcompile --unsafe-no-sandbox -j 1
}
nth() { sed -n "$(($1 + 1))p" "$2"; } # N FILE: the Nth record (from 0)
# log N FILE: the Nth record's compile log, ptxas's own time masked.
log() { nth "$1" "$2" | jq -r .compile.log | sed 's/Compile time = [0-9.]* ms/Compile time = T ms/'; }
# dev N FILE: the Nth record's device code (its .nv_fatbin), the build
# directory's name and the mtimes of the files written for the build
# masked; its MD5.
dev() {
	local so
	so=$(nth "$1" "$2" | jq -r .compile.artifact)
	objcopy -O binary --only-section=.nv_fatbin "$so" "$T/fb.bin" 2>/dev/null || { echo "no device code"; return; }
	perl -0777 -pe 's/[a-z]+[012]\/compile\/tmp\.2\@[^\/\0]*?\.[A-Za-z0-9]{6}/CACHE\/BUILD/g;
		s/((?:candidate|ksci_wrapper)\.cu\0[\0-\x7f])[\x80-\xff]{4}[\0-\x7f]/$1\0\0\0\0\0/g' "$T/fb.bin" | md5sum | cut -c1-32
}

# same_both_ways A B WAY-A WAY-B: each record of A against B's: diff_dev, the
# records whose device code differs (or is missing), diff_log, those whose
# compile log differs.
same_both_ways() {
	local i a b
	diff_dev=0 diff_log=0
	for i in $(seq 0 $((total - 1))); do
		a=$(dev "$i" "$1") b=$(dev "$i" "$2")
		if [ "$a" != "$b" ] || [ "$a" = "no device code" ]; then
			echo "# $(nth "$i" "$1" | jq -r .task): device code $a $3, $b $4"
			diff_dev=$((diff_dev + 1))
		fi
		if [ "$(log "$i" "$1")" != "$(log "$i" "$2")" ]; then
			echo "# $(nth "$i" "$1" | jq -r .task): the compile log differs"
			diff_log=$((diff_log + 1))
		fi
	done
}

# --- nvcc-prefix-same-device-code-every-seed ----------------------------------
: >seeds.nd
for f in "$ROOT"/data/tasks/*/seed.cu; do
	t=$(basename "$(dirname "$f")")
	rec "$t" "$f" >>seeds.nd
done
n=$(wc -l <seeds.nd)
for t in matmul softmax gemm_f16; do
	{ cat "$ROOT/data/tasks/$t/seed.cu"; printf '\n// the seed again: its prefix from the cache\n'; } >again.cu
	rec "$t" again.cu >>seeds.nd
done
kc seeds1 <seeds.nd >on.nd
kc seeds0 KSCI_NVCC_PREFIX=off <seeds.nd >off.nd
total=$(wc -l <seeds.nd)
expect_eq "every seed compiled both ways" "$total $total" "$(jq -s 'map(select(.status == "compiled")) | length' on.nd) $(jq -s 'map(select(.status == "compiled")) | length' off.nd)"
expect_eq "with the prefix: made once per task, from the cache after" \
	"$(printf 'made %.0s' $(seq "$n"))cached cached cached " "$(jq -r '.compile.steps_prefix' on.nd | tr '\n' ' ')"
expect_eq "KSCI_NVCC_PREFIX=off: nvcc's own, and why" "$total" \
	"$(jq -s 'map(select(.compile.steps_prefix == "nvcc" and .compile.steps_prefix_why == "KSCI_NVCC_PREFIX=off")) | length' off.nd)"
same_both_ways on.nd off.nd "with the prefix" "without"
expect_eq "nvcc-prefix-same-device-code-every-seed: the fatbinary the same byte for byte" 0 "$diff_dev"
expect_eq "...and the compile log the same" 0 "$diff_log"

# --- nvcc-dlink-early-same-device-code-every-seed ---------------------------------
# The device link beside the halves, on an object without device code (on.nd),
# against nvcc's order, after them on the joined object (KSCI_NVCC_DLINK=joined):
# the .so's fatbinaries (the link's own among them) the same bytes.
kc seeds2 KSCI_NVCC_DLINK=joined <seeds.nd >joined.nd
expect_eq "device link: early in every build, joined where asked" "$total early $total joined" \
	"$(jq -r .compile.steps_dlink on.nd | grep -c '^early$') early $(jq -r .compile.steps_dlink joined.nd | grep -c '^joined$') joined"
same_both_ways on.nd joined.nd "with the early link" "joined"
expect_eq "nvcc-dlink-early-same-device-code-every-seed: the fatbinaries the same byte for byte" 0 "$diff_dev"
expect_eq "...and the compile log the same" 0 "$diff_log"
# A host object with a section of NVIDIA's name: the link after, joined.
{
	cat "$ROOT/data/tasks/matmul/seed.cu"
	printf '#ifndef __CUDA_ARCH__\n__attribute__((used, section(".nv_ksci_test"))) static const char ksci_own[8] = "own";\n#endif\n'
} >own.cu
rec matmul own.cu | kc seeds1 >own1.nd
rec matmul own.cu | kc seeds2 KSCI_NVCC_DLINK=joined >own2.nd
expect_eq "a host section named .nv...: the device link after, joined, and why" \
	"compiled joined the host object may have device code of its own: a section .nv_ksci_test" \
	"$(jq -r '"\(.status) \(.compile.steps_dlink) \(.compile.steps_dlink_why)"' own1.nd | sed 's/\(.nv_ksci_test\) .*/\1/')"
own=$(dev 0 own1.nd)
ok "...the same device code as asked to link joined ($own)" \
	test "$own" = "$(dev 0 own2.nd)" -a "$own" != "no device code"

# --- in the sandbox, as kcompile runs by default ---------------------------------
# mkpre and the build both run in bubblewrap's jail, which sees the build
# directory only: the prefix goes in by a copy from the cache.
for i in 1 2; do
	{ cat "$ROOT/data/tasks/matmul/seed.cu"; printf '\n// sandboxed %s\n' "$i"; } >sb.cu
	rec matmul sb.cu | KSCI_CACHE=$T/sandboxed kcompile -j 1 >"sb$i.nd"
done
expect_eq "in the sandbox: made, then from the cache; the device link early in both" \
	"bubblewrap compiled made early bubblewrap compiled cached early" \
	"$(jq -r '"\(.compile.sandbox) \(.status) \(.compile.steps_prefix) \(.compile.steps_dlink)"' sb1.nd sb2.nd | tr '\n' ' ' | sed 's/ $//')"

# --- a header of the prefix put in by hand ----------------------------------------
mkdir -p inc bin
printf '#!/bin/sh\nexec %q -I%q "$@"\n' "$nvcc" "$T/inc" >bin/nvcc
chmod +x bin/nvcc
export KSCI_NVCC=$T/bin/nvcc
stub='extern "C" void solve(const float* x, float* y, int rows, int cols) {}'
# case NAME HEADER-TEXT CANDIDATE-TEXT: both ways into NAME.on, NAME.off.
case_() {
	printf '%s\n' "$2" >inc/stdint.h
	printf '%s\n%s\n' "$3" "$stub" >"$1.cu"
	rec softmax "$1.cu" >"$1.nd"
	kc shadow1 <"$1.nd" >"$1.on"
	kc shadow0 KSCI_NVCC_PREFIX=off <"$1.nd" >"$1.off"
}
same() { # NAME: the same status, log and device code both ways
	expect_eq "$1: the same status and log both ways" "$(jq -r .status "$1.off"; log 0 "$1.off")" \
		"$(jq -r .status "$1.on"; log 0 "$1.on")"
	[ "$(jq -r .status "$1.on")" = compiled ] && expect_eq "$1: the same device code both ways" "$(dev 0 "$1.off")" "$(dev 0 "$1.on")"
}
prefix() { jq -r '"\(.compile.steps_prefix): \(.compile.steps_prefix_why // "")"' "$1.on"; }

which_kernel='#ifdef __OPTIMIZE__
__global__ void ksci_optimized(int *x) { x[0] = 1; }
#else
__global__ void ksci_unoptimized(int *x) { x[0] = 2; }
#endif'
case_ undef $'#include_next <stdint.h>\n#undef __OPTIMIZE__' "$which_kernel"
expect_eq "nvcc-prefix-header-undefines-a-predefined-macro: the prefix used" "made" "$(jq -r .compile.steps_prefix undef.on)"
expect_eq "...the macro undefined for the candidate as in nvcc's run" "_Z16ksci_unoptimizedPi _Z16ksci_unoptimizedPi" \
	"$(jq -r '.compile.resources.kernels[].name' undef.off undef.on | tr '\n' ' ' | sed 's/ $//')"
same undef

case_ poison $'#include_next <stdint.h>\n#pragma GCC poison ksci_poisoned' '__global__ void k(int *ksci_poisoned) {}'
# The candidate's part alone then fails to preprocess, as it should, and
# nvcc's own run gives the message.
expect_eq "nvcc-prefix-header-poisons: the identifier poisoned for the candidate's part too" \
	"nvcc: the candidate's part did not preprocess alone (exit status 1)" "$(prefix poison)"
ok "...by the prefix's macros" grep -qx '#pragma GCC poison ksci_poisoned' shadow1/nvcc-prefix/*/pre.h
expect_eq "...compile_error both ways" "compile_error compile_error" "$(jq -r .status poison.off poison.on | tr '\n' ' ' | sed 's/ $//')"
ok "...saying so" jq -e '.compile.log | test("attempt to use poisoned \"ksci_poisoned\"")' poison.on

case_ counter $'#include_next <stdint.h>\nstatic const int ksci_c = __COUNTER__;' '__global__ void k(int *x) { x[0] = __COUNTER__; }'
expect_eq "a header using __COUNTER__: nvcc's way" "nvcc: the prefix was not made (exit status 1): the headers use __COUNTER__" "$(prefix counter)"
same counter

case_ once $'#pragma once\n#include_next <stdint.h>' '__global__ void k(int *x) { x[0] = 1; }'
ok "a #pragma once header: nvcc's way" grep -q '^nvcc: .*is #pragma once' <(prefix once)

case_ push $'#include_next <stdint.h>\n#define KSCI_M 1\n#pragma push_macro("KSCI_M")' '__global__ void k(int *x) { x[0] = 1; }'
ok "a header pushing a macro: nvcc's way" grep -q '^nvcc: .*pushes a macro' <(prefix push)

case_ text $'#include_next <stdint.h>\ntypedef int ksci_shadow_t;' $'#include <stdint.h>\n__global__ void k(ksci_shadow_t *x) { x[0] = 1; }'
expect_eq "the candidate's part with text from a header of the prefix: nvcc's way" \
	"nvcc: the candidate's part has text from $T/inc/stdint.h, a header of the prefix" "$(prefix text)"
same text

# nvcc-prefix-header-changed: the same header part, the header rewritten.
case_ changed $'#include_next <stdint.h>\ntypedef int ksci_shadow_t; /* rewritten */' '__global__ void k(int *x) { x[0] = 3; }'
expect_eq "nvcc-prefix-header-changed: made again, and why" "made: $T/inc/stdint.h changed since the cached one was made" "$(prefix changed)"
same changed
printf '__global__ void k(int *x) { x[0] = 4; }\n%s\n' "$stub" >cached.cu
rec softmax cached.cu | kc shadow1 >cached.on
expect_eq "...then from the cache" "cached: " "$(prefix cached)"

case_ relative $'#include_next <stdint.h>' $'#ifndef KSCI_ONCE\n#define KSCI_ONCE\n#include "ksci_wrapper.cu"\n#endif'
expect_eq "the candidate entering the wrapper again: nvcc's way" \
	"nvcc: the candidate's part enters ksci_wrapper.cu, a name relative to the build directory" "$(prefix relative)"
same relative

case_ import $'#include_next <stdint.h>' $'#import <stdint.h>\n__global__ void k(int *x) { x[0] = 5; }'
expect_eq "the candidate naming import: nvcc's way" "nvcc: the candidate names import (#import reads a file once only)" "$(prefix import)"
same import
# prefix-refused-for-important: "important" in a comment is not the word.
printf '// important: the word in a comment\n__global__ void k(int *x) { x[0] = 6; }\n%s\n' "$stub" >important.cu
rec softmax important.cu | kc shadow1 >important.on
# (made: the import case, refused before the cache was looked at, left the
# rewritten header's prefix to make.)
expect_eq "prefix-refused-for-important: \"important\" in a comment keeps the prefix" made "$(jq -r .compile.steps_prefix important.on)"

done_testing
