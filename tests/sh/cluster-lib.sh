# shellcheck shell=bash
# tests/sh/cluster-lib.sh — sourced by the t80-cluster tests after lib.sh.
# Gives "hosts" on this machine: sshd instances on loopback ports, each with a
# host key and an authorized key made here, started by the test and killed by
# its EXIT trap (with every session they spawned).
#   cluster_sshd NAME      start one; sets SSH_<NAME> to its parallel --sshlogin
#                          command and PORT_<NAME> to its port; 1 if sshd cannot run
#   cluster_kill NAME      kill that host's sshd and all its sessions (a lost host),
#                          also any of their processes that left the sshd's tree
#   cluster_host_pids PORT the processes started through the sshd on PORT
#   cluster_descendants PID   every descendant pid of PID, deepest last
# Also: cluster-stages.sh (a logging stages.sh for the workers).
cluster_pids=()

cluster_descendants() {
	local c
	for c in $(pgrep -P "$1" 2>/dev/null); do
		echo "$c"
		cluster_descendants "$c"
	done
}

_cluster_killtree() { # pid: the process and everything under it
	# Stop the tree first, until no new process appears, so nothing forks
	# away between listing and killing; then kill every listed pid.
	local all prev=""
	kill -STOP "$1" 2>/dev/null || return 0
	all="$1 $(cluster_descendants "$1" | xargs)"
	while [ "$all" != "$prev" ]; do
		prev=$all
		# shellcheck disable=SC2086
		kill -STOP $all 2>/dev/null
		all="$1 $(cluster_descendants "$1" | xargs)"
	done
	# shellcheck disable=SC2086
	kill -KILL $all 2>/dev/null
	return 0
}

cluster_cleanup() {
	local p
	for p in "${cluster_pids[@]}"; do _cluster_killtree "$p"; done
	return 0
}
trap 'cluster_cleanup; rm -rf "$T"' EXIT

cluster_sshd() { # NAME
	local name=$1 dir=$T/ssh/$1 port try pid
	command -v sshd >/dev/null 2>&1 || [ -x /usr/sbin/sshd ] || return 1
	mkdir -p "$dir"
	[ -f "$T/ssh/id" ] || ssh-keygen -q -t ed25519 -N '' -f "$T/ssh/id" || return 1
	cp "$T/ssh/id.pub" "$dir/authorized_keys"
	chmod 600 "$dir/authorized_keys"
	ssh-keygen -q -t ed25519 -N '' -f "$dir/hostkey" || return 1
	# The privilege-separation directory sshd wants when started as root.
	[ "$(id -u)" = 0 ] && mkdir -p /run/sshd
	for try in 1 2 3 4 5 6 7 8; do
		port=$((20000 + (RANDOM % 20000)))
		cat >"$dir/sshd_config" <<EOF
Port $port
ListenAddress 127.0.0.1
HostKey $dir/hostkey
AuthorizedKeysFile $dir/authorized_keys
PidFile none
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
MaxStartups 100
LogLevel ERROR
EOF
		"$(command -v sshd || echo /usr/sbin/sshd)" -D -f "$dir/sshd_config" -E "$dir/log" &
		pid=$!
		local _
		for _ in $(seq 1 50); do
			kill -0 "$pid" 2>/dev/null || break
			if ssh -p "$port" -i "$T/ssh/id" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
				-o BatchMode=yes -o LogLevel=ERROR -o ConnectTimeout=2 "$(id -un)@127.0.0.1" true 2>/dev/null; then
				disown "$pid" # no "Killed" notice when the test kills it
				cluster_pids+=("$pid")
				printf -v "PORT_$name" '%s' "$port"
				printf -v "SSH_$name" '%s' "ssh -p $port -i $T/ssh/id -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR -o ConnectTimeout=5 $(id -un)@127.0.0.1"
				printf -v "PID_$name" '%s' "$pid"
				return 0
			fi
			sleep 0.1
		done
		_cluster_killtree "$pid"
		wait "$pid" 2>/dev/null
		[ "$try" = 8 ] && { echo "# sshd did not start: $(head -c 300 "$dir/log" 2>/dev/null)"; return 1; }
	done
	return 1
}

# cluster_host_pids PORT: every process started through the sshd on PORT,
# found by the SSH_CONNECTION its session set: a job that left the sshd's
# tree (re-parented when its parent died) is found too.
cluster_host_pids() {
	local p
	for p in /proc/[0-9]*; do
		[ "${p#/proc/}" = "$$" ] && continue
		grep -qzx "SSH_CONNECTION=.* $1" "$p/environ" 2>/dev/null && echo "${p#/proc/}"
	done
	return 0
}

cluster_kill() { # NAME
	local v="PID_$1" port="PORT_$1" pids _
	_cluster_killtree "${!v}"
	# Then whatever of the host's sessions left the tree (t80-ssh-job-survives-kill).
	for _ in 1 2 3 4 5; do
		pids=$(cluster_host_pids "${!port}" | xargs)
		[ -n "$pids" ] || break
		# shellcheck disable=SC2086
		kill -STOP $pids 2>/dev/null
		# shellcheck disable=SC2086
		kill -KILL $pids 2>/dev/null
		sleep 0.1
	done
	return 0
}

cluster_on() { # NAME command...: run a command on that host over ssh
	local v="SSH_$1"
	shift
	# The login is a command line, split on purpose (as parallel does).
	# shellcheck disable=SC2086
	${!v} "$@"
}
