"""bench/torch_ops.py TASK_JSON — torch's own operation for a ksci task, timed
at the task's GPU benchmark sizes (bench_cuda), for the tables that put ksci's
kernels beside torch (bench/gpu-knobs.sh --torch, bench/gpu-offline.sh
--torch).  One line per size: "torch<TAB>SIZE<TAB>MEDIAN µs<TAB>what was
timed".  Method: CUDA events around one call, median of 100 calls after 10
warm-up calls, over 8 inputs used in turn (so no input stays in L2 from the
call before; every size here is larger than the H100's 50 MB L2).  matmul is
cuBLAS SGEMM: TF32 is switched off, as ksci's matmul is exact f32.  A task
with no torch equivalent prints one line saying so."""
import json
import sys

import torch
import torch.nn.functional as F


def op(name, s):
    """(function of one input set, list of 8 input sets, label) for size s."""
    dev = "cuda"
    if name == "matmul":
        torch.backends.cuda.matmul.allow_tf32 = False
        m, n, k = s["M"], s["N"], s["K"]
        b = torch.randn(k, n, device=dev)
        xs = [(torch.randn(m, k, device=dev), b) for _ in range(8)]
        return (lambda a: torch.mm(a[0], a[1])), xs, "torch.mm f32 (TF32 off: cuBLAS SGEMM)"
    r, c = s["rows"], s["cols"]
    if name == "rmsnorm":
        if not hasattr(F, "rms_norm"):
            return None, None, "F.rms_norm missing in torch %s" % torch.__version__
        w = torch.rand(c, device=dev, dtype=torch.bfloat16) + 0.5
        xs = [torch.randn(r, c, device=dev, dtype=torch.bfloat16) * 2 for _ in range(8)]
        return (lambda x: F.rms_norm(x, (c,), w, 1e-6)), xs, "F.rms_norm bf16"
    xs = [torch.randn(r, c, device=dev) for _ in range(8)]
    if name == "softmax":
        return (lambda x: torch.softmax(x, dim=-1)), xs, "torch.softmax(dim=-1)"
    if name == "rowsum":
        return (lambda x: x.sum(dim=1)), xs, "x.sum(dim=1)"
    if name == "layernorm":
        g, b = torch.rand(c, device=dev) + 0.5, torch.rand(c, device=dev) * 2 - 1
        return (lambda x: F.layer_norm(x, (c,), g, b, 1e-5)), xs, "F.layer_norm"
    if name == "bias_gelu":
        b = torch.rand(c, device=dev) * 2 - 1
        return (lambda x: F.gelu(x + b)), xs, "F.gelu(x + bias), eager (two kernels)"
    if name == "transpose":
        return (lambda x: x.t().contiguous()), xs, "x.t().contiguous()"
    return None, None, "no torch operation named for %s" % name


def main():
    t = json.load(open(sys.argv[1]))
    for s in t.get("bench_cuda", t["bench"]):
        size = "x".join(str(v) for v in s.values())
        f, xs, label = op(t["name"], s)
        if f is None:
            print("torch\t%s\t-\t%s" % (size, label))
            continue
        for i in range(10):
            f(xs[i % 8])
        ts = []
        for i in range(100):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            f(xs[i % 8])
            b.record()
            torch.cuda.synchronize()
            ts.append(a.elapsed_time(b) * 1000)
        ts.sort()
        print("torch\t%s\t%.2f\t%s" % (size, ts[50], label))
        del xs
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
