#!/usr/bin/env bash
# bench/gpu-multi.sh — one search over several GPUs of one host (the
# multi-GPU issue; figures in docs/cluster.md):
#   search   evolve-parallel.sh --gpus G --population P --generations K on
#            TASK (kgen's offline mutate): its wall time, candidates a minute,
#            and per GPU (time.env.gpu_uuid) the records and the judges
#            (time.judge.pid) that timed them;
#   scaling  the search's children again (each made distinct by a comment,
#            so each is compiled again) through spread.sh with 1, then G
#            GPUs: candidates a minute and the ratio;
#   kill     the children once more over G GPUs while, mid-run, the ktime
#            judge of the last GPU is killed (SIGKILL; ktime starts another
#            and asks the job again) and then a whole job of GPU 0 (its ktime:
#            GNU parallel retries the job): every candidate must come out,
#            exactly once.
# A judge keeps its anchors (cached baseline and seed timings) in its own
# memory, so "anchors not mixed across GPUs" is "no judge pid timed on two
# GPUs": printed as judges and GPUs per judge.
#   usage: bench/gpu-multi.sh [--gpus G] [--population P] [--generations K] [--chunk C]
#                             [--backend cuda|c] [--no-kill] [TASK]
#   env: KSCIBIN (default build/gpu/bin), KSCI_BWRAP; records under $OUT (or ./gpu-logs)
# --backend c runs the same steps on the CPU (a check of the script itself:
# there is no GPU to bind, and no gpu_uuid).
set -euo pipefail
gpus=2 pop=32 gens=2 chunk=8 backend=cuda kill=1
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) sed -n '2,/^\([^#]\|$\)/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
	--gpus) gpus=$2; shift ;;
	--population) pop=$2; shift ;;
	--generations) gens=$2; shift ;;
	--chunk) chunk=$2; shift ;;
	--backend) backend=$2; shift ;;
	--no-kill) kill=0 ;;
	-*) echo "gpu-multi: unknown option: $1" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
task=${1:-softmax}
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_setup multi
echo "== $task on $gpus GPUs: $(nvidia-smi --query-gpu=index,name,uuid,clocks.sm,temperature.gpu --format=csv,noheader 2>&1 | tr '\n' ';')"

# per_gpu FILE: per GPU the records and judges; then whether any judge timed
# on two GPUs (its anchors would then be another device's).
per_gpu() {
	jq -s -r '[.[] | select(.time.judge.pid != null) | {g: (.time.env.gpu_uuid // .time.env.cuda_device // "-" | tostring),
		p: .time.judge.pid, st: .status, a: ([.time.sizes[]? | select(.anchor.cached == true)] | length)}] as $r |
		($r | group_by(.g)[] | "  GPU \(.[0].g): \(length) records timed by \([.[] | .p] | unique | length) judge(s) (pids \([.[] | .p] | unique | map(tostring) | join(" "))), \([.[] | select(.a > 0)] | length) of them against cached anchors; \([.[] | .st] | group_by(.) | map("\(length) \(.[0])") | join(", "))"),
		"  judges: \($r | [.[] | .p] | unique | length); GPUs per judge: at most \($r | group_by(.p) | map([.[] | .g] | unique | length) | max // 0)"' "$1"
}
# children FILE TAG: the search's children as new records, each made distinct.
children() {
	gzip -dc "$arc" | jq -c --arg t "$2" 'select(.generation >= 1 and .source != null) |
		{id: (.id + "-" + $t), task, backend, generation, parents, source: (.source + "\n// gpu-multi \($t)\n"), status: "generated"}' >"$1"
}

# --- the search ----------------------------------------------------------------
arc=$out/$task-multi.ndjson.gz
rm -f "$arc" "$arc".*
t0=$(date +%s.%N)
"$here/pipelines/evolve-parallel.sh" --task "$task" --backend "$backend" --population "$pop" --generations "$gens" \
	--gpus "$gpus" --chunk "$chunk" --kcompile-opt "-j$((cores / gpus))" --archive "$arc" --work "$tmp/evolve" \
	>"$out/search.log" 2>&1 || { echo "search: evolve-parallel.sh exit $?"; tail -n 20 "$out/search.log"; exit 1; }
s=$(since "$t0")
gzip -dc "$arc" >"$out/search.nd"
n=$(jq -c 'select(.generation >= 1)' "$out/search.nd" | wc -l)
echo "search: $(wc -l <"$out/search.nd") records ($n children in generations 1-$gens, the seed in 0) in $s s," \
	"$(rate "$n" "$s") children a minute with kselect and kgen; $(jq -r .status "$out/search.nd" | sort | uniq -c | xargs)"
