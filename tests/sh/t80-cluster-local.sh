#!/usr/bin/env bash
# The cluster scripts on local slots: one GPU per slot, srun wrapping, a job
# that fails is the only one redone, bad input, reprocessing an archive into a
# new one, usage errors and --help.
# shellcheck disable=SC1091
. "$(dirname "$0")/lib.sh"

# Fake tools: kcompile/kverify pass records through; ktime notes the device it
# was given, refuses to share it with another job (a busy directory per
# device), counts its calls per id, and fails for the id in $FAIL_ID.
mkdir -p "$T/fake" "$T/bin"
printf '#!/bin/sh\nexec cat\n' >"$T/fake/kcompile"
cp "$T/fake/kcompile" "$T/fake/kverify"
cat >"$T/fake/ktime" <<'EOF'
#!/bin/bash
set -u
d=${CUDA_VISIBLE_DEVICES-unset}
clash=false busy=""
if [ "$d" != unset ]; then
	busy=$FAKE_STATE/busy.$d
	if mkdir "$busy" 2>/dev/null; then trap 'rmdir "$busy"' EXIT; else clash=true; fi
fi
while IFS= read -r line; do
	id=$(printf '%s\n' "$line" | jq -r .id)
	echo "$id" >>"$FAKE_STATE/calls"
	[ "$id" = "${FAIL_ID:-}" ] && exit 3
	sleep "${FAKE_SLEEP:-0.2}"
	printf '%s\n' "$line" | jq -c --arg d "$d" --argjson c "$clash" --arg k "${KSCI_CUDA_DEVICE-unset}" \
		'. + {dev: $d, clash: $c, kdev: $k, status: "timed"}'
done
EOF
chmod +x "$T/fake/"*
export FAKE_STATE=$T/state KSCI_GPU_LOCKS=$T/locks
mkdir -p "$FAKE_STATE"
for i in $(seq 1 12); do printf '{"id":"c%02d","status":"generated","source":"x"}\n' "$i"; done >"$T/in.ndjson"

# One slot per GPU.
KSCIBIN=$T/fake spread.sh --work "$T/w1" --gpus 2 --out "$T/out1" "$T/in.ndjson"
expect_eq "spread.sh --gpus 2 exits 0" 0 $?
expect_eq "every record came back, in input order" "$(jq -r .id "$T/in.ndjson" | xargs)" "$(jq -r .id "$T/out1" | xargs)"
expect_eq "each job ran on device 0 or 1, both used" "0 1" "$(jq -r .dev "$T/out1" | sort -u | xargs)"
expect_eq "no two jobs shared a device at once" "" "$(jq -r 'select(.clash) | .id' "$T/out1")"
expect_eq "two slots (the joblog's commands name slots 1 and 2)" "1 2" \
	"$(awk -F '\t' 'NR > 1 { split($9, w, " "); print w[3] }' "$T/w1/joblog" | sort -u | xargs)"
# default-chunk-one-record-a-job: --chunk defaulted to 1, so every record
# paid for its job's judges and anchors; now about two jobs a slot.
expect_eq "12 records on 2 slots: chunks of 3 by default, 4 jobs" "chunk=3 4" \
	"$(cat "$T/w1/params") $(awk -F '\t' 'NR > 1' "$T/w1/joblog" | wc -l)"
KSCIBIN=$T/fake spread.sh --work "$T/w1b" -S "3/:" -S ":" --jobs 2 --stages-cmd "$ROOT/pipelines/stages.sh" \
	--out "$T/out1b" "$T/in.ndjson"
expect_eq "slots counted over logins (3/: and : with --jobs 2: 5 slots, chunks of 2)" "0 chunk=2 12" \
	"$? $(cat "$T/w1b/params") $(wc -l <"$T/out1b")"
# missing-loginfile-silent-exit-1: counting the slots for the default chunk
# read the file under pipefail, and a missing one ended spread.sh with exit 1
# (bad input) and no word; it is parallel's to refuse, with its name.
KSCIBIN=$T/fake spread.sh --work "$T/w1d" --sshloginfile "$T/no-such-hosts" "$T/in.ndjson" >/dev/null 2>"$T/err1d"
expect_eq "a missing --sshloginfile: exit 3" 3 $?
ok "... naming the file" grep -q "no-such-hosts" "$T/err1d"
for i in $(seq 1 200); do printf '{"id":"b%03d","status":"generated","source":"x"}\n' "$i"; done >"$T/in200.ndjson"
FAKE_SLEEP=0 KSCIBIN=$T/fake spread.sh --work "$T/w1c" --out "$T/out1c" "$T/in200.ndjson"
expect_eq "200 records on 1 slot: chunks of 64 (not 100), 4 jobs, all back" "0 chunk=64 4 200" \
	"$? $(cat "$T/w1c/params") $(awk -F '\t' 'NR > 1' "$T/w1c/joblog" | wc -l) $(wc -l <"$T/out1c")"

