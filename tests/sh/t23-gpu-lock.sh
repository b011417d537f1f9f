#!/usr/bin/env bash
# t23-gpu-lock: one judge at work per GPU (verify-overlapped-timing-on-the-gpu).
# In `kcompile | kverify | ktime` the stages run at once, and on an H100
# kverify's checks of the next record ran while ktime timed this one: the
# timing cross-check called 2 of 64 honest softmax children `wrong`.  Every
# GPU job now holds an exclusive flock on $KSCI_GPU_LOCK_DIR/ksci-gpu-DEV.lock.
# Here (no GPU needed: the job is taken under the lock even where it ends
# `unsupported`): kverify waits while the lock is held, writes nothing
# meanwhile, goes on when it is released and records how long it waited;
# the lock is named after the device CUDA_VISIBLE_DEVICES and
# KSCI_CUDA_DEVICE pick.  No step depends on how long anything takes: the
# wait is seen in /proc/locks.
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1
if ! command -v "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" >/dev/null; then
	echo "ok 1 # SKIP no nvcc: no cuda record to verify"
	done_testing
	exit 0
fi
export KSCI_GPU_LOCK_DIR=$T/locks
mkdir -p "$KSCI_GPU_LOCK_DIR"
jq -cn --rawfile s "$ROOT/data/tasks/softmax/seed.cu" \
	'{id: "s", task: "softmax", backend: "cuda", generation: 0, parents: [], source: $s, status: "generated"}' |
	kcompile >c.nd 2>c.err
expect_eq "the cuda seed compiles" compiled "$(jq -r .status c.nd)"

# The task's own objects compiled first, outside the lock: kverify compiles
# them (through the cache) before it asks for the lock, and under load (a
# run of scripts/check-under-load.sh) the reference's nvcc ran past its
# deadline before kverify ever reached the lock (t16,
# trusted-role-compile-timeout-blamed-on-candidate).  A compile that fails
# for the machine's sake is not cached, so this tries again.
for _ in 1 2 3; do
	kverify --unsafe-no-sandbox <c.nd >warm.nd 2>/dev/null
	[ "$(jq -r .status warm.nd)" = unsupported ] && break
done
expect_eq "the task's objects are compiled (no GPU here: unsupported)" unsupported "$(jq -r .status warm.nd)"
lock=$KSCI_GPU_LOCK_DIR/ksci-gpu-0.lock
: >"$lock"
exec 9>"$lock"
flock 9
kverify --unsafe-no-sandbox <c.nd >v.nd 2>v.err 9>&- &
kv=$!
ino=$(stat -c %i "$lock")
blocked=no
for _ in $(seq 1200); do # until kverify waits on the lock (at most 120 s)
	grep -q -- "-> FLOCK .*:$ino " /proc/locks && { blocked=yes; break; }
	sleep 0.1
done
expect_eq "kverify waits for the GPU lock another judge holds" yes "$blocked"
expect_eq "it writes nothing while it waits" 0 "$(wc -c <v.nd)"
exec 9>&-
wait "$kv"
expect_eq "released: kverify exit 0" 0 $?
expect_eq "released: the record goes on (no GPU here: unsupported)" unsupported "$(jq -r .status v.nd)"
ok "released: the stage says it waited" jq -e '.verify.gpu_wait_s > 0' v.nd

CUDA_VISIBLE_DEVICES=3,GPU-1a2b KSCI_CUDA_DEVICE=1 kverify --unsafe-no-sandbox <c.nd >v2.nd 2>/dev/null
ok "the lock is named after the device the job uses" test -e "$KSCI_GPU_LOCK_DIR/ksci-gpu-GPU-1a2b.lock"
ok "not after another" test ! -e "$KSCI_GPU_LOCK_DIR/ksci-gpu-3.lock"
jq -c '.backend = "c" | .task = "softmax" | .source = $s | .status = "generated"' --rawfile s "$ROOT/data/tasks/softmax/seed.c" c.nd |
	kcompile | kverify --unsafe-no-sandbox >v3.nd 2>/dev/null
ok "the c back end takes no GPU lock" jq -e '.status == "verified" and (.verify | has("gpu_wait_s") | not)' v3.nd
done_testing
