#!/usr/bin/env bash
# t22-long-lived-judge: kverify and ktime keep one judge (kharness --serve,
# docs/harness.md) per back end for their whole run, fed one record after
# another through a stage directory.  Checks: one judge answers every
# record; a job that ends crashed or timed out ends its judge, the next
# record gets a fresh one; a judge killed from outside in the middle of a
# job loses no record (judge-killed-record-lost: the job is asked again on
# a fresh judge); killing kverify leaves no judge behind; the stage
# directory is gone after the run; a killed tool's stray judge is killed by
# the next tool (killed-tool-left-its-judge); ktime's second job takes over the
# first's baseline and seed processes, and times candidates beside the
# seed against anchors (--anchor-every); a job after one that ended well
# loads its candidate into the spare child the judge started meanwhile (a
# constructor that crashes or hangs there ends as in a child of its own);
# --fresh-judge is one judge per record.
. "$(dirname "$0")/lib.sh"
skip_without_bwrap
cd "$T" || exit 1
export TMPDIR=$T/tmp
mkdir -p "$TMPDIR"

gen() { jq -cn --rawfile s "$2" --arg i "$1" --arg tail "${3:-}" \
	'{id: $i, task: "rowsum", backend: "c", generation: 1, parents: [], source: ($s + $tail), status: "generated"}'; }
seed=$ROOT/data/tasks/rowsum/seed.c
sig=$(grep -m1 '^void solve' "$seed")
printf '%s\n{\n\t(void)x; (void)y; (void)rows; (void)cols;\n\tvolatile float *p = 0;\n\t*p = 1;\n}\n' "$sig" >segv.c
printf '%s\n{\n\t(void)x; (void)y; (void)rows; (void)cols;\n\tfor (volatile int i = 0;; i++) {}\n}\n' "$sig" >loop.c
# Correct, but each call waits until the file $T/go exists (the judge is
# killed meanwhile; seen only without the sandbox): no step of the test
# depends on how long anything takes.
printf '#include <unistd.h>\n' >slow.c
sed 's/^void solve(/static void solve_ok(/' "$seed" >>slow.c
printf '%s\n{\n\twhile (access("%s/go", F_OK) != 0) {}\n\tsolve_ok(x, y, rows, cols);\n}\n' "$sig" "$T" >>slow.c
{
	gen a "$seed" "// a"
	gen b "$seed" "// b"
	gen segv segv.c
	gen c "$seed" "// c"
	gen loop loop.c
	gen d "$seed" "// d"
} | kcompile >c.nd 2>c.err
expect_eq "kcompile: all six compiled" "compiled compiled compiled compiled compiled compiled" "$(jq -r .status c.nd | xargs)"

kverify --timeout 8 <c.nd >v.nd 2>v.err
expect_eq "kverify: exit 0" 0 $?
expect_eq "every record out, each with its outcome" "a:verified b:verified segv:crashed c:verified loop:timeout d:verified" \
	"$(jq -r '.id + ":" + .status' v.nd | xargs)"
expect_eq "one judge for a, b and segv, jobs 1 2 3" "1 1 1 2 1 3" \
	"$(jq -r 'select(.id == "a" or .id == "b" or .id == "segv") | "\(.verify.judge.started) \(.verify.judge.job)"' v.nd | xargs)"
expect_eq "after the crash a fresh judge (started 2, job 1), ended again by the hang; then a third" "2 1 2 2 3 1" \
	"$(jq -r 'select(.id == "c" or .id == "loop" or .id == "d") | "\(.verify.judge.started) \(.verify.judge.job)"' v.nd | xargs)"
expect_eq "the same judge pid for a, b and segv" 1 "$(jq -r 'select(.verify.judge.started == 1) | .verify.judge.pid' v.nd | sort -u | wc -l)"
ok "the crash is still the candidate's signal" jq -se '.[2].verify.message | test("signal 11")' v.nd
ok "each record's log is its own job's (no other job's end mark in it)" \
	jq -se 'all(.[]; (.verify.log // "") | test("KSCI-LOG-END") | not)' v.nd
