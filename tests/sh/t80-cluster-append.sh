#!/usr/bin/env bash
# Many concurrent writers appending to one archive through archive-append.sh
# never interleave: every line is a whole record, and each append's records
# stay together (one gzip member, or one run of plain lines). Each append is
# 6 records of ~24 KB, far past PIPE_BUF and past one write() of cat, so an
# unlocked append could be split by another writer.
# shellcheck disable=SC1091
. "$(dirname "$0")/lib.sh"

writers=16 appends=12 per=6
pad=$(head -c 24000 /dev/zero | tr '\0' 'x')
mkdir -p "$T/batches"
for w in $(seq 1 "$writers"); do
	for b in $(seq 1 "$appends"); do
		for r in $(seq 1 "$per"); do
			printf '{"id":"w%sb%sr%s","batch":"w%sb%s","pad":"%s"}\n' "$w" "$b" "$r" "$w" "$b" "$pad"
		done >"$T/batches/w$w-b$b"
	done
done

writer() { # archive writer
	local b
	for b in $(seq 1 "$appends"); do
		archive-append.sh "$1" "$T/batches/w$2-b$b" || return 1
	done
}

check() { # label archive-reader...
	local label=$1
	shift
	"$@" >"$T/all"
	local n=$((writers * appends * per))
	expect_eq "$label: $n lines" "$n" "$(wc -l <"$T/all")"
	expect_eq "$label: every line is one whole record" "$n" "$(jq -c '.id' "$T/all" 2>/dev/null | wc -l)"
	expect_eq "$label: every record once" "$n" "$(jq -r .id "$T/all" | sort -u | wc -l)"
	# Consecutive lines of one batch form one run: runs == batches.
	expect_eq "$label: each append's records are together" "$((writers * appends))" \
		"$(jq -r .batch "$T/all" | uniq | wc -l)"
}

for kind in ndjson ndjson.gz; do
	arc=$T/arc.$kind
	pids=()
	for w in $(seq 1 "$writers"); do
		writer "$arc" "$w" &
		pids+=($!)
	done
	fails=0
	for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
	expect_eq "$kind: $writers concurrent writers all succeeded" 0 "$fails"
	case $kind in
	*.gz)
		ok "$kind: the archive is whole gzip" gzip -t "$arc"
		check "$kind" gzip -dc "$arc"
		;;
	*) check "$kind" cat "$arc" ;;
	esac
done

# Input that is not whole records is refused and nothing is appended.
arc=$T/one.ndjson.gz
printf '{"id":"a"}\n' | archive-append.sh "$arc"
printf '{"id":"b"}\n{"id":"c' | archive-append.sh "$arc" 2>/dev/null
expect_eq "a cut last line is refused (exit 1)" 1 $?
printf '{"id":"b"}\nnot json\n' | archive-append.sh "$arc" 2>/dev/null
expect_eq "a line that is not JSON is refused (exit 1)" 1 $?
printf '{"id":"b"} {"id":"c"}\n' | archive-append.sh "$arc" 2>/dev/null
expect_eq "two records on one line are refused (exit 1)" 1 $?
expect_eq "nothing was appended by refused input" a "$(gzip -dc "$arc" | jq -r .id | xargs)"
archive-append.sh >/dev/null 2>&1
expect_eq "no archive is a usage error" 2 $?
ok "--help" sh -c 'archive-append.sh --help | grep -q "^usage: archive-append.sh"'
done_testing
