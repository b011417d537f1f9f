#!/usr/bin/env python3
"""A/A with the KernelBench-style timing loop, for comparison with ktime.

One op is timed twice, as "A" and "B" (own inputs each, same values),
interleaved (AB, BA, AB, ...): per trial the L2 is flushed by writing a buffer
of 2 x L2 size, then CUDA events bracket one call, then a synchronize.  100
trials give A's and B's mean and median; that is repeated 10 times.  Per
(op, size) one JSON line: per-repeat medians and means of A and B, ratio B/A
of the medians (and of the means, KernelBench's figure), max |ratio-1|, repeats
within 1 %, CV (stddev/mean) of A's and B's median over the repeats.
Needs python3, torch and a CUDA GPU.  Used by bench/aa.sh --kb.
"""
import argparse
import json
import statistics as st
import sys

import torch

SIZES = {"softmax": [(4096, 4096), (32768, 1000)], "matmul": [(4096, 4096, 4096)]}


def make(op, size, dev):
    g = torch.Generator(device=dev).manual_seed(1)
    if op == "softmax":
        x = torch.randn(size, device=dev, generator=g)
        return lambda: torch.softmax(x, dim=-1)
    m, n, k = size
    a = torch.randn((m, k), device=dev, generator=g)
    b = torch.randn((k, n), device=dev, generator=g)
    return lambda: torch.matmul(a, b)


def cv(v):
    return st.stdev(v) / st.mean(v)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--op", choices=["softmax", "matmul", "all"], default="all")
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=10)
    o = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("kb_loop: no CUDA device visible to torch")
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False  # true fp32, as ktime's f32 tasks
    l2 = getattr(torch.cuda.get_device_properties(dev), "L2_cache_size", 50 << 20)
    flush = torch.empty(2 * l2 // 4, dtype=torch.float32, device=dev)
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
    for op in (["softmax", "matmul"] if o.op == "all" else [o.op]):
        for size in SIZES[op]:
            fns = {"A": make(op, size, dev), "B": make(op, size, dev)}
            for f in fns.values():
                for _ in range(3):
                    f()
            torch.cuda.synchronize()
            res = {"A": {"median": [], "mean": []}, "B": {"median": [], "mean": []}}
            for _ in range(o.repeats):
                t = {"A": [], "B": []}
                for i in range(o.trials):
                    for who in ("AB" if i % 2 == 0 else "BA"):
                        flush.zero_()
                        ev[0].record()
                        fns[who]()
                        ev[1].record()
                        torch.cuda.synchronize()
                        t[who].append(ev[0].elapsed_time(ev[1]) * 1000.0)  # ms -> us
                for who in "AB":
                    res[who]["median"].append(st.median(t[who]))
                    res[who]["mean"].append(st.mean(t[who]))
            ratio = [b / a for a, b in zip(res["A"]["median"], res["B"]["median"])]
            print(json.dumps({
                "method": "kernelbench", "op": op, "size": "x".join(map(str, size)),
                "gpu": torch.cuda.get_device_name(dev), "trials": o.trials, "repeats": o.repeats,
                "a_median_us": res["A"]["median"], "b_median_us": res["B"]["median"],
                "a_mean_us": res["A"]["mean"], "b_mean_us": res["B"]["mean"],
                "ratio": ratio,
                "ratio_mean": [b / a for a, b in zip(res["A"]["mean"], res["B"]["mean"])],
                "max_dev": max(abs(r - 1) for r in ratio),
                "within_1pct": sum(abs(r - 1) <= 0.01 for r in ratio),
                "cv_a_median": cv(res["A"]["median"]), "cv_b_median": cv(res["B"]["median"]),
            }), flush=True)


if __name__ == "__main__":
    main()
