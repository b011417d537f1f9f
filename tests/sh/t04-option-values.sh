#!/usr/bin/env bash
# Numeric option values go through one parser (lib/opt.h) in every tool, with
# one message style; kgen ("is not an integer in [lo, hi]") and kreport ("want
# a positive number") had their own. A bad value: exit 2, the message first,
# then the usage, nothing on stdout.
. "$(dirname "$0")/lib.sh"

check() { # expected-first-stderr-line command...
	local want=$1 rc
	shift
	"$@" </dev/null >"$T/out" 2>"$T/err"
	rc=$?
	expect_eq "$*: exit 2" 2 "$rc"
	expect_eq "$*: message" "$want" "$(head -n 1 "$T/err")"
	expect_eq "$*: then the usage, nothing on stdout" "usage: $1 0" \
		"$(sed -n 2p "$T/err" | cut -d' ' -f1,2) $(wc -c <"$T/out" | tr -d ' ')"
}

check 'kselect: --population: 0 is outside 1..100000' kselect -n 0
check 'kselect: --ucb-c: "x" is not a number' kselect --ucb-c x
check 'kgen: --children: 0 is outside 1..1000' kgen --children 0
check 'kgen: --seed: "x" is not an integer' kgen --seed x
check 'kgen: --seed: -1 is outside 0..9223372036854775807' kgen --seed -1
check 'kgen: --temperature: 3 is outside 0..2' kgen --temperature 3
check 'kgen: --token-param: "max" is not one of auto, max_tokens, max_completion_tokens' kgen --token-param max
check 'kselect: --backend: "fortran" is not one of c, cuda, hip' kselect --backend fortran
check 'kcompile: --timeout: 0 is outside 1..86400' kcompile --timeout 0
check 'kcompile: --jobs: 0 is outside 1..256' kcompile -j 0
check 'kverify: --seeds: 0 is outside 1..1000' kverify --seeds 0
check 'kverify: --seed: -1 is outside 0..18446744073709551615' kverify --seed -1
check 'ktime: --budget: 0 is outside 0.001..3600' ktime --budget 0
check 'ktime: --min-runs: "ten" is not an integer' ktime --min-runs ten
check 'ktime: --noise: 2 is outside 1e-06..1' ktime --noise 2
check 'ktime: --peak-gbps: 0 is outside 1e-06..1e+09' ktime --peak-gbps 0
check 'ktime: --arena: 70000 is outside 0..65536' ktime --arena 70000
check 'ktime: --processes: 17 is outside 0..16' ktime --processes 17
check 'ktime: --batch: 2 is outside 0..1' ktime --batch 2
check 'ktime: --stop-stat: "mode" is not one of mean, median' ktime --stop-stat mode
check 'ktime: --wake-cpu: "maybe" is not one of off, on, pin' ktime --wake-cpu maybe
check 'ktime: --retime: "sometimes" is not one of full, confirm' ktime --retime sometimes
check 'kreport: --peak-gbps: 0 is outside 1e-06..1e+12' kreport --peak-gbps 0
check 'kreport: --peak-gflops: "fast" is not a number' kreport --peak-gflops fast
done_testing
