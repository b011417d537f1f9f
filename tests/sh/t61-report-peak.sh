#!/usr/bin/env bash
# Regression: a task meant for tensor cores was reported as a percentage of the
# measured fp32 SGEMM peak (15-40x too high). Its sizes carry flops_unit, and
# kreport then leaves % of peak out unless the user names a peak.
. "$(dirname "$0")/lib.sh"

rec() { # TASK UNIT
	jq -cn --arg t "$1" --arg u "$2" '{id: ("id-" + $t), task: $t, backend: "cuda", generation: 0, parents: [],
		status: "timed", origin: {generator: "seed"},
		time: {speedup_vs_baseline: 1, speedup_vs_seed: 1, env: {peak_gflops: 50000},
		       sizes: [{gflops: 1000} + (if $u == "" then {} else {flops_unit: $u} end)]}}'
}
{ rec sgemm ""; rec hgemm tensor-f16; } >"$T/a.ndjson"
kreport "$T/a.ndjson" >"$T/out.txt"
expect_eq "fp32 task: % of the fp32 peak" "2.0%" "$(awk '$1 == "sgemm" && NF > 5 {print $4; exit}' "$T/out.txt")"
expect_eq "tensor-core task: no % of the fp32 peak" "n/a" "$(awk '$1 == "hgemm" && NF > 5 {print $4; exit}' "$T/out.txt")"
kreport --peak-gflops 1000000 "$T/a.ndjson" >"$T/out2.txt"
expect_eq "tensor-core task: % of a peak the user names" "0.1%" "$(awk '$1 == "hgemm" && NF > 5 {print $4; exit}' "$T/out2.txt")"
done_testing
