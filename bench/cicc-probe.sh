#!/usr/bin/env bash
# bench/cicc-probe.sh — what moves the device half of a compile: cicc and
# ptxas, its two long steps, and the preprocessing before them.  By default:
# whether another allocator speeds up cicc and ptxas on a task's seed
# without changing what they make: nvcc (kcompile's flags) builds the seed once with --keep,
# then its own cicc and ptxas commands (from nvcc --dryrun) are run again
# ROUNDS times under each allocator in turn — glibc's (none), glibc's
# asking the kernel for transparent huge pages (thp:
# GLIBC_TUNABLES=glibc.malloc.hugetlb=1) and each library in MALLOC_DIR
# given by LD_PRELOAD: Debian's libmimalloc2.0
# (libmimalloc.so.2), libjemalloc2 (libjemalloc.so.2), libtcmalloc-minimal4
# (libtcmalloc_minimal.so.4), those present — each run on the CPUs CPUS.
# Printed: each arm's median, min and max wall seconds for cicc and for
# ptxas; the MD5 of each arm's last PTX and cubin (the same output or not);
# and per arm its ratio to none within a round, median over rounds, with
# the rounds it was faster and a one-sided sign test.  --source FILE: that
# candidate (a kgen child, say) instead of the task's seed.  The seconds of every
# run go to $OUT/cicc-malloc-TASK.tsv (arm, cicc s, ptxas s).  With
# --per-cpu, instead: whether cicc's speed is a property of the CPU it runs
# on — cicc alone, glibc's malloc, on each online CPU in turn, ROUNDS times;
# printed per CPU its seconds in run order.  With --race, instead: one cicc
# against the first to finish of two started at once (the other killed),
# alternating, ROUNDS times; printed: the median, min and max of each.  With
# --prefix, instead, for each FILE given, else every task's seed: whether
# the device half's preprocessing could be cut to the candidate's own part —
# the wrapper's header lines preprocessed once (text P and their macros M,
# `-dM`), then per candidate only the rest, with `-imacros M`, P and that
# joined — with cicc's PTX from it the same as from nvcc's own
# preprocessing; printed per source: both preprocessings' median seconds
# over ROUNDS and whether the PTX is the same.
#   usage: bench/cicc-probe.sh [-r ROUNDS] [--cpus LIST] [--per-cpu | --race] [--source FILE] [TASK]
#          bench/cicc-probe.sh [-r ROUNDS] --prefix [FILE.cu ...]
#   (default: 36 rounds, every online CPU, matmul; the runs in docs/gpu.md passed --cpus 4-7)
#   env: MALLOC_DIR (default .carry/malloc: `apt-get download` the packages, `dpkg -x`, copy the .so files), CUDA_HOME, KSCI_TASKS
set -uo pipefail
rounds=36 cpus=0-$(($(nproc) - 1)) percpu=0 race=0 prefix=0 source=
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) sed -n '2,/^\([^#]\|$\)/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
	-r) rounds=${2:-}; shift ;;
	--cpus) cpus=${2:-}; shift ;;
	--per-cpu) percpu=1 ;;
	--race) race=1 ;;
	--prefix) prefix=1 ;;
	--source) source=${2:-}; shift ;;
	-*) echo "cicc-probe: unknown option: $1" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "cicc-probe: -r: \"$rounds\" is not a whole number above 0" >&2; exit 2; }
[ $((percpu + race + prefix)) -le 1 ] || { echo "cicc-probe: one of --per-cpu, --race and --prefix" >&2; exit 2; }
[[ $cpus =~ ^[0-9][0-9,-]*$ ]] || { echo "cicc-probe: --cpus: \"$cpus\" is not a CPU list" >&2; exit 2; }
task=matmul srcs=()
if [ "$prefix" = 1 ]; then
	for f in "$@"; do
		[ -f "$f" ] || { echo "cicc-probe: --prefix: no file $f" >&2; exit 2; }
		srcs+=("$(realpath "$f")") # before the cd below
	done