left=$(find "$TMPDIR" -maxdepth 1 -name 'ksci-judge.*')
expect_eq "the stage directory is gone" "" "$left"
jq -c 'select(.status == "verified") | .id += "-again"' v.nd | head -n 1 >vv0.nd
# The spare (docs/harness.md): after a job that ended well the judge starts
# a candidate child without a library, and the next job loads its candidate
# into it; a judge's first job, and the first after a crash, start their own.
expect_eq "spare: each judge's first candidate child is fresh, the next ones the spare" \
	"a:fresh b:spare segv:spare c:fresh loop:spare d:fresh" "$(jq -r '.id + ":" + .verify.candidate_child' v.nd | xargs)"
# spare-runs-a-constructor-once: a candidate whose constructor crashes or
# hangs, loaded into a spare, ends as it would in a child of its own
# (crashed, the signal or "did not start in time"), and the next record gets
# a judge of its own, its verdict unchanged.
# (The null pointer comes from a volatile: a literal one is undefined
# behaviour gcc -O3 removes, and the constructor with it.)
printf 'static volatile long zero;\n__attribute__((constructor)) static void boom(void) { *(volatile int *)zero = 1; }\n' >ctor-segv.c
printf '__attribute__((constructor)) static void stall(void) { for (volatile int i = 0;; i++) {} }\n' >ctor-hang.c
{
	gen g1 "$seed" "// g1"
	gen csegv "$seed" "$(cat ctor-segv.c)"
	gen g2 "$seed" "// g2"
	gen g3 "$seed" "// g3"
	gen chang "$seed" "$(cat ctor-hang.c)"
	gen g4 "$seed" "// g4"
} | kcompile 2>/dev/null | kverify --timeout 8 >sp.nd 2>sp.err
expect_eq "spare: the constructors' records crashed, the others verified" \
	"g1:verified:fresh csegv:crashed:spare g2:verified:fresh g3:verified:spare chang:crashed:spare g4:verified:fresh" \
	"$(jq -r '[.id, .status, .verify.candidate_child] | join(":")' sp.nd | xargs)"
ok "spare: a crashing constructor is the candidate's signal" jq -se '.[1].verify.message | test("candidate killed by signal 11")' sp.nd
ok "spare: a hanging constructor did not start in time" jq -se '.[4].verify.message | test("candidate did not start in time")' sp.nd
# spare-died-candidate-crashed: a spare killed between two jobs is no fault
# of the next candidate, which gets a child of its own.
descendants() { # PID: every process below it
	local k
	for k in $(ps -o pid= --ppid "$1"); do echo "$k"; descendants "$k"; done
}
kids_of() { # PID WHAT: the processes below PID whose command line has WHAT, sorted, on one line
	local k
	for k in $(descendants "$1"); do
		case $(tr '\0' ' ' <"/proc/$k/cmdline" 2>/dev/null) in *"$2"*) echo "$k" ;; esac
	done | sort | xargs
}
mkfifo in.fifo
kverify <in.fifo >sd.nd 2>sd.err &
kv=$!
exec 7>in.fifo
jq -c 'select(.id == "a")' c.nd >&7
for _ in $(seq 600); do [ -s sd.nd ] && break; sleep 0.1; done # the first record out (at most 60 s)
# The judge starts its spare after the answer is out: wait for it (at most
# 60 s), then kill it.
spares=""
for _ in $(seq 600); do
	spares=$(kids_of "$kv" "--child candidate - ")
	[ "$(wc -w <<<"$spares")" -ge 1 ] && break
	sleep 0.1
done
expect_eq "spare: the judge started one after the first job" 1 "$(wc -w <<<"$spares")"
# shellcheck disable=SC2086 # a list of pids
kill -KILL $spares 2>/dev/null
jq -c 'select(.id == "b")' c.nd >&7
exec 7>&-
wait "$kv"
expect_eq "spare-died-candidate-crashed: the next candidate verified, in a child of its own" "a:verified:fresh b:verified:fresh" \
	"$(jq -r '[.id, .status, .verify.candidate_child] | join(":")' sd.nd | xargs)"

