#!/usr/bin/env python3
"""gen.py: write a synthetic ksci archive for the kselect benchmark.

Records follow docs/record.md and are about 8 KB each: a ~5.5 KB source
(a tunable kernel with varying knob values and a few varying lines, so gzip
sees realistic, not absurd, redundancy), compile/verify/time stage objects
with four benchmark sizes.  About 70% are "timed"; the rest fail in
kcompile/kverify with a log.  Each generation is written as its own gzip
member, the way pipelines/evolve.sh appends an archive.

usage: gen.py [--records N] [--per-gen N] [--task T] [--seed S] OUT.ndjson.gz
"""
import argparse
import gzip
import hashlib
import json
import random
import sys

TEMPLATE_HEAD = """// matmul: C = A * B, row-major, float32, tiled for cache.
#include <stddef.h>
#include <string.h>
#define TILE {tile} // ktune: 8 16 32 64 128
#define UNROLL {unroll} // ktune: 1 2 4 8
#define BLOCK_K {bk} // ktune: 16 32 64 128 256
#define VEC {vec} // ktune: 1 4 8
"""
BODY_LINE = ("    for (int {v} = 0; {v} < n; {v} += {step}) {{ acc{k} += a[i * n + {v}] * b[{v} * n + j] * {c:.6f}f; }} // {note}\n")


def source(rng, gen):
    s = TEMPLATE_HEAD.format(tile=rng.choice([8, 16, 32, 64, 128]), unroll=rng.choice([1, 2, 4, 8]),
                             bk=rng.choice([16, 32, 64, 128, 256]), vec=rng.choice([1, 4, 8]))
    s += "static void kernel_tile(const float *a, const float *b, float *c, int n, int i0, int j0)\n{\n"
    while len(s) < 5400:
        s += BODY_LINE.format(v=rng.choice("pqrs"), step=rng.choice([1, 2, 4]), k=rng.randrange(8),
                              c=rng.random(), note="%08x gen %d" % (rng.getrandbits(32), gen))
    s += "}\nvoid solve(const float* a, const float* b, float* c, int n)\n{\n    memset(c, 0, sizeof(float) * (size_t)n * n);\n}\n"
    return s


def stats(rng, med):
    return {"median_us": round(med, 3), "mean_us": round(med * 1.02, 3), "sem_us": round(med * 0.01, 3),
            "min_us": round(med * 0.97, 3), "n": 31}


def record(rng, task, gen, i, ids):
    src = source(rng, gen)
    rid = hashlib.sha256(b"ksci-v1\0" + task.encode() + b"\0c\0" + src.encode()).hexdigest()[:16]
    parents = [rng.choice(ids)] if ids else []
    knob = rng.choice(["TILE", "UNROLL", "BLOCK_K", "VEC"])
    r = {"id": rid, "task": task, "backend": "c", "generation": gen, "parents": parents, "source": src,
         "origin": {"generator": "mutate", "changes": [{"knob": knob, "from": "32", "to": "64", "line": 4}],
                    "strategy": {"name": "tournament", "reason": "tournament of 4", "seed": 7},
                    "seed": rng.getrandbits(31)},
         "island": i % 4}
    comp = {"ok": True, "status": "ok", "seconds": round(rng.uniform(0.2, 0.9), 3), "cached": False,
            "key": hashlib.sha256(src.encode()).hexdigest(), "compiler": "cc (Debian 12.2.0-14) 12.2.0",
            "flags": "-O3 -march=native -fopenmp -fPIC -shared", "artifact": "/var/cache/ksci/" + rid + ".so"}
    roll = rng.random()
    if roll < 0.10:
        comp.update(ok=False, status="error",
                    log="kernel.c:%d:5: error: expected ';' before '}' token\n" % rng.randrange(100) * 8)
        r.update(status="compile_error", compile=comp)
        return r
    r["compile"] = comp
    if roll < 0.25:
        r["status"] = "wrong"
        r["verify"] = {"ok": False, "status": "wrong", "seconds": 0.4, "seeds": [1, 2, 3], "checks": 7,
                       "max_abs_err": 3.5, "max_rel_err": 0.9,
                       "mismatch": {"size": {"n": 33}, "seed": 2, "arg": "c", "index": [3, 4], "flat": 103,
                                    "got": 1.5, "want": 2.5, "count": 40, "reason": "beyond tolerance"},
                       "message": "c[3][4] = 1.5, want 2.5 (n=33, seed 2)"}
        return r
    if roll < 0.30:
        r["status"] = "crashed"
        r["verify"] = {"ok": False, "status": "crashed", "seconds": 0.1, "message": "killed by signal 11 (SIGSEGV)",
                       "log": "segfault at n=1\n"}
        return r
    r["verify"] = {"ok": True, "status": "ok", "seconds": 0.5, "seeds": [11, 12, 13], "checks": 21,
                   "max_abs_err": 1e-6, "max_rel_err": 2e-7}
    sp = rng.lognormvariate(0.0, 0.4) * (1 + gen / 100)
    sizes = []
    for n in (128, 256, 512, 1024):
        base = n ** 3 / 2000.0
        cand = base / sp * rng.uniform(0.9, 1.1)
        sizes.append({"size": {"n": n}, "candidate": stats(rng, cand), "baseline": stats(rng, base),
                      "seed": stats(rng, base * 0.8), "speedup_vs_baseline": round(base / cand, 4),
                      "speedup_vs_seed": round(base * 0.8 / cand, 4), "gflops": round(2 * n ** 3 / cand / 1e3, 3),
                      "gbps": round(12 * n * n / cand / 1e3, 3)})
    r["status"] = "timed"
    r["time"] = {"ok": True, "status": "ok", "seconds": 3.2, "sizes": sizes, "speedup_vs_baseline": round(sp, 5),
                 "speedup_vs_seed": round(sp * 0.8, 5),
                 "env": {"cpu": "AMD EPYC", "compiler": "cc 12.2.0", "threads": 2}}
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=100000)
    ap.add_argument("--per-gen", type=int, default=1000)
    ap.add_argument("--task", default="matmul")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("out")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    ids = []
    with open(a.out, "wb") as f:
        gen = 0
        done = 0
        while done < a.records:
            n = min(a.per_gen, a.records - done)
            lines = []
            new_ids = []
            for i in range(n):
                r = record(rng, a.task, gen, i, ids[-2000:])
                if r["status"] == "timed":
                    new_ids.append(r["id"])
                lines.append(json.dumps(r, separators=(",", ":")))
            f.write(gzip.compress(("\n".join(lines) + "\n").encode(), compresslevel=6))
            ids += new_ids
            done += n
            gen += 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
