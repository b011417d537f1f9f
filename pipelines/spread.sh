#!/usr/bin/env bash
# spread.sh — run compile/verify/time on a file of records spread over job
# slots and hosts with GNU parallel, resumably.
#
# The records travel on the jobs' stdin (`parallel --pipe -N CHUNK`), so a
# worker needs nothing but the ksci tools and stages.sh: no shared file
# system, no rsync. Job k is always the input's k-th chunk of CHUNK records
# (the input is copied into the work directory and never changes), its
# output is kept in WORK/out/k (`--results`), and WORK/joblog says which jobs
# finished. Re-running with the same work directory therefore continues:
# `--resume-failed` skips every job the joblog shows done and runs the rest;
# a job that died with its host is retried on another host (`--retries`).
# When every job is done the chunks are checked (every input id comes back
# exactly once) and concatenated in input order: the output is whole or
# absent, never partial.
set -euo pipefail

usage() {
	cat <<'USAGE'
usage: spread.sh [options] --work DIR INPUT
  Run stages.sh (kcompile | kverify | ktime) on INPUT's records with GNU parallel and
  write all results, in input order, to --out FILE (default: stdout) once every job is
  done. Re-running with the same --work DIR redoes nothing that finished.
  --work DIR           state: input copy, joblog, per-job results (required)
  --out FILE           write the results here (atomically) instead of stdout
  --chunk N            records per job (default: the records over twice the job
                       slots, 1 to 64: about two jobs a slot; a re-run keeps the
                       work directory's)
  --jobs N             job slots per host (default: --gpus when given, else 1; on the
                       c back end more than one per host disturbs timings)
  --gpus G             each host has G GPUs: one slot per GPU, each job bound to one
  -S, --sshlogin L     run jobs on this host (parallel's --sshlogin; repeatable;
                       e.g. "4/ssh -p 2201 user@gpu1"; ":" is this machine)
  --sshloginfile F     hosts from a file (parallel's --sshloginfile; repeatable)
  --retries N          tries per job, each on another host where possible (default: 3)
  --bar                progress on stderr ("N of M jobs done", from the joblog; parallel's
                       --bar cannot be combined with --pipe)
  --env VAR            pass this environment variable to the jobs (repeatable)
  --stages-cmd CMD     stages.sh on the workers (default: this directory's stages.sh
                       without ssh logins, else "stages.sh" on the remote PATH)
  --srun               run each job as `srun --exclusive -N1 -n1 ...` (inside a Slurm
                       allocation; --jobs defaults to $SLURM_NTASKS)
  --srun-opt OPT       extra option for srun (repeatable), e.g. --gres=gpu:1
  --stages LIST, --force, --budget SEC, --kcompile-opt OPT, --kverify-opt OPT,
  --ktime-opt OPT      passed to stages.sh
  -h, --help           this text
Exit status: 0 all records done; 1 done, but a tool reported bad input; 2 usage;
3 some jobs failed after their retries, or a fatal error (the work directory is kept:
re-run the same command to continue).
USAGE
}

die() { echo "spread.sh: $*" >&2; exit 3; }
uerr() { echo "spread.sh: $*" >&2; usage >&2; exit 2; }

work="" out="" chunk="" jobs="" gpus=0 retries=3 bar=0 stages_cmd="" srun=0 input=""
logins=() loginfiles=() envs=() srun_opts=() stage_opts=()
while [ $# -gt 0 ]; do
	case $1 in
	--work) work=$2; shift ;;
	--out) out=$2; shift ;;
	--chunk) chunk=$2; shift ;;
	--jobs) jobs=$2; shift ;;
	--gpus) gpus=$2; shift ;;
	-S | --sshlogin) logins+=("$2"); shift ;;
	--sshloginfile) loginfiles+=("$2"); shift ;;
	--retries) retries=$2; shift ;;
	--bar) bar=1 ;;
	--env) envs+=("$2"); shift ;;
	--stages-cmd) stages_cmd=$2; shift ;;
	--srun) srun=1 ;;
	--srun-opt) srun_opts+=("$2"); shift ;;
	--force) stage_opts+=("$1") ;;
	--stages)
		case ",$2," in
		*,,* | *[!a-z,]*) uerr "--stages: '$2' is not a list of compile, verify, time" ;;
		esac
		for s in ${2//,/ }; do
			case $s in compile | verify | time) ;; *) uerr "--stages: unknown stage '$s'" ;; esac
		done
		stage_opts+=("$1" "$2"); shift ;;
	--budget | --kcompile-opt | --kverify-opt | --ktime-opt) stage_opts+=("$1" "$2"); shift ;;
	-h | --help) usage; exit 0 ;;
	-*) uerr "unknown option $1" ;;
	*) [ -z "$input" ] || uerr "one INPUT only"; input=$1 ;;
	esac
	shift
