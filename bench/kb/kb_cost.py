#!/usr/bin/env python3
"""What one candidate costs in a KernelBench-style evaluation, for comparison.

The candidate is the task's seed kernel (data/tasks/TASK/seed.cu), built the
way KernelBench builds a candidate: torch.utils.cpp_extension.load_inline,
in a fresh build directory (no cache between candidates), in the evaluating
process itself; then 5 correctness checks against torch on fresh inputs,
then 100 timed trials (CUDA events around one call, L2 flushed before each).
Prints one JSON line per run: build, check, time and total seconds.
Needs python3, torch, ninja or setuptools, nvcc and a CUDA GPU.  Used by
bench/gpu-throughput.sh.
"""
import argparse
import json
import os
import sys
import tempfile
import time

import torch
from torch.utils.cpp_extension import load_inline

WRAP = {
    "softmax": ("torch::Tensor run(torch::Tensor x);",
                """
torch::Tensor run(torch::Tensor x) {
    auto y = torch::empty_like(x);
    solve(x.data_ptr<float>(), y.data_ptr<float>(), (int)x.size(0), (int)x.size(1));
    return y;
}""",
                lambda g: [torch.randn((4096, 4096), device="cuda", generator=g)],
                lambda x: torch.softmax(x, dim=-1)),
    "matmul": ("torch::Tensor run(torch::Tensor a, torch::Tensor b);",
               """
torch::Tensor run(torch::Tensor a, torch::Tensor b) {
    auto c = torch::empty({a.size(0), b.size(1)}, a.options());
    solve(a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), (int)a.size(0), (int)b.size(1), (int)a.size(1));
    return c;
}""",
               lambda g: [torch.randn((4096, 4096), device="cuda", generator=g),
                          torch.randn((4096, 4096), device="cuda", generator=g)],
               lambda a, b: a @ b),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", choices=sorted(WRAP), default="softmax")
    ap.add_argument("--tasks", default=os.path.join(os.path.dirname(__file__), "..", "..", "data", "tasks"))
    ap.add_argument("--runs", type=int, default=1)
    a = ap.parse_args()
    decl, body, inputs, ref = WRAP[a.task]
    src = open(os.path.join(a.tasks, a.task, "seed.cu")).read()
    for run in range(a.runs):
        t0 = time.time()
        with tempfile.TemporaryDirectory() as d:
            mod = load_inline(name=f"kb_{a.task}_{os.getpid()}_{run}", cpp_sources=decl,
                              cuda_sources=src + body, functions=["run"], build_directory=d,
                              extra_cuda_cflags=["-O3"], verbose=False)
            t1 = time.time()
            g = torch.Generator(device="cuda").manual_seed(run)
            ok = True
            for _ in range(5):
                xs = inputs(g)
                ok &= torch.allclose(mod.run(*xs), ref(*xs), atol=1e-3, rtol=1e-3)
            torch.cuda.synchronize()
            t2 = time.time()
            xs = inputs(g)
            flush = torch.empty(2 * 50 * 2**20, dtype=torch.uint8, device="cuda")
            ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(100)]
            for s, e in ev:
                flush.zero_()
                s.record()
                mod.run(*xs)
                e.record()
                torch.cuda.synchronize()
            ms = sorted(s.elapsed_time(e) for s, e in ev)
            t3 = time.time()
        print(json.dumps({"task": a.task, "run": run + 1, "correct": bool(ok), "build_s": round(t1 - t0, 2),
                          "check_s": round(t2 - t1, 2), "time_s": round(t3 - t2, 2), "total_s": round(t3 - t0, 2),
                          "median_us": round(1000 * ms[50], 2)}))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
