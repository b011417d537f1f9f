#!/usr/bin/env python3
"""t50-tasks.py: candidate records for tests/sh/t50-tasks.sh.

usage: t50-tasks.py TASKS_DIR MODE [TASK ...]
MODE good-c     the c seed and baseline of every task, as generated records
MODE good-cuda  the cuda seed, baseline and device reference (reference_cuda)
MODE wrong      deliberately wrong c candidates: each calls the task's own
                reference and then damages its outputs in a way that a task
                whose inputs allowed shortcuts would let pass:
                  zero   every output element 0
                  tiny   reference * 1e-6 (not constant: only the tolerance
                         stands between it and a pass)
                  flat   mean + (reference - mean) * 1e-6 (near-constant)
The record's "expect" field says what kverify must answer.
"""
import hashlib, json, os, re, sys

CTYPE = {"f16": "_Float16", "bf16": "uint16_t", "f32": "float", "f64": "double", "i8": "int8_t",
         "u8": "uint8_t", "i32": "int", "u32": "unsigned int", "i64": "long long"}


def record(task, backend, src, role, expect):
    h = hashlib.sha256(b"ksci-v1\0" + task.encode() + b"\0" + backend.encode() + b"\0" + src.encode())
    return {"id": h.hexdigest()[:16], "task": task, "backend": backend, "generation": 0, "parents": [],
            "source": src, "origin": {"generator": "seed", "role": role}, "status": "generated",
            "expect": expect}


def cexpr(e):
    """A shape entry as a C expression over the scalars (long arithmetic)."""
    if isinstance(e, (int, float)):
        return "%dL" % int(e)
    return "(" + re.sub(r"\b([A-Za-z_]\w*)\b", lambda m: "ksci_w_" + m.group(1) if m.group(1) in ("cdiv", "min", "max")
                        else "(long)(" + m.group(1) + ")", e) + ")"


def wrong_source(tdir, t, how):
    args = t["args"]
    params = []
    for a in args:
        ty = CTYPE[a["dtype"]]
        if a["kind"] == "scalar":
            params.append("%s %s" % (ty, a["name"]))
        else:
            params.append("%s%s* %s" % ("const " if a["kind"] == "in" else "", ty, a["name"]))
    sig = ", ".join(params)
    call = ", ".join(a["name"] for a in args)
    out = ["/* deliberately wrong (%s): the reference, then its outputs damaged */" % how,
           "#include <stdint.h>", "#include <string.h>",
           "#define solve ksci_reference_solve",
           # the reference's text itself: the compiler's sandbox shows it nothing outside its build dir
           open(os.path.join(tdir, t["reference"])).read(),
           "#undef solve",
           "static long ksci_w_cdiv(long a, long b) { return (a + b - 1) / b; }",
           "static long ksci_w_min(long a, long b) { return a < b ? a : b; }",
           "static long ksci_w_max(long a, long b) { return a > b ? a : b; }",
           "static double w_get(int bf, double v, uint16_t bits) { if (bf) { uint32_t u = (uint32_t)bits << 16; float f; memcpy(&f, &u, 4); return f; } return v; }",
           "static uint16_t w_bf16(double d) { float f = (float)d; uint32_t u; memcpy(&u, &f, 4); u += 0x7fff + ((u >> 16) & 1); return (uint16_t)(u >> 16); }",
           "void solve(%s)" % sig, "{", "\tksci_reference_solve(%s);" % call]
    for a in args:
        if a["kind"] not in ("out", "inout"):
            continue
        n = "*".join(cexpr(d) for d in a["shape"]) or "1L"
        name, bf = a["name"], a["dtype"] == "bf16"
        isint = a["dtype"] in ("i8", "u8", "i32", "u32", "i64")
        get = "w_get(%d, (double)%s[i], %s)" % (bf, name, "%s[i]" % name if bf else "0")
        put = (lambda v: "%s[i] = w_bf16(%s);" % (name, v)) if bf else (lambda v: "%s[i] = %s;" % (name, v))
        out.append("\t{ long ksci_w_n = %s; double ksci_w_mean = 0;" % n)
        out.append("\t  for (long i = 0; i < ksci_w_n; i++) ksci_w_mean += %s;" % get)
        out.append("\t  ksci_w_mean = ksci_w_n ? ksci_w_mean / ksci_w_n : 0; (void)ksci_w_mean;")
        if how == "zero":
            out.append("\t  for (long i = 0; i < ksci_w_n; i++) %s }" % put("0"))
        elif how == "tiny":
            v = "(%s * 1e-6)" % get
            out.append("\t  for (long i = 0; i < ksci_w_n; i++) %s }" % put(v if not isint else "(%s)" % v))
        else:
            v = "(ksci_w_mean + (%s - ksci_w_mean) * 1e-6)" % get
            out.append("\t  for (long i = 0; i < ksci_w_n; i++) %s }" % put(v))
    out.append("}")
    return "\n".join(out) + "\n"


def main():
    root, mode, names = sys.argv[1], sys.argv[2], sys.argv[3:]
    if not names:
        names = sorted(d for d in os.listdir(root) if os.path.isfile(os.path.join(root, d, "task.json")))
    for name in names:
        tdir = os.path.join(root, name)
        t = json.load(open(os.path.join(tdir, "task.json")))
        if mode in ("good-c", "good-cuda"):
            be = mode[5:]
            for role in ("seed", "baseline", "reference"):
                ent = t.get("reference_cuda") if role == "reference" and be == "cuda" else \
                    None if role == "reference" else t.get(role, {}).get(be)
                if ent is None:
                    continue
                f = ent if isinstance(ent, str) else ent["file"]
                src = open(os.path.join(tdir, f)).read()
                r = record(name, be, src, role, "verified" if be == "c" else "compiled")
                if isinstance(ent, dict) and ent.get("libs"):
                    # kcompile links a task's libs for its own baseline role
                    # only: as a candidate this source compiles but cannot load.
                    r["libs"] = ent["libs"]
                print(json.dumps(r))
        elif mode == "wrong":
            for how in ("zero", "tiny", "flat"):
                print(json.dumps(record(name, "c", wrong_source(tdir, t, how), "wrong-" + how, "wrong")))


main()
