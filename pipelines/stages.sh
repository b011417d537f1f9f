#!/usr/bin/env bash
# stages.sh — the worker side of a spread generation: records on stdin,
#   kcompile | kverify | ktime
# on stdout. It runs on the GPU host (by GNU parallel over ssh, under srun, or
# locally), one job slot per GPU: with --gpus G the job binds itself to one of
# the host's G devices before any tool starts. The device is taken from the
# slot number ((slot - 1) mod G) when that device is free, else from the first
# free one: parallel numbers slots across all hosts, so on several hosts two
# jobs of one host can share a slot residue, and a per-host lock file per
# device keeps one job per GPU whatever the numbering.
#
# Exit status: 0 when every tool exited 0 or 1 (bad input is data: the records
# say so, and a line "stages.sh: bad input" on stderr tells the head node);
# 3 when a tool failed fatally, so parallel retries the job elsewhere.
set -euo pipefail

usage() {
	cat <<'USAGE'
usage: stages.sh [options] < records > records
  --stages LIST        comma-separated subset of compile,verify,time (default: all three)
  --force              redo the stages on records already past them (reprocessing)
  --slot N             GNU parallel job slot ({%}); with --gpus picks the device
  --gpus G             the host has G GPUs: bind this job to one (CUDA_VISIBLE_DEVICES
                       and HIP_VISIBLE_DEVICES; KSCI_CUDA_DEVICE unset); 0 leaves them
                       as they are (default: 0)
  --budget SEC         ktime budget per benchmark size
  --kcompile-opt OPT   extra option for kcompile (repeatable); likewise
  --kverify-opt, --ktime-opt
  -h, --help           this text
Environment: KSCIBIN (directory of the ksci tools; default: next to this script,
then its ../build/bin, then PATH), KSCI_TASKS, KSCI_CACHE, KSCI_GPU_LOCKS
(directory of the per-device lock files; default: ${TMPDIR:-/tmp}/ksci-gpu-locks).
Exit status: 0 records written (tools exited 0 or 1); 2 usage; 3 a tool failed fatally.
USAGE
}

stages=compile,verify,time force=0 slot=1 gpus=0 budget=""
comp_opts=() ver_opts=() time_opts=()
while [ $# -gt 0 ]; do
	case $1 in
	--stages) stages=$2; shift ;;
	--force) force=1 ;;
	--slot) slot=$2; shift ;;
	--gpus) gpus=$2; shift ;;
	--budget) budget=$2; shift ;;
	--kcompile-opt) comp_opts+=("$2"); shift ;;
	--kverify-opt) ver_opts+=("$2"); shift ;;
	--ktime-opt) time_opts+=("$2"); shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "stages.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
	esac
	shift
done
for n in "$slot" "$gpus"; do
	case $n in '' | *[!0-9]*) echo "stages.sh: '$n' is not a non-negative integer" >&2; exit 2 ;; esac
done
[ "$slot" -ge 1 ] || { echo "stages.sh: --slot must be at least 1" >&2; exit 2; }
[ -n "$budget" ] && time_opts+=(--budget "$budget")
if [ "$force" = 1 ]; then
	comp_opts=(--force "${comp_opts[@]}")
	ver_opts=(--force "${ver_opts[@]}")
	time_opts=(--force "${time_opts[@]}")
fi
cmds=()
IFS=, read -r -a want <<<"$stages"
for s in "${want[@]}"; do
	case $s in
	compile) cmds+=(kcompile) ;;
	verify) cmds+=(kverify) ;;
	time) cmds+=(ktime) ;;
	*) echo "stages.sh: unknown stage '$s' (compile, verify, time)" >&2; exit 2 ;;
	esac
done
[ "${#cmds[@]}" -ge 1 ] || { echo "stages.sh: --stages is empty" >&2; exit 2; }

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ -z "${KSCIBIN:-}" ]; then
	if [ -x "$here/kcompile" ]; then KSCIBIN=$here; elif [ -x "$here/../build/bin/kcompile" ]; then KSCIBIN=$here/../build/bin; fi
fi
[ -n "${KSCIBIN:-}" ] && PATH="$KSCIBIN:$PATH"
for t in "${cmds[@]}"; do
	command -v "$t" >/dev/null || { echo "stages.sh: $t not found on $(hostname)" >&2; exit 3; }
done

# One job per GPU: hold device d's lock (fd 8) while the tools run; they
# inherit the descriptor, so the lock lasts until the last of them exits.
if [ "$gpus" -ge 1 ]; then
	locks=${KSCI_GPU_LOCKS:-${TMPDIR:-/tmp}/ksci-gpu-locks}
	mkdir -p "$locks"
	pref=$(((slot - 1) % gpus))
	dev=""
	for i in $(seq 0 $((gpus - 1))); do
		d=$(((pref + i) % gpus))
		exec 8>>"$locks/gpu$d.lock"
		if flock -n 8; then dev=$d; break; fi
		exec 8>&-
	done
	if [ -z "$dev" ]; then
		dev=$pref
		exec 8>>"$locks/gpu$dev.lock"
		flock 8
	fi
	export CUDA_VISIBLE_DEVICES=$dev HIP_VISIBLE_DEVICES=$dev
	# The job sees one device: a KSCI_CUDA_DEVICE of the caller's would
	# index past it (every record unsupported, "no CUDA device N here").
	unset KSCI_CUDA_DEVICE
fi

run_stage() { # tool
	case $1 in
	# One compile at a time: GNU parallel already runs a stage pipe per slot
	# (--kcompile-opt -jN overrides: the last -j counts).
	kcompile) kcompile -j 1 "${comp_opts[@]}" ;;
	kverify) kverify "${ver_opts[@]}" ;;
	ktime) ktime "${time_opts[@]}" ;;
	esac
}

set +e
case ${#cmds[@]} in
1) run_stage "${cmds[0]}" ;;
2) run_stage "${cmds[0]}" | run_stage "${cmds[1]}" ;;
3) run_stage "${cmds[0]}" | run_stage "${cmds[1]}" | run_stage "${cmds[2]}" ;;
esac
rcs=("${PIPESTATUS[@]}")
set -e
worst=0
for rc in "${rcs[@]}"; do [ "$rc" -gt "$worst" ] && worst=$rc; done
if [ "$worst" -ge 2 ]; then
	echo "stages.sh: ${cmds[*]} on $(hostname) failed (exit statuses: ${rcs[*]})" >&2
	exit 3
fi
[ "$worst" = 1 ] && echo "stages.sh: bad input (exit statuses: ${rcs[*]})" >&2
exit 0