# --- the spare asked for under the GPU lock ------------------------------------
# (docs/harness.md "The spare"): on a GPU a job leaves its spare to the tool,
# which asks for it when it holds the GPU lock shared, so that no device
# context is made while a job (which holds it exclusively) runs: kverify's
# spare made its context while ktime timed the same candidate, and matmul's
# first size came out noisy on an H100 (spare-made-while-the-other-stage-timed).
# KSCI_JUDGE_SPARE=asked does on the c back end what a GPU does; the test
# holds the lock exclusively as another stage's job would.
export KSCI_GPU_LOCK_DIR=$T/locks
mkdir -p "$KSCI_GPU_LOCK_DIR"
# hold_lock: a process (in $holder) holds the lock exclusively, as another
# stage's job would, from its return until the file go2 exists; it keeps no
# copy of the feeding fifo (fd 7), whose end the tool must see.
hold_lock() {
	rm -f held go2
	( exec 7>&- 9>"$KSCI_GPU_LOCK_DIR/ksci-gpu-0.lock" && flock -x 9 && touch held && while [ ! -e go2 ]; do sleep 0.05; done ) &
	holder=$!
	for _ in $(seq 600); do [ -e held ] && break; sleep 0.1; done # at most 60 s
}
# A job holds the lock while the tool waits for its spare's exchange, which
# needs it shared: the two in one tool must not wait for each other
# (spare-asked-under-the-job's-own-lock: every GPU pipeline hung there).
KSCI_JUDGE_SPARE=asked timeout 120 kverify <c.nd >va.nd 2>va.err
expect_eq "spare asked: kverify exit 0 (no deadlock with its own lock)" 0 $?
expect_eq "spare asked: the same children as a spare started after the answer" \
	"a:fresh b:spare segv:spare c:fresh loop:spare d:fresh" "$(jq -r '.id + ":" + .verify.candidate_child' va.nd | xargs)"
mkfifo ina.fifo
KSCI_JUDGE_SPARE=asked timeout 120 kverify <ina.fifo >sa.nd 2>sa.err &
kv=$!
exec 7>ina.fifo
jq -c 'select(.id == "a")' c.nd >&7
for _ in $(seq 600); do [ -s sa.nd ] && break; sleep 0.1; done # the first record out (at most 60 s)
# Another stage's job holds the lock (the judge's spare, asked for 0.1 s
# after the answer, may have been made already: then the next one is).
hold_lock
before=$(kids_of "$kv" "--child candidate - ") # one made before the lock was held, or none
# a's candidate child, stopped since the answer, ends with the spare's exchange
kept=$(wc -w <<<"$(kids_of "$kv" "--child candidate /")")
expect_eq "the answered candidate's child ends under the lock, with the spare's exchange" "$([ -n "$before" ] && echo 0 || echo 1)" "$kept"
jq -c 'select(.id == "b")' c.nd >&7
jq -c 'select(.id == "c")' c.nd >&7
sleep 1 # a spare started without the lock would be there by now
during=$(kids_of "$kv" "--child candidate - ")
expect_eq "the records after the first wait for the lock" 1 "$(wc -l <sa.nd)"
touch go2
wait "$holder"
exec 7>&-
wait "$kv"
expect_eq "spare asked: kverify exit 0" 0 $?
expect_eq "spare-made-while-the-other-stage-timed: no spare started while another held the lock" "$before" "$during"
expect_eq "with the lock let go, the spare was made and served the next record" "a:verified:fresh b:verified c:verified:spare" \
	"$(jq -r '[.id, .status, (if .id == "b" then empty else .verify.candidate_child end)] | join(":")' sa.nd | xargs)"
# spare-kept-the-ending-tool-waiting: a tool whose input has ended does not
# wait for the lock to ask for a spare no job will use.
mkfifo inc.fifo
KSCI_JUDGE_SPARE=asked kverify <inc.fifo >sc.nd 2>sc.err &
kv=$!
exec 7>inc.fifo
jq -c 'select(.id == "a")' c.nd >&7
for _ in $(seq 600); do [ -s sc.nd ] && break; sleep 0.1; done # the record out (at most 60 s)
hold_lock
exec 7>&-
for _ in $(seq 600); do kill -0 "$kv" 2>/dev/null || break; sleep 0.1; done # at most 60 s
ok "spare-kept-the-ending-tool-waiting: kverify ended while another held the lock" sh -c "! kill -0 $kv 2>/dev/null"
touch go2
wait "$holder"
wait "$kv"
expect_eq "and its record is out, verified" "a:verified" "$(jq -r '.id + ":" + .status' sc.nd)"
unset KSCI_GPU_LOCK_DIR

