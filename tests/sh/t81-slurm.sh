#!/usr/bin/env bash
# t81-slurm: evolve-parallel.sh --srun on a real Slurm cluster (slurmctld and
# two slurmd of Debian's slurm-wlm 22.05, munge; tests/cluster/slurm-up.sh),
# on the c back end: two generations inside salloc, every candidate once and
# every status final, each job a real job step; the job script of
# docs/cluster.md adapted to c under sbatch; scancel of the batch job in the
# middle of a generation, then a re-run that finishes it without running a
# finished job again; a job step killed with scancel --signal=KILL is
# retried.  Skipped, with the reason, only where the daemons cannot run.
# shellcheck disable=SC1091
. "$(dirname "$0")/lib.sh"
S=$T/slurm
up=$("$ROOT/tests/cluster/slurm-up.sh" "$S" 2>"$T/up.err")
rc=$?
if [ "$rc" = 77 ]; then
	echo "ok 1 # SKIP $(cat "$T/up.err")"
	done_testing
	exit 0
fi
trap '"$ROOT/tests/cluster/slurm-down.sh" "$S"; rm -rf "$T"' EXIT
expect_eq "the cluster came up (two nodes idle)" "0" "$rc"
[ "$rc" = 0 ] || { cat "$T/up.err" "$S"/*/*.log 2>/dev/null | tail -n 20 | sed 's/^/#   /'; done_testing; exit 1; }
export "${up?}" # SLURM_CONF=...
export PATH=/usr/sbin:$PATH
launched() { cat "$S"/n1/slurmd.log "$S"/n2/slurmd.log 2>/dev/null | grep -c 'launch task StepId=' || true; }

export CLUSTER_LOG=$T/stages.log CLUSTER_SLEEP=0
# run ARCHIVE ARGS...: the search on the c back end, steps through srun, the
# jobs logged by tests/sh/cluster-stages.sh (CLUSTER_RUN says which run).
run() {
	local a=$1
	shift
	evolve-parallel.sh --task rowsum --backend c --population 4 --seed 3 --archive "$a" --quiet --stop-slower 0 \
		--srun --keep-work --stages-cmd "$ROOT/tests/sh/cluster-stages.sh" \
		--budget 0.01 --ktime-opt --min-runs --ktime-opt 2 --ktime-opt --max-runs --ktime-opt 3 "$@"
}
# final ARCHIVE: "every id once" and the statuses that are not final.
final() {
	gzip -dc "$1" | jq -r .id | sort | uniq -d | xargs
	gzip -dc "$1" | jq -r 'select(.status | IN("timed", "slow", "wrong", "compile_error", "crashed", "timeout") | not) | .id' | xargs
}

# 1. salloc: two generations, each job a step of the allocation.
a1=$T/a1.ndjson.gz
before=$(launched)
CLUSTER_RUN=1 timeout 600 salloc -n 4 bash -c "$(declare -f run); run '$a1' --generations 2" >"$T/s1.out" 2>"$T/s1.err"
expect_eq "salloc: two generations, exit 0" 0 "$?"
expect_eq "salloc: 9 records (the seed, 4 + 4), every id once, every status final" "9||" \
	"$(gzip -dc "$a1" | wc -l)|$(final "$a1" | paste -sd '|')"
steps=$(($(launched) - before))
ok "salloc: every job ran as a step of the allocation (slurmd launched $steps steps, 8 jobs)" test "$steps" -ge 8

# 2. sbatch: the job script of docs/cluster.md, for c.
a2=$T/a2.ndjson.gz
cat >"$T/job.sh" <<EOF
#!/bin/bash
#SBATCH --job-name=ksci --nodes=2 --ntasks-per-node=2 --cpus-per-task=1
#SBATCH --output=$T/job-%j.out
export PATH='$PATH' KSCIBIN='$KSCIBIN' KSCI_CACHE='$KSCI_CACHE' KSCI_TASKS='$KSCI_TASKS'
'$ROOT'/pipelines/evolve-parallel.sh --task rowsum --backend c --generations 2 --population 4 \\
    --srun --srun-opt --cpus-per-task=1 --budget 0.01 --archive '$a2' --quiet
EOF
timeout 600 sbatch --wait "$T/job.sh" >"$T/sb.out" 2>&1
rc=$?
expect_eq "sbatch --wait: the job ended well" 0 "$rc"
if [ "$rc" != 0 ]; then # what Slurm and the job said (the directory goes with the test), the job last:
	# CI shows a failure's last lines.  Slurm's lines about its PMIx plugin (not loadable here, not used) left out.
	grep -ihE 'error|down|timed out|not responding' "$S"/ctld/slurmctld.log "$S"/n*/slurmd.log 2>/dev/null | grep -viE 'pmix|mpi' |
		tail -n 10 | sed 's/^/#   /'
	grep -viE 'pmix|mpi' "$T/sb.out" | tail -n 5 | sed 's/^/#   /'
	for f in "$T"/job-*.out; do
		echo "#   $f:"
		tail -n 15 "$f" | sed 's/^/#   /'
		# a failed generation names its first failed job's stderr: show it
		sed -n 's/.* and \(\/[^)]*\.err\)); re-run to continue$/\1/p' "$f" | head -n 1 | xargs -r tail -n 5 | sed 's/^/#   /'
	done
fi
expect_eq "sbatch: two generations, 9 records, every id once, every status final" "9||" "$(gzip -dc "$a2" | wc -l)|$(final "$a2" | paste -sd '|')"

# 3. scancel in the middle of a generation; the re-run finishes it.
a3=$T/a3.ndjson.gz
CLUSTER_RUN=0 run "$a3" --generations 0 >/dev/null 2>&1
g=$a3.work/rowsum-c-g1
cat >"$T/job3.sh" <<EOF
#!/bin/bash
#SBATCH --ntasks=2 --output=$T/job3.out
export PATH='$PATH' KSCIBIN='$KSCIBIN' KSCI_CACHE='$KSCI_CACHE' KSCI_TASKS='$KSCI_TASKS' CLUSTER_LOG='$CLUSTER_LOG' CLUSTER_RUN=3 CLUSTER_SLEEP=1
$(declare -f run)
run '$a3' --generations 1 --population 8
EOF
job=$(sbatch --parsable "$T/job3.sh")
ndone=0
for _ in $(seq 1 600); do
	ndone=$(joblog_done "$g/spread/joblog")
	[ "$ndone" -ge 2 ] && break
	sleep 0.1
done
scancel "$job"
for _ in $(seq 1 300); do [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && break; sleep 0.1; done
# The spread's jobs: its 8 records in chunks of the size spread.sh chose (2 for
# the batch job's 2 tasks: 4 jobs).
chunk=$(spread_chunk "$g/spread")
njobs=$((($(wc -l <"$g/spread/input.ndjson") + ${chunk:-1} - 1) / ${chunk:-1}))
ok "scancel with 2..$((njobs - 1)) of $njobs jobs done ($ndone, $chunk records a job)" test "$ndone" -ge 2 -a "$ndone" -le $((njobs - 1))
expect_eq "the cancelled generation left the archive as it was (the seed)" 1 "$(gzip -dc "$a3" | wc -l)"
joblog_done_seq "$g/spread/joblog" | sort >"$T/done3.seq"
spread_ids "$g/spread" <"$T/done3.seq" >"$T/done3.ids"
cp "$g/spread/joblog" "$T/joblog3"
CLUSTER_RUN=4 timeout 600 salloc -n 2 bash -c "$(declare -f run); run '$a3' --generations 1 --population 8" >"$T/s4.out" 2>"$T/s4.err"
expect_eq "the re-run exits 0" 0 "$?"
# The resume itself is the generation's joblog: no job shown done gets a
# line again.  Its candidates (spread_ids: the job's chunk, not line k of the
# candidates, spread-ids-chunk-of-one) do not start again in run 4 but in a
# pass's spread (a fix round takes a failed record, a recheck one held back
# as implausible: the stages run on them again by design).
expect_eq "no job done before the scancel ran again (the generation's joblog)" "" "$(joblog_again "$T/done3.seq" "$T/joblog3" "$g/spread/joblog")"
awk '$1 == "start" && $3 == 4 { print $4 }' "$CLUSTER_LOG" | sort >"$T/run4.ids"
pass_ids "$g" >"$T/pass4.ids"
expect_eq "…nor any candidate of those outside a pass" "" "$(comm -12 "$T/done3.ids" "$T/run4.ids" | comm -23 - "$T/pass4.ids" | xargs)"
comm -12 "$T/done3.ids" "$T/run4.ids" | comm -12 - "$T/pass4.ids" | while read -r id; do
	echo "# done before the scancel, started again by a pass: $id ($(gzip -dc "$a3" | jq -r --arg i "$id" 'select(.id == $i) | "\(.status)\(if .time.implausible then ", implausible" else "" end)"'))"
done
expect_eq "the archive: the seed and the 8 candidates, each once, every status final" "9||" \
	"$(gzip -dc "$a3" | wc -l)|$(final "$a3" | paste -sd '|')"

# 4. A job step killed with scancel --signal=KILL is retried.
a4=$T/a4.ndjson.gz
CLUSTER_RUN=0 run "$a4" --generations 0 >/dev/null 2>&1
CLUSTER_RUN=5 CLUSTER_SLEEP=5 timeout 600 salloc -n 2 bash -c "$(declare -f run); run '$a4' --generations 1" \
	>"$T/s5.out" 2>"$T/s5.err" &
pid=$!
# Kill a step only once every running step has logged its start (started
# and not ended in run 5 = running steps): a step killed before its stages
# began leaves no first start to see (one such run failed this check).  Each
# then sleeps 5 s before its stages, so the one killed is surely inside them.
step=""
for _ in $(seq 1 1200); do
	steps=$(squeue -h -s -o '%i' 2>/dev/null | grep -E '^[0-9]+\.[0-9]+$' | sort -t. -k2,2n)
	inside=$(awk '$3 == 5 { n[$1]++ } END { print n["start"] - n["end"] }' "$CLUSTER_LOG" 2>/dev/null)
	if [ -n "$steps" ] && [ "$(wc -l <<<"$steps")" = "${inside:-0}" ]; then
		step=$(head -n 1 <<<"$steps")
		break
	fi
	sleep 0.1
done
ok "a job step was running ($step)" test -n "$step"
scancel --signal=KILL "$step"
wait "$pid"
expect_eq "the run went on and exited 0" 0 "$?"
expect_eq "the archive: the seed and the 4 candidates, each once, every status final" "5||" \
	"$(gzip -dc "$a4" | wc -l)|$(final "$a4" | paste -sd '|')"
expect_eq "the killed step's candidate started twice (killed, then retried)" 1 \
	"$(awk '$1 == "start" && $3 == 5 { print $4 }' "$CLUSTER_LOG" | sort | uniq -d | wc -l)"
done_testing
