#!/usr/bin/env bash
# bench/cpu-use.sh — who used the CPUs between two moments, for a bench that
# wants to know what else ran beside the work it times (bench/gpu-throughput.sh
# around its latency pass: on an H200 the same 16 children compiled 30 %
# slower after the A/A passes than before them, docs/gpu.md twentieth session).
#   bench/cpu-use.sh snap FILE           the machine's busy, stolen and total
#                                        ticks (/proc/stat) and every process's
#                                        pid, start, CPU ticks and name
#                                        (/proc/PID/stat)
#   bench/cpu-use.sh report BEFORE AFTER [N]
#                                        one line: CPUs busy on average between
#                                        the two snaps, CPUs' time the hypervisor
#                                        gave elsewhere (steal: on a virtual
#                                        machine, its neighbours), and the N (default 6)
#                                        processes alive in both that used the
#                                        most CPU meanwhile (seconds, at least
#                                        0.05), busiest first
# Exit 2 on a wrong call or a snap that cannot be read.
# env: KSCI_PROC (default /proc: another, for the tests)
set -uo pipefail
proc=${KSCI_PROC:-/proc}
usage() { sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; }
case ${1:-} in
-h | --help) usage; exit 0 ;;
snap)
	[ $# -eq 2 ] || { echo "cpu-use: snap takes one FILE" >&2; exit 2; }
	# A process may end between the glob and the read: cat goes on past it,
	# and its failure is not the snap's (under pipefail it was: "cannot
	# write", though the snap was whole).
	{ awk '/^cpu / { b = $2 + $3 + $4 + $7 + $8; print "all", b, $9, b + $5 + $6 + $9; exit }' "$proc/stat"
	  { cat "$proc"/[0-9]*/stat 2>/dev/null || :; } | awk '{
		l = $0; o = index(l, "("); c = 0
		for (i = length(l); i > 0; i--) if (substr(l, i, 1) == ")") { c = i; break }
		if (!o || !c) next
		name = substr(l, o + 1, c - o - 1); gsub(/[ \t]/, "_", name)
		n = split(substr(l, c + 2), f, " ")
		if (n >= 20) print $1, f[20], f[12] + f[13], name }'
	} >"$2" || { echo "cpu-use: cannot write $2" >&2; exit 2; }
	;;
report)
	if [ $# -lt 3 ] || [ $# -gt 4 ]; then echo "cpu-use: report takes BEFORE AFTER [N]" >&2; exit 2; fi
	for f in "$2" "$3"; do
		head -n 1 "$f" 2>/dev/null | grep -q '^all [0-9]* [0-9]* [0-9]*$' ||
			{ echo "cpu-use: $f is not a snap of bench/cpu-use.sh" >&2; exit 2; }
	done
	n=${4:-6}
	[[ $n =~ ^[0-9]+$ ]] || { echo "cpu-use: N: \"$n\" is not a whole number" >&2; exit 2; }
	awk -v hz="$(getconf CLK_TCK)" -v cpus="$(nproc)" -v n="$n" '
		FNR == 1 { if (NR == 1) { b0 = $2; s0 = $3; t0 = $4 } else { b1 = $2; s1 = $3; t1 = $4 }; next }
		NR == FNR { was[$1 " " $2] = $3; next }
		($1 " " $2) in was { d = $3 - was[$1 " " $2]; if (d > 0) { use[++k] = d; who[k] = $4 " (" $1 ")" } }
		END {
			busy = t1 > t0 ? (b1 - b0) / (t1 - t0) * cpus : 0
			stolen = t1 > t0 ? (s1 - s0) / (t1 - t0) * cpus : 0
			line = sprintf("CPUs busy on average %.2f of %d, stolen %.2f", busy, cpus, stolen)
			for (j = 1; j <= k; j++) for (i = j + 1; i <= k; i++) if (use[i] > use[j]) {
				x = use[i]; use[i] = use[j]; use[j] = x; x = who[i]; who[i] = who[j]; who[j] = x }
			s = ""
			for (j = 1; j <= k && j <= n; j++) if (use[j] / hz >= 0.05) s = s sprintf("%s%s %.2f s", s == "" ? "" : ", ", who[j], use[j] / hz)
			print line "; alive throughout, the most CPU: " (s == "" ? "none above 0.05 s" : s) }' "$2" "$3"
	;;
*) usage >&2; exit 2 ;;
esac