# --- judge-killed-record-lost ------------------------------------------------
gen s1 slow.c "// 1" | kcompile >s.nd
kverify --unsafe-no-sandbox <s.nd >k.nd 2>k.err &
kv=$!
judge=""
for _ in $(seq 200); do # until the judge has started (at most 20 s)
	judge=$(pgrep -P "$kv" -f -- '--serve' | head -n1) # the judge, not a compiler kverify runs first
	[ -n "$judge" ] && break
	sleep 0.1
done
ok "the judge runs as kverify's child" test -n "$judge"
kill -KILL "$judge" 2>/dev/null # the job cannot have ended: no go yet
touch go
wait "$kv"
expect_eq "killed judge: kverify exit 0" 0 $?
expect_eq "killed judge: the record is verified on a fresh judge" "verified 2 1" \
	"$(jq -r '"\(.status) \(.verify.judge.started) \(.verify.judge.job)"' k.nd)"
ok "killed judge: said on stderr" grep -q "the judge (pid $judge) was killed; starting another for this record" k.err

# --- kverify killed: no judge left behind --------------------------------------
rm go
kverify <s.nd >/dev/null 2>&1 &
kv=$!
judge=""
for _ in $(seq 200); do
	judge=$(pgrep -P "$kv" -f -- '--serve' | head -n1) # the judge, not a compiler kverify runs first
	[ -n "$judge" ] && break
	sleep 0.1
done
kill -KILL "$kv"
wait "$kv" 2>/dev/null
gone=no
for _ in $(seq 100); do # the judge dies with its parent (at most 10 s)
	kill -0 "$judge" 2>/dev/null || { gone=yes; break; }
	sleep 0.1
done
expect_eq "kverify killed: its judge is gone" yes "$gone"

# --- killed-tool-left-its-judge ------------------------------------------------
# A tool killed just after it started a judge can leave the sandbox's inner
# bwrap (pid 1 of its PID namespace) waiting for ever for a uid map
# (bubblewrap issue 633): the next kverify or ktime kills a bwrap whose
# command line serves a stage directory of a tool that is gone, and leaves
# a live tool's alone.  Stand-ins: a program named bwrap that waits, with
# such a command line.
printf '#include <unistd.h>\nint main(void) { for (;;) pause(); }\n' | cc -x c -o bwrap -
sh -c 'exit 0' &
gone=$!
wait "$gone"
./bwrap --ro-bind "$TMPDIR/ksci-judge.$gone.AbCdEf" "$TMPDIR/ksci-judge.$gone.AbCdEf" -- kharness --serve &
stray=$!
./bwrap --ro-bind "$TMPDIR/ksci-judge.$$.AbCdEf" "$TMPDIR/ksci-judge.$$.AbCdEf" -- kharness --serve &
live=$!
kverify --force <vv0.nd >/dev/null 2>&1
state() { # running, or gone (killed: reaped, or a zombie not yet)
	case $(ps -o stat= -p "$1" 2>/dev/null | cut -c1) in "" | Z) echo gone ;; *) echo running ;; esac
}
expect_eq "killed-tool-left-its-judge: the gone tool's judge is killed, the live one's left" "gone running" \
	"$(state "$stray") $(state "$live")"
kill -KILL "$stray" "$live" 2>/dev/null
wait "$stray" "$live" 2>/dev/null

# --- ktime on the same judge, --fresh-judge ---------------------------------------
jq -c 'select(.status == "verified")' v.nd | head -n 2 >vv.nd
ktime --budget 0.05 --min-runs 2 <vv.nd >t.nd 2>t.err
expect_eq "ktime: both timed" "timed timed" "$(jq -r .status t.nd | xargs)"
expect_eq "ktime: one judge, jobs 1 and 2" "1 1 1 2" "$(jq -r '"\(.time.judge.started) \(.time.judge.job)"' t.nd | xargs)"
expect_eq "ktime: the second candidate loaded into the spare" "fresh spare" "$(jq -r .time.candidate_child t.nd | xargs)"
ok "ktime: the second job took over the first's baseline and seed processes" \
	jq -se '.[1].time.log | test("baseline; seed kept from an earlier job")' t.nd