done
[ -n "$work" ] || uerr "--work DIR is required"
[ -n "$input" ] || uerr "INPUT is required"
if [ -z "$jobs" ]; then
	if [ "$srun" = 1 ] && [ -n "${SLURM_NTASKS:-}" ]; then jobs=$SLURM_NTASKS
	elif [ "$gpus" -ge 1 ] 2>/dev/null; then jobs=$gpus
	else jobs=1; fi
fi
for n in "${chunk:-1}" "$jobs" "$gpus" "$retries"; do
	case $n in '' | *[!0-9]*) uerr "'$n' is not a non-negative integer" ;; esac
done
if [ "${chunk:-1}" -lt 1 ] || [ "$jobs" -lt 1 ] || [ "$retries" -lt 1 ]; then
	uerr "--chunk, --jobs and --retries must be at least 1"
fi
command -v parallel >/dev/null || die "GNU parallel not found (apt-get install parallel)"
command -v jq >/dev/null || die "jq not found"
[ -r "$input" ] || die "cannot read $input"

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ -z "$stages_cmd" ]; then
	if [ "${#logins[@]}" = 0 ] && [ "${#loginfiles[@]}" = 0 ]; then stages_cmd=$here/stages.sh; else stages_cmd=stages.sh; fi
fi

mkdir -p "$work/out"
exec 9>>"$work/lock"
# Jobs of a run that was killed (parallel puts each job in its own process
# group, so they can outlive it) still hold the lock: wait for them.
if ! flock -n 9; then
	echo "spread.sh: $work is in use (another run, or jobs of a killed one); waiting" >&2
	flock 9
fi

# The default chunk. A job is one kcompile | kverify | ktime whose judges
# start, and time the baseline and the seed again, before its first record
# (docs/cluster.md): one record a job pays that for every record. About two
# jobs a slot keep it to twice a slot and still even out uneven jobs. Slots:
# "N/host" logins count N, other hosts --jobs each, no logins this machine's
# --jobs. At most 64 a job, so that a failed job retried whole redoes at most
# that many (the start costs about four candidates' time on a GPU: 6 % of
# 64). A work directory keeps the chunk it was started with.
if [ -z "$chunk" ]; then
	if [ -e "$work/input.ndjson" ] && [ -e "$work/params" ]; then
		chunk=$(sed -n 's/^chunk=\([0-9][0-9]*\)$/\1/p' "$work/params")
	fi
	if [ -z "$chunk" ]; then
		slots=$({
			printf '%s\n' "${logins[@]}"
			[ "${#loginfiles[@]}" = 0 ] || cat "${loginfiles[@]}" 2>/dev/null || true # a missing file is parallel's to refuse
		} | awk -v j="$jobs" '/^[[:space:]]*(#|$)/ { next } { n++; s += match($0, /^[0-9]+\//) ? substr($0, 1, RLENGTH - 1) : j }
			END { print n ? s : j }')
		[ "$slots" -ge 1 ] 2>/dev/null || slots=1
		nrec=$(wc -l <"$input")
		chunk=$(((nrec + 2 * slots - 1) / (2 * slots)))
		[ "$chunk" -ge 1 ] || chunk=1
		[ "$chunk" -le 64 ] || chunk=64
	fi
fi

# The input is fixed for the life of the work directory: job k must mean the
# same records on every run, or --resume would skip the wrong ones.
params="chunk=$chunk"
if [ -e "$work/input.ndjson" ]; then
	cmp -s "$input" "$work/input.ndjson" ||
		die "$work holds another input; remove it or choose another --work"
	[ "$(cat "$work/params" 2>/dev/null)" = "$params" ] ||
		die "$work was started with $(cat "$work/params" 2>/dev/null); use the same --chunk"
else
	cp "$input" "$work/input.tmp"
	echo "$params" >"$work/params"
	mv "$work/input.tmp" "$work/input.ndjson"
fi
nrec=$(wc -l <"$work/input.ndjson")
njobs=$(((nrec + chunk - 1) / chunk))

# Seqs of jobs the joblog shows done (exit 0, no signal), one per line.
done_seqs() {
	[ -s "$work/joblog" ] || return 0
	awk -F '\t' 'NR > 1 && NF >= 9 && $7 == "0" && $8 == "0" { print $1 }' "$work/joblog" | sort -un
}

# A job that did not finish may have left part of its output, and parallel
# counts an existing results file as a done job: drop those before resuming.
declare -A finished=()
while read -r s; do finished[$s]=1; done < <(done_seqs)
for f in "$work"/out/*; do
	[ -e "$f" ] || continue
	s=${f##*/}
	s=${s%%.*}
	[ -n "${finished[$s]:-}" ] || rm -f "$f"
