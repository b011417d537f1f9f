#!/usr/bin/env bash
# Bug (kgen-any-task-name): kgen's mutate generator took any task name
# ("../../etc", a name with a newline, 5,000 characters) and any back end and
# exited 0.  Now a request whose task is not a plain name (letters, digits, _
# and -, at most 64) or whose back end is unknown is written on as invalid
# with an error, exit 1, and its message is one line.
. "$(dirname "$0")/lib.sh"

kselect --task matmul --backend c -n 1 /dev/null >"$T/seed.req" 2>/dev/null
# req TASK BACKEND: a mutate request (base with a source) for TASK and BACKEND.
req() { jq -c --arg t "$1" --arg b "$2" '.task = $t | .backend = $b | .generation = 1 | .base = {"source": "int x;"}' "$T/seed.req"; }
long=$(printf 'x%.0s' $(seq 5000))
i=0
for t in '../../etc' $'a\nb' "$long" '' 'a b' "$(printf 'y%.0s' $(seq 65))"; do
	i=$((i + 1))
	req "$t" c | kgen >"$T/o$i" 2>"$T/e$i"
	expect_eq "kgen-any-task-name: bad task #$i: exit 1" 1 $?
	expect_eq "kgen-any-task-name: bad task #$i: written on as invalid" invalid "$(jq -r .status "$T/o$i")"
	ok "kgen-any-task-name: bad task #$i: the error names the field" jq -e '.error.message | test("task")' "$T/o$i"
	expect_eq "kgen-any-task-name: bad task #$i: one message line" 1 "$(wc -l <"$T/e$i")"
done
for b in fortran '../c' $'c\nx'; do
	i=$((i + 1))
	req matmul "$b" | kgen >"$T/o$i" 2>"$T/e$i"
	expect_eq "kgen-any-task-name: back end #$i: exit 1" 1 $?
	expect_eq "kgen-any-task-name: back end #$i: written on as invalid" invalid "$(jq -r .status "$T/o$i")"
	expect_eq "kgen-any-task-name: back end #$i: one message line" 1 "$(wc -l <"$T/e$i")"
done
ok "kgen-any-task-name: the back end's message names a plain one" grep -q 'unknown back end "fortran"' "$T/e7"
# 64 characters is a plain name: not refused for its name (the task does not exist).
req "$(printf 'z%.0s' $(seq 64))" c | kgen >"$T/o64" 2>"$T/e64"
ok "kgen-any-task-name: a 64-character name is not refused as a name" sh -c "! grep -q 'plain name' '$T/e64'"
req matmul c | kgen >"$T/ok" 2>"$T/okerr"
expect_eq "kgen-any-task-name: a plain name and back end pass (no knobs: gen_error)" "0 gen_error no_knobs" \
	"$? $(jq -r '"\(.status) \(.gen.status)"' "$T/ok")"
done_testing
