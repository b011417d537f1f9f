#!/usr/bin/env bash
# An interrupted spread generation (the whole run killed with SIGKILL mid-way,
# as when the head node dies) continues when re-run: the candidates are not
# generated again and no job the joblog shows done is run again.
# shellcheck disable=SC1091
. "$(dirname "$0")/lib.sh"
# shellcheck disable=SC1091
. "$(dirname "$0")/cluster-lib.sh"

# spread-ids-chunk-of-one: job k of a spread is the k-th chunk of its input,
# not line k (t81-slurm's jobs hold 2 records; tests/sh/lib.sh spread_ids).
mkdir -p "$T/sw"
printf 'chunk=2\n' >"$T/sw/params"
for i in 1 2 3 4 5; do printf '{"id": "r%s"}\n' "$i"; done >"$T/sw/input.ndjson"
expect_eq "spread-ids-chunk-of-one: jobs 2 and 3 of chunks of 2 are records 3, 4 and 5" "r3 r4 r5" \
	"$(printf '2\n3\n' | spread_ids "$T/sw" | xargs)"

a=$T/run/softmax.ndjson.gz
export CLUSTER_LOG=$T/stages.log CLUSTER_RUN=0 CLUSTER_SLEEP=0.4
run() {
	evolve-parallel.sh --task softmax --population 10 --seed 5 --archive "$a" --quiet --jobs 2 --chunk 1 --stop-slower 0 \
		--keep-work --stages-cmd "$ROOT/tests/sh/cluster-stages.sh" \
		--budget 0.01 --ktime-opt --min-runs --ktime-opt 2 --ktime-opt --max-runs --ktime-opt 3 "$@"
}
run --generations 0 >/dev/null 2>&1
expect_eq "generation 0 (the seed) archived" 1 "$(gzip -dc "$a" | wc -l)"

g=$a.work/softmax-c-g1
export CLUSTER_RUN=1
setsid bash -c 'exec "$@"' run evolve-parallel.sh --task softmax --population 10 --seed 5 --archive "$a" --quiet --jobs 2 --chunk 1 --stop-slower 0 \
	--keep-work --stages-cmd "$ROOT/tests/sh/cluster-stages.sh" \
	--budget 0.01 --ktime-opt --min-runs --ktime-opt 2 --ktime-opt --max-runs --ktime-opt 3 --generations 1 \
	>"$T/out1" 2>"$T/err1" &
pid=$!
ndone=0
for _ in $(seq 1 300); do
	ndone=$(joblog_done "$g/spread/joblog")
	[ "$ndone" -ge 3 ] && break
	sleep 0.1
done
# The run is its own process group (setsid): kill all of it, parallel and jobs.
kill -KILL -- "-$pid"
wait "$pid" 2>/dev/null
ok "the run was killed with 3..9 of 10 jobs done ($ndone)" test "$ndone" -ge 3 -a "$ndone" -le 9
expect_eq "the interrupted generation left the archive as it was" 1 "$(gzip -dc "$a" | wc -l)"
cand_sum=$(md5sum <"$g/candidates.ndjson")
# Ids of the jobs done before the kill: job k is candidate line k (--chunk 1).
joblog_done_seq "$g/spread/joblog" | sort >"$T/done1.seq"
spread_ids "$g/spread" <"$T/done1.seq" >"$T/done1.ids"
expect_eq "their ids are known" "$(wc -l <"$T/done1.seq")" "$(wc -l <"$T/done1.ids")"
cp "$g/spread/joblog" "$T/joblog1"

export CLUSTER_RUN=2
run --generations 1 >"$T/out2" 2>"$T/err2"
expect_eq "the re-run exits 0" 0 $?
expect_eq "it did not generate the candidates again" "$cand_sum" "$(md5sum <"$g/candidates.ndjson")"
# The resume is the generation's joblog; a done candidate starts again only
# in a pass's spread (t81-slurm says why).
expect_eq "no job done before the kill ran again (the generation's joblog)" "" "$(joblog_again "$T/done1.seq" "$T/joblog1" "$g/spread/joblog")"
awk '$1 == "start" && $3 == 2 { print $4 }' "$CLUSTER_LOG" | sort >"$T/run2.ids"
pass_ids "$g" >"$T/pass2.ids"
expect_eq "…nor any candidate of those outside a pass" "" "$(comm -12 "$T/done1.ids" "$T/run2.ids" | comm -23 - "$T/pass2.ids" | xargs)"
ok "the re-run ran the rest ($(wc -l <"$T/run2.ids") jobs)" test -s "$T/run2.ids"
expect_eq "between them, every candidate ran" "$(jq -r .id "$g/candidates.ndjson" | sort | xargs)" \
	"$(sort -u "$T/done1.ids" "$T/run2.ids" | xargs)"
expect_eq "the archive holds every candidate once" "$(jq -r .id "$g/candidates.ndjson" | sort | xargs)" \
	"$(gzip -dc "$a" | jq -r 'select(.generation == 1) | .id' | sort | xargs)"
expect_eq "and 11 records in all" 11 "$(gzip -dc "$a" | wc -l)"
expect_eq "every candidate timed" "" "$(gzip -dc "$a" | jq -r 'select(.status != "timed") | .id')"
export CLUSTER_RUN=3
run --generations 1 >/dev/null 2>&1
expect_eq "a finished run re-run runs nothing" "" "$(awk '$3 == 3' "$CLUSTER_LOG")"
done_testing
