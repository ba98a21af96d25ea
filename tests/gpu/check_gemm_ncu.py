#!/usr/bin/env python3
"""GEMMs' FLOPs and FLOP rates as dnntrace reports them, against Nsight Compute's counters.

    check_gemm_ncu.py DNNTRACE OUTDIR [--tol 0.15]

Runs wl_gemm_sizes.py (a bf16 GEMM, a batched fp16 GEMM and an FP32 SIMT GEMM, each made by
cuBLAS) under `dnntrace record`, and reads each GEMM's op from `dnntrace ops --format json`: its
FLOPs (from the shapes) and its median GPU time. Then profiles each GEMM alone under ncu (clocks
and caches left as they are, kernels in the GEMM's NVTX range) for its kernels' duration and the
floating-point operations the SMs executed: the tensor pipe's operations of the GEMM's types, and
2 per FFMA plus 1 per FADD and FMUL of the SIMT pipe. Prints per GEMM both FLOP counts and both
FLOP rates; each must agree within --tol (relative). Exit 0 when all agree, 1 otherwise, 77
without a GPU or without ncu.
"""

import argparse
import collections
import csv
import io
import json
import os
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# name: the op's (m, n, k, batch) in cuBLAS's column-major terms, as the decoder gives them
GEMMS = {"bf16": (4096, 4096, 4096, 1), "fp16_batched": (1024, 1024, 512, 16),
         "fp32": (2048, 2048, 2048, 1)}
TENSOR = ["sm__ops_path_tensor_src_bf16_dst_fp32.sum"]  # and whatever tensor counters ncu knows
SIMT = {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 2,
        "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum": 1,
        "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum": 1}
TIME = "gpu__time_duration.sum"
UNITS = {"nsecond": 1, "usecond": 1e3, "msecond": 1e6, "second": 1e9}


def workload(*extra):
    return [sys.executable, os.path.join(HERE, "wl_gemm_sizes.py")] + list(extra)


def ours(dnntrace, out):
    trace = os.path.join(out, "gemm_sizes.dnnt")
    r = subprocess.run([dnntrace, "record", "-q", "-o", trace, "--"] + workload(),
                       capture_output=True, text=True)
    if r.returncode == 77:
        sys.exit(77)
    if r.returncode:
        sys.exit("wl_gemm_sizes under dnntrace failed: %s" % r.stderr[-2000:])
    ops = json.loads(subprocess.run([dnntrace, "ops", "--format", "json", "--with-warmup", trace], check=True,
                                    capture_output=True, text=True).stdout)["ops"]
    found = {}
    for name, shape in GEMMS.items():
        mine = [o for o in ops if o.get("params") and
                (o["params"].get("m"), o["params"].get("n"), o["params"].get("k"),
                 o["params"].get("batch", 1)) == shape and o.get("gpu_ns")]
        if mine:
            found[name] = (mine[0]["flops"], statistics.median(o["gpu_ns"] for o in mine),
                           mine[0]["api"], mine[0].get("first_kernel", "?"), len(mine))
    return found


def known(ncu, metrics):
    """Those of metrics this ncu knows for the GPU (an unknown one fails the whole profile), and
    every tensor-pipe operation counter it knows (their names vary with the GPU: one per pair of
    source and destination types)."""
    r = subprocess.run([ncu, "--query-metrics"], capture_output=True, text=True)
    names = {line.split()[0] for line in r.stdout.splitlines() if line.strip()}
    if not names:
        return metrics
    tensor = sorted(n + ".sum" for n in names
                    if n.startswith("sm__ops_path_tensor_src_") and "sparsity" not in n)
    return [m for m in metrics if m.rsplit(".", 1)[0] in names and m not in TENSOR] + tensor


def theirs(ncu, name, out):
    metrics = known(ncu, [TIME] + TENSOR + list(SIMT))
    r = subprocess.run([ncu, "--csv", "--clock-control", "none", "--cache-control", "none",
                        "--nvtx", "--nvtx-include", "gemm_%s/" % name, "--metrics", ",".join(metrics)]
                       + workload("--only", name, "--iters", "2", "--warmup", "1"),
                       capture_output=True, text=True)
    with open(os.path.join(out, "ncu-%s.csv" % name), "w") as f:
        f.write(r.stdout + r.stderr)
    text = r.stdout[r.stdout.find('"ID"'):] if '"ID"' in r.stdout else ""
    per = collections.defaultdict(dict)
    for row in csv.DictReader(io.StringIO(text)):
        try:
            v = float(row["Metric Value"].replace(",", ""))
        except (KeyError, ValueError):
            continue
        per[row["ID"]][row["Metric Name"]] = v * UNITS.get(row["Metric Unit"], 1)
        per[row["ID"]]["name"] = row["Kernel Name"]
    # each execution of the GEMM: its kernels in launch order, 3 executions of the same list
    runs = list(per.values())
    if not runs or len(runs) % 3:
        return None
    k = len(runs) // 3
    execs = [runs[i * k:(i + 1) * k] for i in range(3)]
    flops = [sum(sum(v for m, v in kr.items() if m.startswith("sm__ops_path_tensor_src_")) + sum(kr.get(m, 0) * w for m, w in SIMT.items())
                 for kr in e) for e in execs]
    ns = [sum(kr.get(TIME, 0) for kr in e) for e in execs]
    return statistics.median(flops), statistics.median(ns), [kr["name"][:60] for kr in execs[0]]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dnntrace")
    ap.add_argument("out")
    ap.add_argument("--tol", type=float, default=0.15)
    a = ap.parse_args()
    ncu = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
    if not os.path.exists(ncu):
        print("SKIP: no ncu")
        return 77
    os.makedirs(a.out, exist_ok=True)
    mine = ours(a.dnntrace, a.out)
    bad = 0
    print("%-13s %-26s %5s %14s %14s %7s %10s %10s %9s %9s %7s" %
          ("GEMM", "call", "execs", "FLOPs dnntrace", "FLOPs ncu", "ratio", "us dnntr.",
           "us ncu", "TFLOP/s d", "TFLOP/s n", "ratio"))
    for name in GEMMS:
        if name not in mine:
            print("%-13s no op of this shape in the trace" % name)
            bad += 1
            continue
        f, ns, api, kern, n = mine[name]
        t = theirs(ncu, name, a.out)
        if not t:
            print("%-13s ncu profiled no kernel in gemm_%s (see ncu-%s.csv)" % (name, name, name))
            bad += 1
            continue
        nf, nns, knames = t
        rate, nrate = f / ns / 1e3, nf / nns / 1e3 if nns else 0
        fr, rr = (f / nf if nf else float("inf")), (rate / nrate if nrate else float("inf"))
        ok = abs(fr - 1) <= a.tol and abs(rr - 1) <= a.tol
        bad += not ok
        print("%-13s %-26s %5d %14.4g %14.4g %7.3f %10.1f %10.1f %9.1f %9.1f %7.3f %s" %
              (name, api, n, f, nf, fr, ns / 1e3, nns / 1e3, rate, nrate, rr,
               "ok" if ok else "DIFFERS"))
        print("%-13s kernels: %s (dnntrace's first: %s)" % ("", ", ".join(knames), kern[:60]))
    print("%d of %d GEMMs disagree" % (bad, len(GEMMS)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
