#!/usr/bin/env bash
# bench/compile-sandbox.sh — what the sandbox costs a compile.  kcompile
# --no-cache on TASK's seed and N kgen mutate children of it (seed 7, the
# sources bench/compile-probe.sh compiles), each source in each arm every
# round, the arms' order turned by one each round:
#   none     --unsafe-no-sandbox
#   full     bubblewrap as kcompile runs it
#   nouser   bubblewrap without its namespaces (--unshare-all,
#            --unshare-user, --uid, --gid dropped)
#   hosttmp  bubblewrap with a directory of the host at /tmp instead of its
#            tmpfs
# (nouser and hosttmp through a wrapper, given as KSCI_BWRAP, that drops
# those options).  Printed per arm: the median, min and max of the records'
# compile.compiler_seconds over sources and rounds; per arm but none, its
# ratio to none within a round and source, median, how often it was slower
# and a one-sided sign test.  Every record's seconds go to
# $OUT/compile-sandbox/TASK.tsv (round, arm, source, seconds, sandbox).
#   usage: bench/compile-sandbox.sh [-r ROUNDS] [-n N] TASK   (default 8 rounds, N 1)
#   env: KSCIBIN (default build/gpu/bin), KSCI_BWRAP (the bwrap wrapped; default bwrap on PATH)
set -uo pipefail
rounds=8 n=1
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) sed -n '2,/^\([^#]\|$\)/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
	-r) rounds=${2:-}; shift ;;
	-n) n=${2:-}; shift ;;
	-*) echo "compile-sandbox: unknown option: $1" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "compile-sandbox: -r: \"$rounds\" is not a whole number above 0" >&2; exit 2; }
[[ $n =~ ^[0-9]+$ ]] || { echo "compile-sandbox: -n: \"$n\" is not a whole number" >&2; exit 2; }
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_one_task compile-sandbox "$@"
real=${KSCI_BWRAP:-$(command -v bwrap)} || { echo "compile-sandbox: no bwrap (KSCI_BWRAP)" >&2; exit 2; }
mkdir -p "$tmp/hosttmp"
cat >"$tmp/bw" <<SH
#!/usr/bin/env bash
# kcompile's bwrap, with options dropped by \$BW_ARM
a=()
while [ \$# -gt 0 ]; do
	case "\$BW_ARM:\$1" in
	nouser:--unshare-all | nouser:--unshare-user) ;;
	nouser:--uid | nouser:--gid | hosttmp:--size) shift ;;
	hosttmp:--tmpfs) if [ "\$2" = /tmp ]; then a+=(--bind "$tmp/hosttmp" /tmp); shift; else a+=("\$1"); fi ;;
	*) a+=("\$1") ;;
	esac
	shift
done
exec "$real" "\${a[@]}"
SH
chmod 755 "$tmp/bw"
export KSCI_BWRAP=$tmp/bw
bench_sources "$task" "$n" "$KSCIBIN" >"$tmp/src.nd"
BW_ARM=full kcompile -j 1 <"$tmp/src.nd" >/dev/null 2>&1 # the prefix made, as in a search
arms=(none full nouser hosttmp)
tsv=$out/$task.tsv
: >"$tsv"
for r in $(seq "$rounds"); do
	for k in 0 1 2 3; do
		a=${arms[$(((k + r) % 4))]} o=()
		[ "$a" = none ] && o=(--unsafe-no-sandbox)
		s=0
		while IFS= read -r l; do
			s=$((s + 1))
			printf '%s\n' "$l" | BW_ARM=$a kcompile -j 1 --no-cache "${o[@]}" 2>>"$out/$task.err" |
				jq -r --arg r "$r" --arg a "$a" --arg s "$s" \
					'[$r, $a, $s, (if .status == "compiled" then .compile.compiler_seconds else "failed" end), .compile.sandbox] | @tsv' >>"$tsv"
		done <"$tmp/src.nd"
	done
done
failed=$(awk -F'\t' '$4 == "failed"' "$tsv" | wc -l)
echo "$task: $(wc -l <"$tmp/src.nd") sources (the seed and $n kgen children), $rounds rounds; $failed compiles failed; $(nvcc --version 2>/dev/null | tail -n 1)"
for a in "${arms[@]}"; do
	printf '%-8s compiler seconds median/min/max %s\n' "$a" "$(awk -F'\t' -v a="$a" '$2 == a && $4 != "failed" { print $4 }' "$tsv" | med_min_max 3)"
done
awk -F'\t' "$AWK_MED$AWK_SIGN_P"'
$4 != "failed" { t[$1, $2, $3] = $4; if ($1 > R) R = $1; if ($3 > S) S = $3 }
END { split("full nouser hosttmp", arms, " ")
	for (i = 1; i <= 3; i++) { s = ""; b = 0; m = 0
		for (r = 1; r <= R; r++) for (k = 1; k <= S; k++) if ((r, arms[i], k) in t && (r, "none", k) in t) {
			x = t[r, arms[i], k] / t[r, "none", k]; s = s " " x; b += x > 1; m++ }
		printf "%s/none: median ratio %.3f, slower in %d of %d (one-sided sign test p %.3f)\n", arms[i], med(s), b, m, sign_p(b, m) } }' "$tsv"
[ "$failed" = 0 ]