done

if [ "${#finished[@]}" -lt "$njobs" ]; then
	par=(parallel --pipe -N "$chunk" --block 16M --jobs "$jobs" --retries "$retries"
		--joblog "$work/joblog" --resume-failed --results "$work/out/{#}" --halt never)
	for l in "${logins[@]}"; do par+=(--sshlogin "$l"); done
	for l in "${loginfiles[@]}"; do par+=(--sshloginfile "$l"); done
	for e in "${envs[@]}"; do par+=(--env "$e"); done
	cmd=()
	[ "$srun" = 1 ] && cmd+=(srun --exclusive -N1 -n1 "${srun_opts[@]}")
	cmd+=("$stages_cmd" --slot '{%}' --gpus "$gpus" "${stage_opts[@]}")
	# parallel's own --bar cannot be combined with --pipe: count the joblog.
	barpid=""
	if [ "$bar" = 1 ]; then
		(
			while kill -0 "$$" 2>/dev/null; do
				printf '\rspread.sh: %d of %d jobs done ' "$(done_seqs | wc -l)" "$njobs" >&2
				sleep 1
			done
		) 9>&- &
		barpid=$!
	fi
	set +e
	# parallel and local jobs inherit the lock (fd 9): the work directory
	# stays in use until the last of them is gone, even if this script is not.
	"${par[@]}" -q "${cmd[@]}" <"$work/input.ndjson"
	prc=$?
	set -e
	if [ -n "$barpid" ]; then
		kill "$barpid" 2>/dev/null || :
		wait "$barpid" 2>/dev/null || :
		printf '\rspread.sh: %d of %d jobs done\n' "$(done_seqs | wc -l)" "$njobs" >&2
	fi
	[ "$prc" -le 100 ] || die "parallel failed (exit $prc)"
fi

missing=()
declare -A finished=()
while read -r s; do finished[$s]=1; done < <(done_seqs)
for k in $(seq 1 "$njobs"); do
	[ -n "${finished[$k]:-}" ] && [ -e "$work/out/$k" ] || missing+=("$k")
done
if [ "${#missing[@]}" -gt 0 ]; then
	echo "spread.sh: ${#missing[@]} of $njobs jobs not done (first: job ${missing[0]}; see $work/joblog" \
		"and $work/out/${missing[0]}.err); re-run to continue" >&2
	exit 3
fi

# Every id that went out must come back exactly once.
tmp=$work/merge.tmp
: >"$tmp"
for k in $(seq 1 "$njobs"); do cat "$work/out/$k" >>"$tmp"; done
ids() { jq -R -r 'fromjson? | .id // empty' "$1" | sort; }
if [ "$(ids "$work/input.ndjson")" != "$(ids "$tmp")" ]; then
	die "the results' ids differ from the input's (see $work/out); nothing written"
fi
status=0
if cat "$work"/out/*.err 2>/dev/null | grep -q '^stages.sh: bad input'; then status=1; fi
nback=$(wc -l <"$tmp")
if [ "$status" = 0 ] && [ "$nback" != "$nrec" ]; then
	die "$nback records came back for $nrec sent; nothing written"
fi
if [ -n "$out" ]; then
	mv "$tmp" "$out"
else
	cat "$tmp"
	rm -f "$tmp"
fi
exit "$status"
