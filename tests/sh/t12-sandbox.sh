#!/usr/bin/env bash
# The sandbox kverify and ktime run candidates in (lib/sandbox.h), tried as a
# hostile kernel would: each candidate below is a correct rowsum that, on its
# first call, attacks the machine — reads the caller's secrets from its
# environment and files, writes outside its sandbox, talks to a Unix socket,
# leaves a setsid process behind, kills its parent tool. Every attack must be
# contained (its side effect checked from outside), every record must come
# out, and the record says which sandbox judged it. The compiler is tried the
# same way (#include of secrets and of /dev/zero, a 300 MB artifact). The same leak run with
# --unsafe-no-sandbox shows the checks can see an attack that works.
. "$(dirname "$0")/lib.sh"

skip_without_bwrap

# A private copy of the tasks: if the sandbox failed, the damage stays here.
mkdir -p "$T/tasks" "$T/outside"
cp -r "$ROOT/data/tasks/rowsum" "$T/tasks/"
export KSCI_TASKS=$T/tasks
ref_sum=$(sha256sum <"$T/tasks/rowsum/reference.c")
printf 'TOPSECRET-%s\n' "$$" >"$T/secret.txt"
chmod 600 "$T/secret.txt"
export OPENAI_API_KEY="sk-test-LEAKME-$$"
surv=ksv$(printf '%08x' "$$$RANDOM" | tail -c 8)

# cand NAME 'C code of attack()': a correct rowsum that runs attack() once.
cand() {
	cat >"$T/$1.c" <<C
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
static void attack(void)
{
$2
}
void solve(const float* x, float* y, int rows, int cols)
{
	static int done;
	if (!done) {
		done = 1;
		attack();
	}
	for (int r = 0; r < rows; r++) {
		double s = 0;
		for (int c = 0; c < cols; c++)
			s += x[(long)r * cols + c];
		y[r] = (float)s;
	}
}
C
	jq -cn --arg n "$1" --rawfile s "$T/$1.c" \
		'{task: "rowsum", backend: "c", generation: 1, parents: [], source: $s, status: "generated", name: $n}'
}

{
	cand envleak 'const char *k = getenv("OPENAI_API_KEY"); fprintf(stderr, "ATTACK env key=%s\n", k ? k : "(none)");'
	cand secret '
	char b[256] = "";
	FILE *f = fopen("'"$T"'/secret.txt", "r");
	if (f) { if (!fgets(b, sizeof b, f)) b[0] = 0; fclose(f); }
	fprintf(stderr, "ATTACK secret %s: %s\n", f ? "read" : "not readable", b);
	f = fopen("/etc/shadow", "r");
	if (f) { if (!fgets(b, sizeof b, f)) b[0] = 0; fclose(f); fprintf(stderr, "ATTACK shadow: %s\n", b); }
	else fprintf(stderr, "ATTACK shadow not readable\n");'
	cand escape '
	FILE *f = fopen("'"$T"'/outside/pwned", "w");
	if (f) { fputs("pwned\n", f); fclose(f); }
	FILE *g = fopen("'"$T"'/tasks/rowsum/reference.c", "a");
	if (g) { fputs("/* pwned */\n", g); fclose(g); }
	fprintf(stderr, "ATTACK escape: outside %s, reference %s\n", f ? "written" : "refused", g ? "written" : "refused");'
	cand socket '
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof a.sun_path, "%s", "'"$T"'/sock");
	int c = connect(s, (struct sockaddr *)&a, sizeof a);
	if (c == 0) { ssize_t w = write(s, "pwned\n", 6); (void)w; }
	close(s);
	fprintf(stderr, "ATTACK socket %s\n", c == 0 ? "connected" : "refused");'
	cand survivor '
	if (fork() == 0) {
		setsid();
		prctl(PR_SET_NAME, "'"$surv"'");
		sleep(30);
		_exit(0);
	}
	fprintf(stderr, "ATTACK survivor started\n");'
	cand killparent 'fprintf(stderr, "ATTACK kill parent %d\n", (int)getppid()); kill(getppid(), SIGKILL);'
} >"$T/in.ndjson"

# A Unix socket on the host; anything that connects is written to sock.log.
python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(4)
while True:  # until the test ends and kills it
    c, _ = s.accept(); open(sys.argv[2], "a").write(c.recv(64).decode()); c.close()
' "$T/sock" "$T/sock.log" &
listener=$!
trap 'kill "$listener" 2>/dev/null; rm -rf "$T"' EXIT
for _ in $(seq 100); do [ -S "$T/sock" ] && break; sleep 0.05; done

kcompile <"$T/in.ndjson" >"$T/c.ndjson" 2>"$T/c.err"
expect_eq "every attacking candidate compiles" "compiled compiled compiled compiled compiled compiled" \
	"$(jq -r .status "$T/c.ndjson" | xargs)"
kverify --timeout 20 <"$T/c.ndjson" >"$T/v.ndjson" 2>"$T/v.err"
expect_eq "kverify exits 0" 0 $?
expect_eq "every record comes out, verified (the kernels are correct), judged in bubblewrap" \
	"envleak verified bubblewrap,secret verified bubblewrap,escape verified bubblewrap,socket verified bubblewrap,survivor verified bubblewrap,killparent verified bubblewrap" \
	"$(jq -r '"\(.name) \(.status) \(.verify.sandbox)"' "$T/v.ndjson" | paste -sd, -)"