else
	task=${1:-matmul}
	if [ -n "$source" ]; then
		[ -f "$source" ] || { echo "cicc-probe: --source: no file $source" >&2; exit 2; }
		source=$(realpath "$source") # before the cd below
	fi
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$here/bench/lib.sh" # med_min_max, AWK_MED
tasks=${KSCI_TASKS:-$here/data/tasks}
[ -f "$tasks/$task/seed.cu" ] || { echo "cicc-probe: no task $task (no $tasks/$task/seed.cu)" >&2; exit 2; }
mdir=${MALLOC_DIR:-$here/.carry/malloc}
[ ! -d "$mdir" ] || mdir=$(cd "$mdir" && pwd) # before the cd below
nvcc=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
out=${OUT:-$here/gpu-logs}
mkdir -p "$out"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ksci-cicc-probe.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 2
cp "${source:-$tasks/$task/seed.cu}" candidate.cu
printf '#include <stdint.h>\n#include <cuda_runtime.h>\n#include "candidate.cu"\n' >w.cu
flags=(-gencode "arch=compute_90a,code=sm_90a" -O3 -std=c++17 -lineinfo -Xptxas -v -Xptxas --split-compile=0
	-Xcompiler -fPIC -shared -cudart shared)
"$nvcc" "${flags[@]}" --keep -o w.so w.cu >nvcc.log 2>&1 || { echo "cicc-probe: nvcc failed on $task's seed:" >&2; cat nvcc.log >&2; exit 1; }
"$nvcc" "${flags[@]}" --keep --dryrun -o w.so w.cu 2>&1 | sed -n 's/^#\$ //p' >plan
# nvcc's own variables for its steps (CICC_PATH, PATH, ...), one a line.
while IFS= read -r l; do
	[[ $l =~ ^([A-Za-z_]+)=(.*)$ ]] && export "${BASH_REMATCH[1]}=${BASH_REMATCH[2]}"
