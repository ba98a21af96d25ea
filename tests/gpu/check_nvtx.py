#!/usr/bin/env python3
"""Check NVTX ranges recorded on a GPU against PyTorch's profiler.

    check_nvtx.py DNNTRACE NVTX_PROG OUTDIR

  1. tests/shim/nvtx-prog (NVTX v3 in C around cuDNN calls) under `dnntrace record` on the GPU:
     every push, pop, start, end, mark and name recorded, as on the CPU.
  2. wl_nvtx.py --mode nvtx under `dnntrace record`: training steps in NVTX ranges "step",
     every aten op in a range of its own (emit_nvtx); `dnntrace report --format json`.
  3. wl_nvtx.py --mode profile, the same steps under torch.profiler alone (another process).
Compared: the number of steps and of each cuDNN-backed aten op's ranges with the profiler's
counts (equal), and their GPU time (the kernels of the cuDNN calls made inside them) with the
profiler's device time of the op's kernels that are not PyTorch's own (within --tolerance, 15%:
two runs; the op's whole device time is shown beside, with PyTorch's kernels the trace ties to
no call); the steps' GPU time lies
between their forward ops' and all their ops': a push range holds its own thread's calls, and
autograd may run the backward ops on a thread of its own. Prints a table and a last line
`nvtx: ...`; exit 0 when all agree, 1 otherwise, 77 without a GPU.
"""

import argparse
import collections
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# aten ops that call cuDNN in wl_small_cnn's network (fp32, NCHW)
OPS = ["aten::cudnn_convolution", "aten::convolution_backward", "aten::cudnn_batch_norm",
       "aten::cudnn_batch_norm_backward"]
STEPS = 5


def run(cmd, **kw):
    print("$ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, text=True, capture_output=True, **kw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dnntrace")
    ap.add_argument("nvtx_prog")
    ap.add_argument("outdir")
    ap.add_argument("--tolerance", type=float, default=0.15)
    a = ap.parse_args()
    if not os.path.exists("/dev/nvidiactl"):
        print("SKIP: no NVIDIA GPU here")
        return 77
    os.makedirs(a.outdir, exist_ok=True)
    for f in ("prog.dnnt", "torch.dnnt", "profile.json"):  # record never overwrites a trace
        if os.path.exists(os.path.join(a.outdir, f)):
            os.unlink(os.path.join(a.outdir, f))
    bad = []

    # 1. the C program
    t = os.path.join(a.outdir, "prog.dnnt")
    r = run([a.dnntrace, "record", "-q", "-o", t, "--", a.nvtx_prog])
    if r.returncode == 77 or "no GPU" in r.stderr:
        return 77
    if r.returncode or r.stdout.strip() != "nvtx-prog: ok":
        bad.append("nvtx-prog failed: %s %s" % (r.stdout, r.stderr[-500:]))
    else:
        dump = run([a.dnntrace, "dump", t]).stdout
        events = collections.Counter(l.split(" event=")[1].split()[0] for l in dump.splitlines()
                                     if l.startswith("NVTX "))
        want = {"1": 9, "2": 9, "3": 1, "4": 1, "5": 3, "6": 1, "7": 1}
        print("nvtx-prog events: %s" % dict(sorted(events.items())))
        if dict(events) != want:
            bad.append("nvtx-prog: events %s, expected %s" % (dict(events), want))
        info = run([a.dnntrace, "info", t]).stdout
        if "NVTX ranges: on" not in info:
            bad.append("nvtx-prog: info does not say NVTX ranges are on")

    # 2. and 3. the PyTorch workload, recorded and profiled
    wl = os.path.join(HERE, "wl_nvtx.py")
    t = os.path.join(a.outdir, "torch.dnnt")
    r = run([a.dnntrace, "record", "-q", "-o", t, "--", sys.executable, wl, "--mode", "nvtx",
             "--iters", str(STEPS)])
    if r.returncode == 77:
        return 77
    if r.returncode:
        print(r.stderr[-2000:])
        return 1
    report = json.loads(run([a.dnntrace, "report", "--format", "json", t]).stdout)
    prof_path = os.path.join(a.outdir, "profile.json")
    r = run([sys.executable, wl, "--mode", "profile", "--iters", str(STEPS), "--out", prof_path])
    if r.returncode:
        print(r.stderr[-2000:])
        return 1
    prof = json.load(open(prof_path))

    # emit_nvtx names each op's range "aten::name, seq = N, ...": one name per op
    ranges = collections.defaultdict(lambda: [0, 0])
    for x in report.get("ranges", []):
        op = x["name"].split(",")[0]
        ranges[op][0] += x["count"]
        ranges[op][1] += x["gpu_ns"]
    print("%-34s %6s %6s %10s %10s %7s %10s" % ("range", "count", "prof.", "GPU ns", "prof. ns", "diff",
                                               "all kernels"))
    rows = [("step", "step")] + [(o, o) for o in OPS]
    for name, key in rows:
        c, g = ranges.get(name, [0, 0])
        p = prof.get(key, {"count": 0, "gpu_ns": 0, "cudnn_gpu_ns": 0})
        want = p["cudnn_gpu_ns"]
        diff = (g - want) / want if want else float("inf")
        print("%-34s %6d %6d %10d %10d %+6.1f%% %10d %s" % (name, c, p["count"], g, want, 100 * diff,
                                                         p["gpu_ns"], p.get("other_kernels", "")))
        if c != p["count"] or (name == "step" and c != STEPS):
            bad.append("%s: %d ranges, the profiler %d ops" % (name, c, p["count"]))
        if name != "step" and abs(diff) > a.tolerance:
            bad.append("%s: GPU time %d ns, the profiler %d ns" % (name, g, want))
    # the steps' GPU time: their forward ops' at least (same thread), all ops' at most
    fwd_ns = ranges[OPS[0]][1] + ranges[OPS[2]][1]
    ops_ns = sum(ranges[o][1] for o in OPS)
    step_ns = ranges["step"][1]
    print("steps' GPU time %d ns; their forward cuDNN ops' %d ns, all %d ns" % (step_ns, fwd_ns, ops_ns))
    if not 0.98 * fwd_ns <= step_ns <= 1.02 * ops_ns:
        bad.append("steps' GPU time %d ns is outside their ops' %d..%d ns" % (step_ns, fwd_ns, ops_ns))

    for b in bad:
        print("MISMATCH: " + b)
    print("nvtx: %s" % ("all agree" if not bad else "%d mismatches" % len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
