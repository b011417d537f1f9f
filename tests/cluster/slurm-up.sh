#!/usr/bin/env bash
# tests/cluster/slurm-up.sh DIR [COMMAND ...] — a Slurm cluster on 127.0.0.1
# for the tests (Debian 12: slurm-wlm 22.05, munge), everything under DIR: one
# slurmctld, two slurmd node names on this machine (NodeHostname localhost,
# each its own port and spool) with $SLURM_TEST_CPUS (default 2) CPUs each,
# munged with a key of its own.  Run as root; what is missing is installed
# by the README's install step (scripts/install-deps.sh).  Once sinfo shows
# both nodes idle (at most 60 s): with COMMAND, runs it with SLURM_CONF set
# and stops everything it started when it ends (exit: COMMAND's status);
# without, prints "SLURM_CONF=DIR/slurm.conf" and leaves the daemons running,
# their pids in DIR/pids (munged first) for slurm-down.sh DIR.  Daemons are
# stopped by pid, never by name.  Exit 3: a daemon did not start or the nodes
# did not come idle (DIR/*.log say why; what started is stopped); 77: cannot
# run here (not root, or the packages cannot be installed), with the reason.
set -u
dir=${1:?usage: tests/cluster/slurm-up.sh DIR [COMMAND ...]}
shift
cpus=${SLURM_TEST_CPUS:-2}
skip() { echo "slurm-up: cannot run here: $*" >&2; exit 77; }
[ "$(id -u)" = 0 ] || skip "not root"
have() {
	local b
	for b in munged slurmctld slurmd sinfo srun salloc sbatch scancel; do
		command -v "$b" >/dev/null || [ -x "/usr/sbin/$b" ] || return 1
	done
}
have || sh "$(dirname "$0")/../../scripts/install-deps.sh" >&2 || true
have || skip "slurm-wlm or munge not installed, and sh scripts/install-deps.sh did not install them"
PATH=/usr/sbin:$PATH
mkdir -p "$dir"/{munge,ctld,n1,n2,state}
dir=$(cd "$dir" && pwd)
: >"$dir/pids"
down() { "$(dirname "$0")/slurm-down.sh" "$dir"; }
fail() { echo "slurm-up: $*" >&2; down; exit 3; }

# munge: a key and a socket of our own.
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
chmod 700 "$dir/munge"; chmod 400 "$dir/munge/munge.key"
munged --key-file="$dir/munge/munge.key" --socket="$dir/munge/socket" --pid-file="$dir/munge/munged.pid" \
	--log-file="$dir/munge/munged.log" --seed-file="$dir/munge/seed" --force >/dev/null 2>&1 ||
	fail "munged did not start ($(tail -n 2 "$dir/munge/munged.log" 2>/dev/null))"
cat "$dir/munge/munged.pid" >>"$dir/pids"

port=$((6817 + RANDOM % 1000))
cat >"$dir/slurm.conf" <<CONF
ClusterName=ksci-test
SlurmctldHost=localhost
SlurmctldPort=$port
SlurmdPort=$((port + 1000))
AuthType=auth/munge
AuthInfo=socket=$dir/munge/socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/%n
SlurmctldPidFile=$dir/ctld/slurmctld.pid
SlurmdPidFile=$dir/%n/slurmd.pid
SlurmctldLogFile=$dir/ctld/slurmctld.log
SlurmdLogFile=$dir/%n/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
# Generous, for a machine whose every core is busy (the suite under load):
# slurmctld's pings and srun's messages wait longer before a node or a step
# is given up; nothing here tests Slurm's own failure detection.
SlurmdTimeout=300
MessageTimeout=60
InactiveLimit=0
KillWait=5
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=n1 NodeHostname=localhost Port=$((port + 1001)) CPUs=$cpus State=UNKNOWN
NodeName=n2 NodeHostname=localhost Port=$((port + 1002)) CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$dir/slurm.conf
slurmctld -f "$SLURM_CONF" -i >/dev/null 2>&1 || fail "slurmctld did not start ($(tail -n 3 "$dir/ctld/slurmctld.log" 2>/dev/null))"
for _ in $(seq 50); do [ -s "$dir/ctld/slurmctld.pid" ] && break; sleep 0.1; done
cat "$dir/ctld/slurmctld.pid" >>"$dir/pids"
for n in n1 n2; do
	slurmd -f "$SLURM_CONF" -N "$n" >/dev/null 2>&1 || fail "slurmd $n did not start ($(tail -n 3 "$dir/$n/slurmd.log" 2>/dev/null))"
	for _ in $(seq 50); do [ -s "$dir/$n/slurmd.pid" ] && break; sleep 0.1; done
	cat "$dir/$n/slurmd.pid" >>"$dir/pids"
done
for _ in $(seq 600); do
	if [ "$(sinfo -h -N -o '%N %t' 2>/dev/null | awk '$2 == "idle"' | wc -l)" = 2 ]; then
		[ $# -gt 0 ] || { echo "SLURM_CONF=$SLURM_CONF"; exit 0; }
		trap down EXIT
		"$@"
		exit
	fi
	sleep 0.1
done
fail "the nodes did not come idle in 60 s: $(sinfo -h -N -o '%N %t' 2>&1 | xargs)"
