#!/usr/bin/env python3
"""The operation families dnntrace gives llama.cpp's kernels, against llama.cpp's own graph.

    check_llama_ops.py DNNTRACE OUTDIR
    check_llama_ops.py DNNTRACE --from SCHED_LOG TRACE   (a run made already)

Runs llama-bench (prompt 32, 8 tokens; flash attention off, then on) under `dnntrace record`
with GGML_SCHED_DEBUG=2 and -v, which makes ggml print every graph it schedules, node by node,
with the backend each node runs on. From that print it counts the operations on the GPU
(ggml's op names: RMS_NORM, ROPE, MUL_MAT, ...); from `dnntrace report --format json` it takes
the kernels of each family. ggml prints a graph also when it only sizes it, so the printed
counts are the executed ones times a factor: that factor must be the same for every operation
that is one kernel (RMS_NORM -> normalization, ROPE -> rope, SOFT_MAX -> softmax, GET_ROWS ->
gather, ADD + MUL + UNARY -> elementwise), twice that for FLASH_ATTN -> attention (ggml runs
each as a kernel and a combining pass), and at least that for MUL_MAT -> matmul (cuBLAS adds
reductions). Exits 1 when a family's count disagrees, 77 without a GPU or the workload
($DNNTRACE_LLAMA, or ../shared/workloads/llama beside the source tree).
"""

import gzip
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77

# ggml's op -> (dnntrace's family, kernels per op: "=" exactly, ">=" at least)
ONE = [("RMS_NORM", "normalization"), ("ROPE", "rope"), ("SOFT_MAX", "softmax"),
       ("GET_ROWS", "gather")]
ELEMENTWISE = ("ADD", "MUL", "UNARY")


def gpu_ops(log_text):
    """ggml op name -> count, over the nodes of the GPU's splits."""
    ops, on_gpu = {}, False
    for line in log_text.splitlines():
        if line.startswith("## SPLIT"):
            on_gpu = "CUDA" in line.split(":")[1]
        elif on_gpu and line.startswith("node #"):
            m = re.match(r"node #\s*\d+ \(\s*([A-Z_]+)\)", line)
            if m:
                ops[m.group(1)] = ops.get(m.group(1), 0) + 1
    return ops


def families(dnntrace, trace):
    r = json.loads(subprocess.run([dnntrace, "report", "--format", "json", trace],
                                  check=True, capture_output=True, text=True).stdout)
    return {f["family"]: f["count"] for f in r["gpu"]["families"]}


def check(name, ops, fam):
    if not ops.get("RMS_NORM") or not fam.get("normalization"):
        print("FAIL %s: no RMS_NORM in ggml's graph or no normalization kernel" % name)
        return False
    # executed / printed, as a fraction: kernels * p == ops * k
    k, p = fam["normalization"], ops["RMS_NORM"]
    ok = True
    rows = [(o, f, 1, "=") for o, f in ONE] + \
        [("+".join(ELEMENTWISE), "elementwise", 1, "="),
         ("FLASH_ATTN", "attention", 2, "="), ("MUL_MAT", "matmul", 1, ">=")]
    print("%s: ggml printed %d RMS_NORM nodes and %d normalization kernels ran: of every "
          "%d nodes printed, %d ran (the rest were graphs only sized)" % (name, p, k, p, k))
    for op, f, per, how in rows:
        n = sum(ops.get(o, 0) for o in op.split("+"))
        got = fam.get(f, 0)
        if not n and not got:
            continue
        want = n * k * per
        good = got * p == want if how == "=" else got * p >= want
        print("  %-4s %-16s %5d nodes  %-14s %5d kernels, %s %.1f" %
              ("ok" if good else "FAIL", op, n, f, got, how, want / p))
        ok &= good
    return ok


def main():
    dnntrace = sys.argv[1]
    if len(sys.argv) == 5 and sys.argv[2] == "--from":
        opener = gzip.open if sys.argv[3].endswith(".gz") else open
        with opener(sys.argv[3], "rt") as f:
            log = f.read()
        sys.exit(0 if check(sys.argv[4], gpu_ops(log), families(dnntrace, sys.argv[4])) else 1)
    out = sys.argv[2]
    root = os.path.dirname(os.path.dirname(HERE))
    llama = None
    for d in (os.environ.get("DNNTRACE_LLAMA", ""), os.path.join(root, "..", "shared", "workloads", "llama")):
        if d and os.path.isfile(os.path.join(d, "run-llama.sh")):
            llama = d
            break
    if not llama:
        print("no llama.cpp workload: skipped")
        sys.exit(SKIP)
    try:
        gpu = subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0
    except OSError:
        gpu = False
    if not gpu:
        print("no GPU: skipped")
        sys.exit(SKIP)
    os.makedirs(out, exist_ok=True)
    ok = True
    for fa in ("0", "1"):
        trace = os.path.join(out, "llama-fa%s.dnnt" % fa)
        env = dict(os.environ, GGML_SCHED_DEBUG="2",
                   LLAMA_ARGS="-p 32 -n 8 -ngl 99 -r 1 -fa %s -v" % fa)
        run = subprocess.run(["bash", os.path.join(llama, "run-llama.sh"), os.path.join(out, "llama"),
                              dnntrace, "record", "-q", "-o", trace, "--"],
                             env=env, capture_output=True, text=True)
        if run.returncode:
            print("FAIL flash attention %s: llama-bench failed\n%s" % (fa, run.stderr[-2000:]))
            ok = False
            continue
        ok &= check("flash attention " + ("on" if fa == "1" else "off"),
                    gpu_ops(run.stdout + run.stderr), families(dnntrace, trace))
    sys.exit(0 if ok else 1)


main()
