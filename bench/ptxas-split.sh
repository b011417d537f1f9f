#!/usr/bin/env bash
# bench/ptxas-split.sh — whether ptxas's own --split-compile (one thread per
# kernel) cuts the device half of a compile without changing what it makes:
# for each task's seed (and, with --mutants N, N kgen mutate children), the
# PTX kcompile's nvcc makes is assembled by ptxas with kcompile's options,
# with and without `--split-compile 0`, alternating, ROUNDS times; printed:
# the median wall seconds of each, the ratio, and whether every cubin's
# machine code (its .text sections) was byte for byte the same both ways.  (nvcc's own --split-compile also splits
# cicc, whose PTX then differs: not a candidate.)
#   usage: bench/ptxas-split.sh [-r ROUNDS] [--mutants N] [TASK ...]   (default: 5 rounds; softmax matmul)
#   env: KSCIBIN (default build/gpu/bin, else build/bin), CUDA_HOME
set -euo pipefail
rounds=5 mutants=0
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) sed -n '2,/^\([^#]\|$\)/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
	-r) rounds=$2; shift ;;
	--mutants) mutants=$2; shift ;;
	*) break ;;
	esac
	shift
done
[ $# -gt 0 ] || set -- softmax matmul
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$here/bench/lib.sh"
BIN=${KSCIBIN:-$here/build/gpu/bin}
[ -x "$BIN/kcompile" ] || BIN=$here/build/bin
CUDA=${CUDA_HOME:-/usr/local/cuda}
export KSCI_TASKS=${KSCI_TASKS:-$here/data/tasks}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ksci-ptxas-split.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export KSCI_CACHE=$tmp/cache
for task in "$@"; do
	bench_sources "$task" "$mutants" "$BIN" >"$tmp/$task.in"
	KSCI_NVCC_STEPS=serial "$BIN/kcompile" -j 1 --unsafe-no-sandbox <"$tmp/$task.in" >"$tmp/$task.out" 2>/dev/null || true
	k=0
	for key in $(jq -r 'select(.compile.ok) | .compile.key' "$tmp/$task.out"); do
		k=$((k + 1))
		d=$tmp/$task-$k
		mkdir -p "$d"
		cp "$KSCI_CACHE/compile/$key/"*.cu "$d/"
		(cd "$d" && "$CUDA/bin/nvcc" -ptx -arch=compute_90a -O3 -std=c++17 -lineinfo -o w.ptx ksci_wrapper.cu) >/dev/null 2>&1 || continue
		for _ in $(seq "$rounds"); do
			for v in plain split; do
				opt=()
				[ "$v" = split ] && opt=(--split-compile 0)
				/usr/bin/time -f "%e" -o "$d/t" "$CUDA/bin/ptxas" -arch=sm_90a -m64 -v --generate-line-info "${opt[@]}" "$d/w.ptx" -o "$d/$v.cubin" >/dev/null 2>&1
				echo "$task $v $(cat "$d/t")" >>"$tmp/rows"
			done
		done
		if python3 - "$d/plain.cubin" "$d/split.cubin" <<'PY'; then echo "$task same" >>"$tmp/same"; else echo "$task differ" >>"$tmp/same"; fi
# The machine code (every .text section) of two cubins, the same?  Their
# notes differ: ptxas writes its own options into .note.nv.tkinfo.
import struct, sys
def texts(p):
    b = open(p, 'rb').read()
    shoff, = struct.unpack_from('<Q', b, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', b, 0x3A)
    secs = [struct.unpack_from('<IIQQQQIIQQ', b, shoff + i * shentsize) for i in range(shnum)]
    stro = secs[shstrndx][4]
    name = lambda o: b[stro + o:b.index(b'\0', stro + o)].decode()
    return {name(s[0]): b[s[4]:s[4] + s[5]] for s in secs if name(s[0]).startswith('.text')}
a, c = texts(sys.argv[1]), texts(sys.argv[2])
sys.exit(0 if a and a == c else 1)
PY
	done
done
echo "ptxas: $("$CUDA/bin/ptxas" --version | tail -n 1); $rounds rounds; $(nproc) CPUs"
awk "$AWK_MED"'FNR == NR { same[$1 " " $2]++; next }
{ s[$1 " " $2] = s[$1 " " $2] " " $3; if (!seen[$1]++) order[++n] = $1 }
END {
	printf "%-10s %9s %9s %7s %s\n", "task", "plain s", "split s", "ratio", "cubins"
	for (i = 1; i <= n; i++) { t = order[i]; a = med(s[t " plain"]); b = med(s[t " split"])
		printf "%-10s %9.3f %9.3f %7.3f %d same, %d differ\n", t, a, b, b / a, same[t " same"], same[t " differ"] }
}' "$tmp/same" "$tmp/rows"