expect_eq "ktime's default on the c back end: no anchors (baseline and seed with every candidate)" "null null" \
	"$(jq -r '.time.sizes[0].anchor' t.nd | xargs)"

# --- anchors: baseline and seed timed once per N candidates ------------------
# (the third and fourth are copies of the first two: timed in full, not
# confirmed, t24-timed-before)
for i in 1 2 3 4; do jq -c --arg i "$i" '.id += $i' vv.nd; done | head -n 4 >v4.nd
ktime --budget 0.05 --min-runs 2 --anchor-every 2 --retime full <v4.nd >a.nd 2>a.err
expect_eq "anchors: all four timed" "timed timed timed timed" "$(jq -r .status a.nd | xargs)"
expect_eq "anchors: measured, used twice, measured again (every size)" "false true true false" \
	"$(jq -r '[.time.sizes[].anchor.cached] | unique | if length == 1 then .[0] else "mixed" end' a.nd | xargs)"
expect_eq "anchors: why each was measured" "none yet|used" \
	"$(jq -r 'select(.time.sizes[0].anchor.cached == false) | .time.sizes[0].anchor.why' a.nd | paste -sd '|')"
# shellcheck disable=SC2016 # jq's variables
ok "anchors: a cached record's baseline is its anchor's, to the bit" \
	jq -se '.[0].time.sizes[0] as $a | .[1].time.sizes[0] as $b | .[2].time.sizes[0] as $c |
		$a.baseline == $b.baseline and $a.baseline == $c.baseline and $b.anchor.measured_in_job == 1' a.nd
# shellcheck disable=SC2016 # jq's variables
ok "anchors: the seed is timed beside the candidate, the baseline carried over by the seed's drift" \
	jq -se '.[0].time.sizes[0] as $a | .[1].time.sizes[0] |
		(.speedup_vs_seed - .seed.median_us / .candidate.median_us | fabs) < 1e-9 and
		(.anchor.seed_drift - .seed.median_us / $a.seed.median_us | fabs) < 1e-9 and
		(.speedup_vs_baseline - .baseline.median_us * .anchor.seed_drift / .candidate.median_us | fabs) < 1e-9' a.nd
ok "anchors: the logs say what ran" \
	jq -se '.[1].time.log | test("the candidate and the seed, against the anchor of job 1")' a.nd
ktime --budget 0.05 --min-runs 2 --anchor-every 0 <vv.nd >a0.nd 2>/dev/null
expect_eq "--anchor-every 0: baseline and seed with every candidate" "null null" \
	"$(jq -r '.time.sizes[0].anchor' a0.nd | xargs)"
kverify --force --fresh-judge <vv.nd >f.nd 2>f.err
expect_eq "--fresh-judge: a judge per record" "fresh fresh" "$(jq -r .verify.judge.kind f.nd | xargs)"
expect_eq "--fresh-judge: the same verdicts" "verified verified" "$(jq -r .status f.nd | xargs)"
# killed-tool-left-its-stage-directory: a ktime killed with SIGKILL leaves
# its judge's stage directory ($TMPDIR/ksci-judge.PID.*); the next kverify
# or ktime removes it (its PID is gone), and leaves a live tool's alone.
mkdir -p "$T/tmpd"
TMPDIR=$T/tmpd ktime --budget 5 --min-runs 1000 <vv.nd >/dev/null 2>&1 &
kp=$!
for _ in $(seq 1 600); do
	compgen -G "$T/tmpd/ksci-judge.$kp.*" >/dev/null && break
	sleep 0.1
done
{ kill -KILL "$kp"; wait "$kp"; } 2>/dev/null
ok "a killed ktime left its stage directory" compgen -G "$T/tmpd/ksci-judge.$kp.*"
mkdir "$T/tmpd/ksci-judge.1.keep" # pid 1 is alive: not ours to remove
TMPDIR=$T/tmpd ktime --budget 0.05 --min-runs 2 <vv.nd >/dev/null 2>&1
not_ok_is "the next ktime removed it" compgen -G "$T/tmpd/ksci-judge.$kp.*"
ok "a live pid's directory stays" test -d "$T/tmpd/ksci-judge.1.keep"
expect_eq "and the next ktime removed its own at exit" "ksci-judge.1.keep" "$(ls "$T/tmpd")"
done_testing