log() { jq -r --arg n "$1" 'select(.name == $n) | .verify.log' "$T/v.ndjson"; }
ok "the attacks ran (each left its line in the log)" test "$(grep -c 'ATTACK' "$T/v.ndjson")" -ge 6
ok "env leak: the candidate saw no key" sh -c "grep -q 'ATTACK env key=(none)' <<EOF
$(log envleak)
EOF"
not_ok_is "env leak: the key is nowhere in the records" grep -q "LEAKME" "$T/v.ndjson"
not_ok_is "secret file: its contents are nowhere in the records" grep -q "TOPSECRET" "$T/v.ndjson"
not_ok_is "/etc/shadow: no line of it in the records" grep -q "root:" "$T/v.ndjson"
ok "write outside: refused" test ! -e "$T/outside/pwned"
expect_eq "write outside: the task's reference is unchanged" "$ref_sum" "$(sha256sum <"$T/tasks/rowsum/reference.c")"
ok "Unix socket: refused (the candidate says so)" sh -c "grep -q 'ATTACK socket refused' <<EOF
$(log socket)
EOF"
ok "Unix socket: nothing reached the listener" test ! -s "$T/sock.log"
ok "setsid survivor: nothing left running" sh -c "! pgrep -x '$surv'"
ok "kill parent: kverify lived (every record out, exit 0 above)" test "$(wc -l <"$T/v.ndjson")" = 6

# ktime runs the same sandbox.
jq -c 'select(.name == "envleak")' "$T/v.ndjson" |
	ktime --budget 0.01 --min-runs 2 --max-runs 3 >"$T/t.ndjson" 2>"$T/t.err"
expect_eq "ktime: timed in bubblewrap, no key in the record" "timed bubblewrap 0" \
	"$(jq -r '"\(.status) \(.time.sandbox)"' "$T/t.ndjson") $(grep -c LEAKME "$T/t.ndjson")"

# The checks above can fail: without the sandbox the same kernel leaks.
jq -c 'select(.name == "envleak")' "$T/c.ndjson" | kverify --unsafe-no-sandbox >"$T/u.ndjson" 2>/dev/null
expect_eq "--unsafe-no-sandbox: judged by none, and the key leaks into the record" "none 1" \
	"$(jq -r .verify.sandbox "$T/u.ndjson") $(grep -c LEAKME "$T/u.ndjson")"

# The compiler runs in the sandbox too: it cannot quote the caller's files
# into compile.log, and what it may take is bounded.
src() { # NAME 'first line': a rowsum that compiles but for its first line
	printf '%s\nvoid solve(const float* x, float* y, int rows, int cols) { (void)x; (void)y; (void)rows; (void)cols; }\n' "$2" >"$T/$1.c"
	jq -cn --arg n "$1" --rawfile s "$T/$1.c" \
		'{task: "rowsum", backend: "c", generation: 1, parents: [], source: $s, status: "generated", name: $n}'
}
{
	src inc-shadow '#include "/etc/shadow"'
	src inc-secret '#include "'"$T"'/secret.txt"'
	src inc-zero '#include "/dev/zero"'
	src big-artifact 'static char big[300 << 20] = {1}; char *ksci_big(void) { return big; }'
} >"$T/cin.ndjson"
kcompile <"$T/cin.ndjson" >"$T/cout.ndjson" 2>/dev/null
expect_eq "compile attacks: each is a compile_error, compiled in bubblewrap" \
	"inc-shadow compile_error bubblewrap,inc-secret compile_error bubblewrap,inc-zero compile_error bubblewrap,big-artifact compile_error bubblewrap" \
	"$(jq -r '"\(.name) \(.status) \(.compile.sandbox)"' "$T/cout.ndjson" | paste -sd, -)"
not_ok_is "#include of /etc/shadow or a caller's file: nothing of either in the records" \
	grep -qE 'root:|TOPSECRET' "$T/cout.ndjson"
ok "#include of /dev/zero: stopped by the 4 GiB address-space bound, in under 100 s" \
	jq -s -e 'map(select(.name == "inc-zero"))[0] | (.compile.log | test("out of memory")) and .compile.seconds < 100' "$T/cout.ndjson"
ok "300 MB initialised array: stopped by the file-size bound, nothing big in the cache" \
	sh -c "[ -z \"\$(find '$KSCI_CACHE' -size +100M)\" ]"
jq -c 'select(.name == "inc-secret") | .status = "generated" | del(.compile)' "$T/cout.ndjson" |
	kcompile --unsafe-no-sandbox --no-cache >"$T/cu.ndjson" 2>/dev/null
expect_eq "--unsafe-no-sandbox: the compiler quotes the caller's file (so the check above can fail)" "none 1" \
	"$(jq -r .compile.sandbox "$T/cu.ndjson") $(grep -c TOPSECRET "$T/cu.ndjson")"

# No bubblewrap: refuse, say why and what to pass, write nothing.
KSCI_BWRAP=/nonexistent/bwrap kverify <"$T/c.ndjson" >"$T/r.out" 2>"$T/r.err"
expect_eq "no bubblewrap: kverify refuses (exit 3)" 3 $?
KSCI_BWRAP=/nonexistent/bwrap kcompile <"$T/in.ndjson" >"$T/rc.out" 2>"$T/rc.err"
expect_eq "no bubblewrap: kcompile refuses too (exit 3), writing nothing" "3 0" "$? $(wc -c <"$T/rc.out")"
ok "no bubblewrap: the message names the way out" grep -q -- "--unsafe-no-sandbox" "$T/r.err"
ok "no bubblewrap: nothing written" test ! -s "$T/r.out"
done_testing
