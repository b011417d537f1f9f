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
check 'ktime: --stop-stat: "mode" is not one of mean, median, paired' ktime --stop-stat mode
check 'ktime: --wake-cpu: "maybe" is not one of off, on, pin' ktime --wake-cpu maybe
check 'ktime: --retime: "sometimes" is not one of full, confirm' ktime --retime sometimes
check 'kreport: --peak-gbps: 0 is outside 1e-06..1e+12' kreport --peak-gbps 0
check 'kreport: --peak-gflops: "fast" is not a number' kreport --peak-gflops fast
# env-switch-typo-was-the-default: a switch of the environment
# (docs/tools/README.md) set to a value it does not take was the default
# without a word (KSCI_NVCC_PREFIX=no kept the prefix; KSCI_CUDA_DEVICE=gpu1
# ran on device 0). Now: exit 2 before anything is read, the message in
# lib/opt.h's words, nothing on stdout; a record waiting on stdin is not
# consumed; evolve.sh stops at its dry run, before the archive is touched.
envcheck() { # expected-stderr VAR=VALUE tool
	local want=$1 rc
	printf '{"id":"x","status":"generated"}\n' >"$T/in"
	env "$2" "$3" <"$T/in" >"$T/out" 2>"$T/err"
	rc=$?
	expect_eq "$2 $3: exit 2" 2 "$rc"
	expect_eq "$2 $3: the message, alone" "$want" "$(cat "$T/err")"
	expect_eq "$2 $3: nothing on stdout" 0 "$(wc -c <"$T/out" | tr -d ' ')"
}
envcheck 'kcompile: KSCI_NVCC_PREFIX: "no" is not one of on, off' KSCI_NVCC_PREFIX=no kcompile
envcheck 'kcompile: KSCI_NVCC_DLINK: "join" is not one of early, joined' KSCI_NVCC_DLINK=join kcompile
envcheck 'kcompile: KSCI_NVCC_STEPS: "Serial" is not one of parallel, serial' KSCI_NVCC_STEPS=Serial kcompile
envcheck 'kcompile: KSCI_HOST_LD: "bfd" is not one of gold, default' KSCI_HOST_LD=bfd kcompile
envcheck 'kverify: KSCI_CUDA_DEVICE: "gpu1" is not an integer' KSCI_CUDA_DEVICE=gpu1 kverify
envcheck 'ktime: KSCI_CUDA_DEVICE: 1024 is outside 0..1023' KSCI_CUDA_DEVICE=1024 ktime
envcheck 'ktime: KSCI_JUDGE_SPARE: "later" is not one of auto, asked, after' KSCI_JUDGE_SPARE=later ktime
# The words it takes, and empty: the records go through (c back end, no
# compile: a record in another status is written on as it came).
printf '{"id":"x","status":"timed"}\n' >"$T/in"
KSCI_NVCC_PREFIX=off KSCI_NVCC_STEPS=parallel KSCI_HOST_LD='' KSCI_JUDGE_SPARE=after KSCI_CUDA_DEVICE=0 \
	kcompile --unsafe-no-sandbox <"$T/in" >"$T/out" 2>"$T/err"
expect_eq "switches set to words they take, or empty: exit 0, the record on" "0 1" "$? $(wc -l <"$T/out" | tr -d ' ')"
KSCI_NVCC_PREFIX=no "$ROOT/pipelines/evolve.sh" --task softmax --backend c --generations 1 --population 2 \
	--archive "$T/env.ndjson.gz" >"$T/out" 2>"$T/err"
expect_eq "evolve.sh with KSCI_NVCC_PREFIX=no: exit 2" 2 $?
ok "evolve.sh with KSCI_NVCC_PREFIX=no: kcompile's message" grep -qF 'KSCI_NVCC_PREFIX: "no" is not one of on, off' "$T/err"
ok "evolve.sh with KSCI_NVCC_PREFIX=no: no archive made" test ! -e "$T/env.ndjson.gz"
done_testing
