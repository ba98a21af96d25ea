#!/usr/bin/env python3
"""Check `dnntrace fusion` on real PyTorch runs against PyTorch's profiler.

    check_fusion.py BUILD_DIR OUTDIR [--workloads a,b,...] [--iters N] [--warmup N]

For each workload it runs, with the same iterations:
  A. under `dnntrace record`, then `dnntrace fusion --format json`;
  B. under torch.profiler alone (the timed iterations).
Then:
  1. the chains the workload is built to show are found, fusable on this GPU:
     resnet50: convolution -> batch norm -> ReLU (and the residual add);
     convbias: convolution -> bias add -> ReLU; mlp: matmul -> GELU;
     sdpa: nothing fusable (attention already runs as one fused graph);
  2. the saving's kernel time is the measured time of the kernels it would remove: for every
     removed step outside cuDNN, dnntrace's GPU time against the profiler's mean duration of
     the kernels of that name and launch shape, times the step's kernel count (10%);
  3. the DRAM estimate (bytes not moved, at the run's bandwidth) is shown beside it.
Prints a table per workload and a last line `fusion: ...`; exit 0 when all agree, 1
otherwise, 77 without a GPU.
"""

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys

from check_report import run, workload

HERE = os.path.dirname(os.path.abspath(__file__))

# what each workload must show: (pattern, a step every such chain has)
EXPECT = {
    "resnet50": [("convolution + batch norm + ReLU", "ReLU"),
                 ("convolution + batch norm + add + ReLU", "residual add")],
    "convbias": [("convolution forward + pointwise epilogue", "bias add"),
                 ("convolution forward + pointwise epilogue", "ReLU")],
    "mlp": [("matmul + pointwise epilogue", "GELU")],
    "sdpa": [],
}


def needle(step):
    """What identifies a step's kernels in the profiler's (demangled) names."""
    d = step["detail"] or ""
    if "[" in d and d.endswith("]"):
        return d[d.index("[") + 1:-1]
    return d


def check(dnntrace, out, name, iters, warmup, tol):
    tdir = os.path.join(out, name + ".fusion")
    shutil.rmtree(tdir, ignore_errors=True)
    os.makedirs(tdir)
    rc = run([dnntrace, "record", "-q", "-o", os.path.join(tdir, "%p.dnnt"), "--"]
             + workload(name, iters, warmup), {}, os.path.join(out, name + ".fusion.log"))
    if rc == 77:
        sys.exit(77)
    if rc:
        sys.exit("%s under dnntrace failed (%d)" % (name, rc))
    traces = [os.path.join(tdir, f) for f in sorted(os.listdir(tdir))]
    fz = json.loads(subprocess.run([dnntrace, "fusion", "--format", "json"] + traces,
                                   capture_output=True, text=True, check=True).stdout)["fusion"]
    prof = os.path.join(out, name + ".fusion.profile.json")
    rc = run(workload(name, iters, warmup), {"DNNTRACE_WL_PROFILE": prof},
             os.path.join(out, name + ".fusion.profile.log"))
    if rc:
        sys.exit("%s under the profiler failed (%d)" % (name, rc))
    with open(prof) as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("cat") == "kernel"]
    durs = collections.defaultdict(list)
    for e in events:
        a = e.get("args", {})
        durs[(a.get("grid", [0])[0], a.get("block", [0])[0])].append((e["name"], e["dur"] * 1e3))

    opps = [o for o in fz["opportunities"] if o["status"] == "fusable"]
    ok = True
    print("%s: %d fusable chains (%d blocked), %d already fused; bandwidth %.2f TB/s (%s)"
          % (name, len(opps), len(fz["opportunities"]) - len(opps), len(fz["already_fused"]),
             fz["bandwidth"] / 1e12, fz["bandwidth_source"]))
    for pattern, step in EXPECT[name]:
        found = [o for o in opps if o["pattern"] == pattern
                 and any(s["what"] == step and s["removed"] for s in o["steps"])]
        print("  expected %-42s with %-13s %s" % (pattern, step, "found %d" % len(found) if found else "MISSING"))
        ok &= bool(found)
    if not EXPECT[name] and opps:
        print("  expected nothing fusable, found: " + "; ".join(o["pattern"] for o in opps))
        ok = False
    # removed kernel time, dnntrace against the profiler
    # a batch norm statistics step also holds the running-stat updates between it and the
    # apply: one more kernel per time, of any launch shape
    updates = [d for ks in durs.values() for nm, d in ks if "batch_norm_update_stats" in nm]
    d_ns = p_ns = unverified = 0
    for o in opps:
        for s in o["steps"]:
            extra = s["kernels"] - o["count"]
            if not s["removed"] or s["cudnn"] or (extra and not (extra == o["count"] and updates)):
                unverified += s["gpu_ns"] if s["removed"] else 0
                continue
            n = needle(s)
            hits = [d for nm, d in durs.get((s.get("grid_x"), s.get("block_x")), []) if n in nm]
            if not hits:
                unverified += s["gpu_ns"]
                continue
            d_ns += s["gpu_ns"]
            p_ns += o["count"] * sum(hits) / len(hits)
            if extra:
                p_ns += extra * sum(updates) / len(updates)
    saving = sum(o["saving_ns"] for o in opps)
    removed = sum(o["removed_ns"] for o in opps)
    dram = sum(o["bytes_ns"] for o in opps)
    if opps:
        ratio = d_ns / p_ns if p_ns else float("inf")
        print("  removed kernels: dnntrace %.3f ms, profiler %.3f ms (same kernels): ratio %.3f;"
              " %.3f ms not matched by name and shape" % (d_ns / 1e6, p_ns / 1e6, ratio, unverified / 1e6))
        print("  saving %.3f ms of %.3f ms removed; DRAM estimate %.3f ms (%.2f of the removed time)"
              % (saving / 1e6, removed / 1e6, dram / 1e6, dram / removed if removed else 0))
        ok &= abs(ratio - 1) <= tol and d_ns >= 0.8 * (d_ns + unverified)
    for f in fz["already_fused"][:3]:
        print("  already fused: %d x %s, %.3f ms, %.1f MB kept on chip each"
              % (f["count"], f["what"], f["gpu_ns"] / 1e6, f["bytes_kept"] / 1e6))
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("outdir")
    ap.add_argument("--workloads", default="resnet50,convbias,mlp,sdpa")
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--tolerance", type=float, default=0.10)
    args = ap.parse_args()
    dnntrace = os.path.join(args.build, "tools", "dnntrace")
    os.makedirs(args.outdir, exist_ok=True)
    results = {}
    for name in args.workloads.split(","):
        results[name] = check(dnntrace, args.outdir, name, args.iters, args.warmup, args.tolerance)
    print("fusion: " + ", ".join("%s %s" % (k, "agrees" if v else "DIFFERS") for k, v in results.items()))
    return 0 if all(results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
