#!/usr/bin/env python3
"""t50-tasks-table.py: the per-task markdown table of a GPU suite run.

usage: t50-tasks-table.py VERIFY.nd TIME-SEED.nd TIME-KIDS.nd

For each task and bench_cuda size: the seed, the baseline and the best
candidate of the run (the fastest timed record by geometric-mean speedup over
the seed; the seed itself when no child beat it), as median microseconds and
% of the physical limit: the measured copy bandwidth (the harness's
peak.copy_gbps) for memory-bound tasks, the H100 SXM dense datasheet rate of
the unit the task is meant for (fp32 CUDA cores 67, fp16/bf16 tensor 989, fp8
tensor 1979 TFLOP/s) for compute-bound ones.
"""
import json, math, sys

TFLOPS = {"matmul": 67, "conv2d": 67, "gemm_f16": 989, "gemm_bf16": 989, "attention": 989,
          "gemm_fp8_blockscale": 1979}


def load(path):
    out = []
    try:
        for line in open(path):
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    except OSError:
        pass
    return out


def size_str(s):
    return " ".join("%s=%g" % kv for kv in s.items())


def pct(task, sz, us, peak_bw):
    if not us:
        return "-"
    if task in TFLOPS:
        return "%.1f%%" % (100 * sz["flops"] / (us * 1e-6) / (TFLOPS[task] * 1e12)) if "flops" in sz else "-"
    if "bytes" in sz and peak_bw:
        return "%.1f%%" % (100 * sz["bytes"] / (us * 1e-6) / (peak_bw * 1e9))
    return "-"


def main():
    verify, seeds, kids = (load(p) for p in sys.argv[1:4])
    tasks = sorted({r["task"] for r in verify})
    peak_bw = None
    env = None
    for r in seeds + kids:
        t = r.get("time") or {}
        if t.get("peak", {}).get("copy_gbps"):
            peak_bw = t["peak"]["copy_gbps"]
        env = env or t.get("env")
    print("device: %s" % json.dumps(env))
    print("measured copy bandwidth: %s GB/s; measured peaks: %s" % (peak_bw, json.dumps(
        next(((r.get("time") or {}).get("peak") for r in seeds if (r.get("time") or {}).get("peak")), None))))
    print()
    print("| task | size | seed us (% limit) | baseline us (% limit) | best us (% limit) | best is | seed vs baseline |")
    print("|---|---|---|---|---|---|---|")
    for task in tasks:
        st = {r.get("origin", {}).get("role"): r["status"] for r in verify if r["task"] == task}
        seed = next((r for r in seeds if r["task"] == task and r["status"] == "timed"), None)
        if not seed:
            print("| %s | - | %s | | | | verify: %s |" % (task, "not timed", st))
            continue
        cands = [seed] + [r for r in kids if r["task"] == task and r["status"] == "timed"]
        best = max(cands, key=lambda r: r["time"].get("speedup_vs_seed", 1.0) if r is not seed else 1.0)
        nk = sum(1 for r in kids if r["task"] == task)
        nt = len(cands) - 1
        what = "seed" if best is seed else ",".join("%s=%s" % (c["knob"], c["to"]) for c in best["origin"].get("changes", []))
        for i, sz in enumerate(seed["time"]["sizes"]):
            bsz = best["time"]["sizes"][i]
            s_us = sz.get("candidate", {}).get("median_us")
            b_us = sz.get("baseline", {}).get("median_us")
            x_us = bsz.get("candidate", {}).get("median_us")
            print("| %s | %s | %.1f (%s) | %s | %.1f (%s) | %s | %s |" % (
                task, size_str(sz["size"]), s_us, pct(task, sz, s_us, peak_bw),
                "%.1f (%s)" % (b_us, pct(task, sz, b_us, peak_bw)) if b_us else "-",
                x_us, pct(task, bsz, x_us, peak_bw),
                "%s (%d/%d children timed)" % (what, nt, nk) if i == 0 else "",
                "%.2fx" % (b_us / s_us) if b_us else "-"))


main()