# stages.sh's device choice: the slot's own device, else a free one.
one=$(head -n 1 "$T/in.ndjson")
dev() { printf '%s\n' "$one" | KSCIBIN=$T/fake stages.sh --stages time "$@" | jq -r .dev; }
expect_eq "slot 1 of 2 GPUs takes device 0" 0 "$(dev --slot 1 --gpus 2)"
expect_eq "slot 4 of 2 GPUs takes device 1" 1 "$(dev --slot 4 --gpus 2)"
expect_eq "without --gpus the device is left alone" unset "$(dev --slot 3)"
mkdir -p "$KSCI_GPU_LOCKS"
exec 7>>"$KSCI_GPU_LOCKS/gpu0.lock"
flock 7
expect_eq "slot 1 takes device 1 while device 0 is busy" 1 "$(dev --slot 1 --gpus 2)"
exec 7>&-
# gpus-binding-keeps-ksci-cuda-device: a KSCI_CUDA_DEVICE of the caller's
# went through to a job bound to one device by --gpus, where it indexed past
# that one (KSCI_CUDA_DEVICE=1 of 1 visible: every record unsupported).
kdev() { printf '%s\n' "$one" | KSCI_CUDA_DEVICE=1 KSCIBIN=$T/fake stages.sh --stages time "$@" | jq -r '"\(.dev) \(.kdev)"'; }
expect_eq "--gpus binds the device and drops KSCI_CUDA_DEVICE" "1 unset" "$(kdev --slot 2 --gpus 2)"
expect_eq "without --gpus KSCI_CUDA_DEVICE is left alone" "unset 1" "$(kdev --slot 2)"

