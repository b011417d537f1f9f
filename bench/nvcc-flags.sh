#!/usr/bin/env bash
# bench/nvcc-flags.sh — what each nvcc flag choice costs or saves in compile
# time, on the task seeds (the throughput issue: "cut nvcc's own time where
# it can be cut without losing anything").  For each task, kcompile's own
# build of the seed (candidate.cu + its wrapper) is compiled R times with
# every variant in turn (A B C ... A B C ...), and the median CPU seconds
# (user + sys of nvcc and all it runs; steadier than wall time on a shared
# machine) and wall seconds are printed per variant, with the ratio to
# kcompile's flags.  Run it on an idle machine for wall figures.  With
# --phases, each task's build with kcompile's flags once more under
# `nvcc --time`: the milliseconds of each of nvcc's steps, in order.
#   usage: bench/nvcc-flags.sh [-r ROUNDS] [--phases] [TASK ...]   (default: 5 rounds; softmax matmul)
#   env: CUDA (default /usr/local/cuda), KSCIBIN (default build/bin)
set -euo pipefail
rounds=5 phases=0
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) sed -n '2,/^\([^#]\|$\)/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
	-r) rounds=$2; shift ;;
	--phases) phases=1 ;;
	*) break ;;
	esac
	shift
done
[ $# -gt 0 ] || set -- softmax matmul
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$here/bench/lib.sh"
BIN=${KSCIBIN:-$here/build/bin}
NVCC=${CUDA:-/usr/local/cuda}/bin/nvcc
export KSCI_TASKS=${KSCI_TASKS:-$here/data/tasks}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ksci-nvcc.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# name|flags (before -o out.so ksci_wrapper.cu); the first is kcompile's as
# it was when this bench was written (2026-11-25), the base of every ratio;
# kcompile's now are sass-only's with -Xptxas --split-compile=0
# (docs/tools/kcompile.md).
variants=(
	"kcompile|-arch=sm_90a -O3 -std=c++17 -lineinfo -Xptxas -v -Xcompiler -fPIC -shared -cudart shared"
	"sass-only|-gencode arch=compute_90a,code=sm_90a -O3 -std=c++17 -lineinfo -Xptxas -v -Xcompiler -fPIC -shared -cudart shared"
	"host-O0|-arch=sm_90a -O0 -std=c++17 -lineinfo -Xptxas -v -Xcompiler -fPIC -shared -cudart shared"
	"host-O1|-arch=sm_90a -O1 -std=c++17 -lineinfo -Xptxas -v -Xcompiler -fPIC -shared -cudart shared"
	"no-lineinfo|-arch=sm_90a -O3 -std=c++17 -Xptxas -v -Xcompiler -fPIC -shared -cudart shared"
	"sass+O1|-gencode arch=compute_90a,code=sm_90a -O1 -std=c++17 -lineinfo -Xptxas -v -Xcompiler -fPIC -shared -cudart shared"
	"sass+half-headers|-include cuda_fp16.h -include cuda_bf16.h -gencode arch=compute_90a,code=sm_90a -O3 -std=c++17 -lineinfo -Xptxas -v -Xcompiler -fPIC -shared -cudart shared"
)
# sass+half-headers: the wrapper as it was before the eighth session, which
# included cuda_fp16.h and cuda_bf16.h for every task (now only where the
# task's arguments or the source name a half type).
for task in "$@"; do
	export KSCI_CACHE="$tmp/cache-$task"
	jq -cn --arg t "$task" --rawfile s "$KSCI_TASKS/$task/seed.cu" \
		'{id: $t, task: $t, backend: "cuda", generation: 0, parents: [], source: $s, status: "generated"}' |
		"$BIN/kcompile" -j 1 --unsafe-no-sandbox >"$tmp/$task.json"
	dir=$KSCI_CACHE/compile/$(jq -r .compile.key "$tmp/$task.json")
	[ -f "$dir/ksci_wrapper.cu" ] || { echo "nvcc-flags: no build of $task's seed" >&2; exit 1; }
	for r in $(seq "$rounds"); do
		for v in "${variants[@]}"; do
			name=${v%%|*} flags=${v#*|}
			w=$tmp/$task-$name
			mkdir -p "$w"
			cp "$dir/candidate.cu" "$dir/ksci_wrapper.cu" "$w/"
			# shellcheck disable=SC2086 # flags are words
			/usr/bin/time -f "%U %S %e" -o "$w/t$r" sh -c "cd '$w' && exec '$NVCC' $flags -o out.so ksci_wrapper.cu" >/dev/null 2>&1
			echo "$task $name $(cat "$w/t$r")" >>"$tmp/times"
		done
	done
	if [ "$phases" = 1 ]; then
		w=$tmp/$task-phases
		mkdir -p "$w"
		cp "$dir/candidate.cu" "$dir/ksci_wrapper.cu" "$w/"
		flags=${variants[1]#*|} # sass-only: kcompile's flags now
		# shellcheck disable=SC2086 # flags are words
		(cd "$w" && "$NVCC" --time phases.csv $flags -o out.so ksci_wrapper.cu >/dev/null 2>&1)
		awk -F' *, *' -v t="$task" 'NR > 1 { printf "%s phase %-22s %8.0f ms\n", t, $2, $7; s += $7 } END { printf "%s phase %-22s %8.0f ms\n", t, "(sum)", s }' "$w/phases.csv" >>"$tmp/phases"
	fi
done
echo "nvcc $("$NVCC" --version | tail -n 1); $rounds rounds; CPU = user + sys seconds of nvcc and its children"
awk "$AWK_MED"'{cpu[$1" "$2] = cpu[$1" "$2] " " ($3 + $4); wall[$1" "$2] = wall[$1" "$2] " " $5; order[++n] = $1" "$2}
END { printf "%-8s %-12s %9s %9s %9s\n", "task", "variant", "CPU s", "wall s", "CPU/base"
	for (i = 1; i <= n; i++) { if (seen[order[i]]++) continue; split(order[i], p, " ")
		c = med(cpu[order[i]]); if (p[2] == "kcompile") base[p[1]] = c
		printf "%-8s %-12s %9.2f %9.2f %9.3f\n", p[1], p[2], c, med(wall[order[i]]), c / base[p[1]] } }' "$tmp/times"
[ "$phases" = 0 ] || cat "$tmp/phases"
