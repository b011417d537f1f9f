#!/usr/bin/env bash
# quick A/A on the device: softmax seed as candidate, R runs
set -uo pipefail
BIN=${KSCIBIN:-build/gpu/bin}
task=${1:-softmax}; R=${2:-3}
export KSCI_TASKS=$PWD/data/tasks
python3 -c 'import json,sys; print(json.dumps({"id":"aa","task":sys.argv[1],"backend":"cuda","generation":0,"parents":[],"source":open("data/tasks/"+sys.argv[1]+"/seed.cu").read(),"status":"generated"}))' "$task" > /tmp/aa_in.json
$BIN/kcompile < /tmp/aa_in.json | $BIN/kverify > /tmp/aa_v.json
for i in $(seq "$R"); do
  t0=$(date +%s.%N)
  $BIN/ktime < /tmp/aa_v.json > /tmp/aa_t$i.json
  t1=$(date +%s.%N)
  python3 - "$t0" "$t1" /tmp/aa_t$i.json <<'PY'
import json,sys
r=json.load(open(sys.argv[3])); t=r.get("time",{})
print("run %.1fs status=%s msg=%s" % (float(sys.argv[2])-float(sys.argv[1]), r["status"], t.get("message","")[:300]))
for s in t.get("sizes",[]):
    print("  %s n=%s ovh=%.1fus probe=%s cand=%.2f±%.2f seed=%.2f base=%.2f ss=%.4f sb=%.4f batches=%d" % (
      json.dumps(s["size"]), s.get("batch_calls"), s.get("overhead_us",0), json.dumps(s.get("probe_us")),
      s["candidate"]["median_us"], s["candidate"]["sem_us"], s.get("seed",{}).get("median_us",0),
      s.get("baseline",{}).get("median_us",0), s.get("speedup_vs_seed",0), s.get("speedup_vs_baseline",0), s["candidate"]["n"]))
PY
done
python3 -c 'import json; r=json.load(open("/tmp/aa_t1.json")); print(r.get("time",{}).get("log","")[-3000:])'