# Slurm: every job under srun --exclusive -N1 -n1, slots from SLURM_NTASKS.
cat >"$T/bin/srun" <<'EOF'
#!/bin/sh
echo "$*" >>"$FAKE_STATE/srun"
while [ $# -gt 0 ]; do case $1 in -*) shift ;; *) break ;; esac; done
exec "$@"
EOF
chmod +x "$T/bin/srun"
PATH=$T/bin:$PATH SLURM_NTASKS=3 KSCIBIN=$T/fake spread.sh --work "$T/w2" --srun --srun-opt --gres=gpu:1 \
	--out "$T/out2" "$T/in.ndjson"
expect_eq "spread.sh --srun exits 0" 0 $?
expect_eq "6 jobs (3 slots, chunks of 2) ran under srun --exclusive -N1 -n1" 6 "$(grep -c '^--exclusive -N1 -n1 --gres=gpu:1 .*stages.sh --slot [123] ' "$FAKE_STATE/srun")"
expect_eq "... with all records back" 12 "$(wc -l <"$T/out2")"

# A job that fails fatally: the others finish, nothing is written, and the
# re-run redoes only that job.
: >"$FAKE_STATE/calls"
FAIL_ID=c05 KSCIBIN=$T/fake spread.sh --work "$T/w3" --jobs 2 --retries 2 --chunk 2 --out "$T/out3" "$T/in.ndjson" 2>"$T/err3"
expect_eq "a job failing after its retries: exit 3" 3 $?
ok "no output is written" test ! -e "$T/out3"
ok "the failed job is named" grep -q 'jobs not done (first: job 3' "$T/err3"
expect_eq "the failing job ran twice (--retries 2)" 2 "$(grep -c '^c05$' "$FAKE_STATE/calls")"
: >"$FAKE_STATE/calls"
KSCIBIN=$T/fake spread.sh --work "$T/w3" --jobs 2 --retries 2 --chunk 2 --out "$T/out3" "$T/in.ndjson"
expect_eq "the re-run exits 0" 0 $?
expect_eq "and redid only the failed job (c05 c06)" "c05 c06" "$(sort "$FAKE_STATE/calls" | xargs)"
expect_eq "all 12 records, in order" "$(jq -r .id "$T/in.ndjson" | xargs)" "$(jq -r .id "$T/out3" | xargs)"
KSCIBIN=$T/fake spread.sh --work "$T/w3" --chunk 3 "$T/in.ndjson" >/dev/null 2>&1
expect_eq "a work directory refuses another --chunk" 3 $?
KSCIBIN=$T/fake spread.sh --work "$T/w3" --chunk 2 "$T/out1" >/dev/null 2>&1
expect_eq "... and another input" 3 $?
KSCIBIN=$T/fake spread.sh --work "$T/w3" --out "$T/out3b" "$T/in.ndjson"
expect_eq "without --chunk a re-run keeps the work directory's (2, not the default 6)" "0 12" "$? $(wc -l <"$T/out3b")"

# Bad input is data: exit 1, the record is kept as invalid.
printf '{"task":"matmul","backend":"c","status":"generated","id":"0123456789abcdef"}\n' >"$T/bad.ndjson"
spread.sh --work "$T/w4" --out "$T/out4" "$T/bad.ndjson" 2>/dev/null
expect_eq "a record without source: exit 1" 1 $?
expect_eq "... and it comes back invalid" invalid "$(jq -r .status "$T/out4")"

# Reprocessing: a real archive re-verified and re-timed into a new one.
old=$T/old.ndjson.gz
evolve.sh --task stencil2d --population 3 --generations 1 --budget 0.01 --archive "$old" -q --stop-slower 0 \
	--ktime-opt --min-runs --ktime-opt 2 --ktime-opt --max-runs --ktime-opt 3 >/dev/null 2>&1
printf '{"status":"gen_error","task":"stencil2d","backend":"c","generation":1,"gen":{"ok":false,"status":"exhausted"}}\n' |
	archive-append.sh "$old"
sum=$(md5sum <"$old")
reprocess.sh --jobs 2 --chunk 2 --budget 0.01 --ktime-opt --min-runs --ktime-opt 2 --ktime-opt --max-runs --ktime-opt 3 \
	"$old" "$T/new.ndjson.gz" 2>"$T/err5"
expect_eq "reprocess.sh exits 0" 0 $?
expect_eq "the old archive is unchanged" "$sum" "$(md5sum <"$old")"
expect_eq "the new archive holds every record, in order" "$(gzip -dc "$old" | jq -c '[.id, .status]' | xargs)" \
	"$(gzip -dc "$T/new.ndjson.gz" | jq -c '[.id, .status]' | xargs)"
expect_eq "every candidate was verified again (new seeds)" "" \
	"$(paste <(gzip -dc "$old" | jq -c '.verify.seeds') <(gzip -dc "$T/new.ndjson.gz" | jq -c '.verify.seeds') |
		awk -F '\t' '$1 != "null" && $1 == $2')"
expect_eq "and timed again" "" \
	"$(paste <(gzip -dc "$old" | jq -c '.time.sizes') <(gzip -dc "$T/new.ndjson.gz" | jq -c '.time.sizes') |
		awk -F '\t' '$1 != "null" && $1 == $2' | head -c 100)"
ok "its work directory is removed" test ! -e "$T/new.ndjson.gz.work"
reprocess.sh "$old" "$T/new.ndjson.gz" 2>/dev/null
expect_eq "reprocess.sh never overwrites an archive (exit 2)" 2 $?
reprocess.sh --stages verify,nope "$old" "$T/new2.ndjson" 2>/dev/null
expect_eq "an unknown stage is a usage error" 2 $?
ok "--stages verify alone writes plain NDJSON when NEW has no .gz" \
	sh -c "reprocess.sh --stages verify '$old' '$T/new3.ndjson' && test \"\$(wc -l <'$T/new3.ndjson')\" = 5"

for s in evolve-parallel.sh spread.sh stages.sh reprocess.sh archive-append.sh; do
	ok "$s --help" sh -c "$s --help | grep -q '^usage: $s'"
	"$s" --no-such-option >/dev/null 2>&1
	expect_eq "$s: an unknown option exits 2" 2 $?
done
evolve-parallel.sh --population x >/dev/null 2>&1
expect_eq "evolve-parallel.sh: a bad number exits 2" 2 $?
spread.sh --work "$T/w5" --jobs 0 "$T/in.ndjson" >/dev/null 2>&1
expect_eq "spread.sh --jobs 0 exits 2" 2 $?
done_testing