done <plan
cicc=$(grep -m 1 -E '/cicc"? ' plan) ptx=$(grep -m 1 -E '^ptxas ' plan)
if [ -z "$cicc" ] || [ -z "$ptx" ]; then echo "cicc-probe: nvcc --dryrun named no cicc or ptxas step" >&2; exit 1; fi
nvv=$("$nvcc" --version | tail -n 1)
if [ "$prefix" = 1 ]; then
	d1=$(grep -m 1 -E '"w\.cu" -o "w\.cpp1\.ii"' plan)
	[ -n "$d1" ] || { echo "cicc-probe: nvcc --dryrun named no device preprocessing of w.cu" >&2; exit 1; }
	echo "device preprocessing, nvcc's own against the headers' part once and the rest with -imacros; $rounds rounds; $nvv"
	[ ${#srcs[@]} -gt 0 ] || srcs=("$tasks"/*/seed.cu)
	for src in "${srcs[@]}"; do
		name=$(basename "$(dirname "$src")")/$(basename "$src")
		cp "$src" candidate.cu
		# The wrapper as kcompile's for a task with half types where the source names them.
		{ printf '#include <stdint.h>\n#include <cuda_runtime.h>\n'
		  grep -qE 'half|bfloat16|bf16' candidate.cu && printf '#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n'
		  printf '#include "candidate.cu"\n'; } >w.cu
		n=$(grep -c . w.cu)
		mkdir -p pre && head -n $((n - 1)) w.cu >pre/w.cu
		printf '#line %d "w.cu"\n#include "candidate.cu"\n' "$n" >rest.cu
		(cd pre && sh -c "${d1/-o \"w.cpp1.ii\"/-o \"p.ii\"}" && sh -c "${d1/-o \"w.cpp1.ii\"/-dM -o \"m.h\"}") >/dev/null 2>&1 ||
			{ echo "$name: the headers' part did not preprocess"; continue; }
		for _ in $(seq "$rounds"); do
			s=$(date +%s.%N)
			sh -c "$d1" >/dev/null 2>&1
			m=$(date +%s.%N)
			sh -c "${d1/\"w.cu\" -o \"w.cpp1.ii\"/-imacros pre/m.h \"rest.cu\" -o \"rest.ii\"}" >/dev/null 2>&1
			e=$(date +%s.%N)
			awk -v s="$s" -v m="$m" -v e="$e" 'BEGIN { printf "%.3f\t%.3f\n", m - s, e - m }'
		done >times.tsv
		{ cat pre/p.ii; sed -n "/^# $n \"w.cu\"\$/,\$p" rest.ii; } >fast.ii
		cp w.cpp1.ii full.ii
		for v in full fast; do
			cp "$v.ii" w.cpp1.ii
			sh -c "$cicc" >/dev/null 2>&1 && mv w.ptx "$v.ptx" || echo "cicc failed" >"$v.ptx"
		done
		printf '%-20s nvcc %s s, rest %s s; PTX %s\n' "$name" "$(cut -f1 times.tsv | med_min_max 3 | cut -d' ' -f1)" \
			"$(cut -f2 times.tsv | med_min_max 3 | cut -d' ' -f1)" \
			"$(if grep -q "cicc failed" full.ptx; then echo "- (cicc failed on nvcc's own)"; elif cmp -s full.ptx fast.ptx; then echo same; else echo DIFFERS; fi)"
	done
	exit 0
fi
if [ "$percpu" = 1 ]; then
	for _ in $(seq "$rounds"); do
		for c in $(seq 0 $(($(nproc) - 1))); do
			s=$(date +%s.%N)
			taskset -c "$c" sh -c "$cicc" >/dev/null 2>&1 || echo "cicc-probe: cicc failed on CPU $c" >&2
			awk -v c="$c" -v s="$s" -v e="$(date +%s.%N)" 'BEGIN { printf "%d\t%.3f\n", c, e - s }'
		done
	done >"$out/cicc-percpu-$task.tsv"
	echo "$task: cicc's seconds on each CPU, $rounds rounds; $nvv"
	awk -F'\t' '{ t[$1] = t[$1] " " $2; if ($1 > n) n = $1 } END { for (c = 0; c <= n; c++) print "CPU " c ":" t[c] }' "$out/cicc-percpu-$task.tsv"
	exit 0
fi
if [ "$race" = 1 ]; then
	# The racers each in a directory of their own (cicc writes its side
	# files under fixed names), with nvcc's input and module id.
	mkdir r1 r2 && cp ./*.cpp1.ii ./*.module_id r1/ && cp ./*.cpp1.ii ./*.module_id r2/
	for _ in $(seq "$rounds"); do
		s=$(date +%s.%N)
		sh -c "$cicc" >/dev/null 2>&1 || echo "cicc-probe: cicc failed" >&2
		m=$(date +%s.%N)
		(cd r1 && exec sh -c "exec $cicc" >/dev/null 2>&1) &
		p1=$!
		(cd r2 && exec sh -c "exec $cicc" >/dev/null 2>&1) &
		p2=$!
		# The first to finish — as long as it finished well.
		wait -n -p who
		wrc=$?
		[ "$wrc" = 0 ] || { echo "cicc-probe: racer $who exited $wrc; waiting for the other" >&2; wait -n; }
		e=$(date +%s.%N)
		kill "$p1" "$p2" 2>/dev/null
		wait 2>/dev/null
		awk -v s="$s" -v m="$m" -v e="$e" 'BEGIN { printf "%.3f\t%.3f\n", m - s, e - m }'
	done >"$out/cicc-race-$task.tsv"
	echo "$task: one cicc, and the first of two racing, $rounds rounds; $nvv"
	for k in 1 2; do
		printf '%s: cicc median, min, max %s s\n' "$([ $k = 1 ] && echo one || echo "first of two")" \
			"$(cut -f"$k" "$out/cicc-race-$task.tsv" | med_min_max 3)"
	done
	exit 0
fi
# Each arm's environment: glibc's malloc as it is; glibc's asking for
# transparent huge pages (where the kernel gives them on request:
# /sys/kernel/mm/transparent_hugepage/enabled "madvise"); each library.
arms=(none thp) envs=("" "GLIBC_TUNABLES=glibc.malloc.hugetlb=1")
for l in libmimalloc.so.2 libjemalloc.so.2 libtcmalloc_minimal.so.4; do
	[ -f "$mdir/$l" ] && arms+=("${l%%.so*}") envs+=("LD_PRELOAD=$mdir/$l")
done
tsv=$out/cicc-malloc-$task.tsv
: >"$tsv"
for _ in $(seq "$rounds"); do
	for i in "${!arms[@]}"; do
		s=$(date +%s.%N)
		taskset -c "$cpus" env ${envs[$i]:+"${envs[$i]}"} sh -c "$cicc" >/dev/null 2>&1 || echo "cicc-probe: cicc failed under ${arms[$i]}" >&2
		m=$(date +%s.%N)
		cp w.ptx "w-${arms[$i]}.ptx"
		taskset -c "$cpus" env ${envs[$i]:+"${envs[$i]}"} sh -c "$ptx" >/dev/null 2>&1 || echo "cicc-probe: ptxas failed under ${arms[$i]}" >&2
		e=$(date +%s.%N)
		cp w.cubin "w-${arms[$i]}.cubin"
		awk -v a="${arms[$i]}" -v s="$s" -v m="$m" -v e="$e" 'BEGIN { printf "%s\t%.3f\t%.3f\n", a, m - s, e - m }' >>"$tsv"
	done
done
echo "$task, $rounds rounds on CPUs $cpus; $nvv"
awk -F'\t' "$AWK_MED"'
function mmm(s,   a, k, i, lo, hi) { k = split(s, a, " "); lo = hi = a[1]
	for (i = 2; i <= k; i++) { if (a[i] < lo) lo = a[i]; if (a[i] > hi) hi = a[i] }
	return sprintf("%.3f %.3f %.3f", med(s), lo, hi) }
{ c[$1] = c[$1] " " $2; p[$1] = p[$1] " " $3; if (!seen[$1]++) order[++n] = $1 }
END { for (i = 1; i <= n; i++) printf "%-18s cicc median/min/max %s   ptxas %s\n", order[i], mmm(c[order[i]]), mmm(p[order[i]]) }' "$tsv"
for a in "${arms[@]}"; do echo "$a: PTX $(md5sum <"w-$a.ptx" | cut -c1-32), cubin $(md5sum <"w-$a.cubin" | cut -c1-32)"; done
# Within a round each arm against none; a sign test over rounds.
awk -F'\t' -v k="${#arms[@]}" "$AWK_MED$AWK_SIGN_P"'
{ r = int((NR - 1) / k); if ($1 == "none") { c0[r] = $2; p0[r] = $3 } else { ca[$1, r] = $2; pa[$1, r] = $3; if (!seen[$1]++) order[++n] = $1 } ; rounds = r + 1 }
END { for (i = 1; i <= n; i++) { a = order[i]
	for (t = 1; t <= 2; t++) { s = ""; b = 0
		for (r = 0; r < rounds; r++) { x = t == 1 ? ca[a, r] / c0[r] : pa[a, r] / p0[r]; s = s " " x; b += x < 1 }
		printf "%s/none, %s: median ratio %.3f, faster in %d of %d rounds (one-sided sign test p %.3f)\n", a, t == 1 ? "cicc" : "ptxas", med(s), b, rounds, sign_p(b, rounds) } } }' "$tsv"