per_gpu "$out/search.nd"

# --- scaling: the same children on 1 and on G GPUs ------------------------------
declare -A r
for g in 1 "$gpus"; do
	children "$tmp/kids-$g.nd" "g$g"
	n=$(wc -l <"$tmp/kids-$g.nd")
	t0=$(date +%s.%N)
	"$here/pipelines/spread.sh" --work "$tmp/w$g" --gpus "$g" --chunk "$chunk" --kcompile-opt "-j$((cores / g))" \
		--out "$out/scale-g$g.nd" "$tmp/kids-$g.nd" 2>"$out/scale-g$g.err" || echo "scaling: spread.sh exit $? on $g GPU(s)"
	s=$(since "$t0")
	r[$g]=$(rate "$n" "$s")
	echo "scaling, $g GPU(s): $n candidates in $s s = ${r[$g]} a minute; $(jq -r .status "$out/scale-g$g.nd" 2>/dev/null | sort | uniq -c | xargs)"
	per_gpu "$out/scale-g$g.nd"
done
echo "scaling ratio, $gpus GPUs over 1: $(awk -v a="${r[1]}" -v b="${r[$gpus]}" 'BEGIN { printf "%.2f", b / a }')"

# --- kill a judge, then a job, mid-run ------------------------------------------
[ "$kill" = 1 ] || exit 0
children "$tmp/kids-k.nd" kill
n=$(wc -l <"$tmp/kids-k.nd")
# ktime_on D: the pid of a ktime bound to device D (its environment says so).
ktime_on() {
	local p
	for p in $(pgrep -x ktime); do
		tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "CUDA_VISIBLE_DEVICES=$1" && { echo "$p"; return 0; }
	done
	return 1
}
# Each job's start is logged (parallel's joblog keeps only a job's last try).
printf '#!/bin/sh\necho "$$ $*" >>"%s"\nexec "%s" "$@"\n' "$tmp/starts" "$here/pipelines/stages.sh" >"$tmp/stages-logged.sh"
chmod +x "$tmp/stages-logged.sh"
: >"$tmp/starts"
"$here/pipelines/spread.sh" --work "$tmp/wk" --gpus "$gpus" --chunk "$chunk" --kcompile-opt "-j$((cores / gpus))" \
	--stages-cmd "$tmp/stages-logged.sh" --out "$out/kill.nd" "$tmp/kids-k.nd" 2>"$out/kill.err" &
sp=$!
last=$((gpus - 1)) judge="" victim=""
for _ in $(seq 600); do # the last GPU's ktime judge, once it has started (at most 60 s)
	kt=$(ktime_on "$last") && judge=$(pgrep -P "$kt" -f -- '--serve' | head -n 1) && [ -n "$judge" ] && break
	sleep 0.1
done
sleep 1
[ -n "$judge" ] && kill -KILL "$judge" && echo "kill: SIGKILL to the ktime judge (pid $judge) of GPU $last, ktime pid $kt"
sleep 3
for _ in $(seq 300); do # then a ktime of GPU 0, a job under way (at most 30 s)
	victim=$(ktime_on 0) && break
	sleep 0.1
done
sleep 2
[ -n "$victim" ] && kill -KILL "$victim" && echo "kill: SIGKILL to ktime (pid $victim) of GPU 0: its job fails and is retried"
wait "$sp" && rc=0 || rc=$?
ids_in=$(jq -r .id "$tmp/kids-k.nd" | sort | xargs)
ids_out=$(jq -r .id "$out/kill.nd" 2>/dev/null | sort | xargs)
echo "kill: spread.sh exit $rc; $n candidates in, $(wc -l <"$out/kill.nd" 2>/dev/null || echo 0) out," \
	"every id exactly once: $([ "$ids_in" = "$ids_out" ] && echo yes || echo NO); $(jq -r .status "$out/kill.nd" 2>/dev/null | sort | uniq -c | xargs)"
echo "kill: $(((n + chunk - 1) / chunk)) jobs, $(wc -l <"$tmp/starts") started (a retry is a start more);" \
	"records timed by a second judge of their ktime (time.judge.started > 1): $(jq -s '[.[] | select((.time.judge.started // 1) > 1)] | length' "$out/kill.nd" 2>/dev/null)"
grep -h "was killed" "$tmp/wk/out" -r 2>/dev/null | head -n 3 | sed 's/^/  /' || true
per_gpu "$out/kill.nd"
