# The summary line as pipelines/evolve-lib.sh computed it before kselect
# --summary: jq -s over the whole archive (args $t task, $b back end, $g
# generation).  Kept as the reference that bench/kselect/run.sh and
# tests/sh/t21-kselect-summary.sh hold the new path against.
map(select(.task == $t and .backend == $b)) as $all
| ($all | map(select(.generation == $g)) | group_by(.status)
   | map("\(.[0].status) \(length)") | join(", ")) as $counts
| ($all | map(select(.status == "timed" and (.time.speedup_vs_baseline | type) == "number"))
   | max_by(.time.speedup_vs_baseline)) as $best
| "generation \($g): \($counts)"
  + (if $best then "; best so far \($best.id) (generation \($best.generation)): "
       + "\($best.time.speedup_vs_baseline * 1000 | round / 1000)x vs baseline, "
       + "\(($best.time.speedup_vs_seed // 0) * 1000 | round / 1000)x vs seed"
     else "; nothing timed yet" end)
