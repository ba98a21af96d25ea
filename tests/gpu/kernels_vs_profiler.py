#!/usr/bin/env python3
"""Check dnntrace's kernel attribution against PyTorch's profiler.

    kernels_vs_profiler.py BUILD_DIR OUTDIR WORKLOAD [--iters N] [--warmup N]

Runs the PyTorch workload tests/gpu/wl_WORKLOAD.py twice with the same iterations:
  A. under `dnntrace record`, with a marker cuDNN call before and after the timed iterations;
  B. under torch.profiler (no dnntrace), around the same iterations.
From A it takes the kernels that dnntrace attributes to cuDNN calls made between the markers;
from B the kernels the profiler shows under cuDNN-backed aten ops (names with "cudnn", and
aten::convolution_backward, which calls cuDNN directly). The two multisets of kernel names must
be equal. It also checks, in A, that no attributed kernel starts before the call that launched it
(which a wrong attribution would show), and that each call's GPU time is the sum of its kernels.
With --both it then runs the workload under dnntrace AND the profiler at once, and reports what
each of them saw (coexistence).

Prints a table and a last line `kernels: ...`; exit 0 when the multisets agree, 1 otherwise, 77
without a GPU. Needs c++filt for demangling dnntrace's (mangled) kernel names.
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CUDNN_OP = re.compile(r"cudnn|^aten::convolution_backward$")
MARKER = re.compile(r"cudnnSetTensor4dDescriptor\(.* n=7, c=7, h=7, w=7\) = CUDNN_STATUS_SUCCESS$")
API = re.compile(r"^API_CALL seq=(\d+) tid=\d+ t=([\d.]+) dur=(\d+)ns (\w+)\(")
CORR = re.compile(r"^CORR call=(\d+) corr=(\d+)")
KERNEL = re.compile(r'^KERNEL t=([\d.-]+) dur=(\d+)ns (call|corr)=(\d+) .* "(.*)"$')


def run(cmd, env_extra, log):
    env = dict(os.environ, **env_extra)
    with open(log, "w") as f:
        return subprocess.run(cmd, env=env, stdout=f, stderr=subprocess.STDOUT).returncode


def demangle(names):
    names = list(names)
    try:
        out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True,
                             text=True, check=True).stdout.split("\n")
        return dict(zip(names, out))
    except (OSError, subprocess.CalledProcessError):
        return {n: n for n in names}


def dnntrace_kernels(dnntrace, traces):
    """Kernels attributed to calls between the two markers, and the attribution checks."""
    calls, kernels, markers = {}, [], []
    for trace in traces:
        dump = subprocess.run([dnntrace, "dump", trace], capture_output=True, text=True,
                              check=True).stdout
        for line in dump.splitlines():
            m = API.match(line)
            if m:
                seq, t, dur, name = int(m[1]), float(m[2]), int(m[3]), m[4]
                calls[seq] = (name, t, dur)
                if MARKER.search(line):
                    markers.append(seq)
                continue
            m = KERNEL.match(line)
            if m and m[3] == "call":
                kernels.append((int(m[4]), float(m[1]), int(m[2]), m[5]))
    if len(markers) < 2:
        sys.exit("no pair of marker calls in the trace (found %d)" % len(markers))
    lo, hi = markers[0], markers[-1]
    inside = [k for k in kernels if lo < k[0] < hi]
    early = [k for k in inside if k[0] in calls and k[1] + 2e-6 < calls[k[0]][1]]
    per_call = collections.defaultdict(int)
    for call, _, dur, _ in inside:
        per_call[call] += dur
    return inside, early, per_call, calls


def profiler_kernels(path):
    """Kernels the profiler shows under cuDNN-backed aten ops."""
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    op_of = {}
    for e in events:
        if e.get("cat") == "cpu_op":
            op_of[e.get("args", {}).get("External id")] = e["name"]
    names, total = collections.Counter(), 0
    for e in events:
        if e.get("cat") != "kernel":
            continue
        total += 1
        op = op_of.get(e.get("args", {}).get("External id"), "")
        if CUDNN_OP.search(op):
            names[e["name"]] += 1
    return names, total


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("outdir")
    ap.add_argument("workload")
    ap.add_argument("--iters", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--both", action="store_true", help="also run dnntrace and the profiler together")
    args = ap.parse_args()
    dnntrace = os.path.join(args.build, "tools", "dnntrace")
    out = os.path.abspath(args.outdir)
    os.makedirs(out, exist_ok=True)
    wl = [sys.executable, os.path.join(HERE, "wl_%s.py" % args.workload), "--iters",
          str(args.iters), "--warmup", str(args.warmup)]
    name = args.workload

    tdir = os.path.join(out, name + ".kv")
    os.makedirs(tdir, exist_ok=True)
    rc = run([dnntrace, "record", "-q", "-o", os.path.join(tdir, "%p.dnnt"), "--"] + wl,
             {"DNNTRACE_WL_MARKER": "1"}, os.path.join(out, name + ".kv.log"))
    if rc == 77:
        sys.exit(77)
    if rc:
        sys.exit("dnntrace run failed (%d)" % rc)
    prof = os.path.join(out, name + ".profile.json")
    rc = run(wl, {"DNNTRACE_WL_PROFILE": prof}, os.path.join(out, name + ".profile.log"))
    if rc:
        sys.exit("profiler run failed (%d)" % rc)

    traces = [os.path.join(tdir, f) for f in sorted(os.listdir(tdir))]
    inside, early, per_call, calls = dnntrace_kernels(dnntrace, traces)
    dem = demangle({k[3] for k in inside})
    ours = collections.Counter(dem[k[3]] for k in inside)
    theirs, prof_total = profiler_kernels(prof)

    width = 100
    print("%8s %8s  %s" % ("dnntrace", "profiler", "kernel (attributed to cuDNN)"))
    for kname in sorted(set(ours) | set(theirs), key=lambda n: -max(ours[n], theirs[n])):
        mark = "" if ours[kname] == theirs[kname] else "  <-- differs"
        print("%8d %8d  %s%s" % (ours[kname], theirs[kname], kname[:width], mark))
    by_fn = collections.Counter()
    for call in per_call:
        by_fn[calls[call][0] if call in calls else "?"] += 1
    print("calls with kernels, by function: %s" % dict(by_fn))
    print("GPU time per call = sum of its kernels: %d calls, %.3f ms in all"
          % (len(per_call), sum(per_call.values()) / 1e6))
    if early:
        print("%d kernels start before the call they are attributed to, e.g. %s" % (len(early), early[0]))
    same = ours == theirs
    print("kernels: dnntrace %d, profiler %d (of %d kernels it saw), %s; %d start before their call"
          % (sum(ours.values()), sum(theirs.values()), prof_total,
             "same names and counts" if same else "DIFFERENT", len(early)))

    if args.both:
        bdir = os.path.join(out, name + ".both")
        os.makedirs(bdir, exist_ok=True)
        bprof = os.path.join(out, name + ".both.profile.json")
        rc = run([dnntrace, "record", "-q", "-o", os.path.join(bdir, "%p.dnnt"), "--"] + wl,
                 {"DNNTRACE_WL_MARKER": "1", "DNNTRACE_WL_PROFILE": bprof},
                 os.path.join(out, name + ".both.log"))
        b_theirs, b_total = profiler_kernels(bprof) if os.path.exists(bprof) else ({}, 0)
        btraces = [os.path.join(bdir, f) for f in sorted(os.listdir(bdir))]
        n_k, states = 0, []
        for t in btraces:
            dump = subprocess.run([dnntrace, "dump", t], capture_output=True, text=True).stdout
            n_k += dump.count("\nKERNEL ")
            states += [l for l in dump.splitlines() if l.startswith("GPU_STATE")]
        print("together: exit %d; profiler saw %d kernels (%d under cuDNN ops, %d alone); "
              "dnntrace recorded %d kernels in %d file(s)"
              % (rc, b_total, sum(b_theirs.values()), sum(theirs.values()), n_k, len(btraces)))
        for line in states:
            print("  " + line)
        # the profiler must see what it sees without dnntrace
        if b_theirs != theirs:
            same = False
    sys.exit(0 if same and not early else 1)


if __name__ == "__main__":
    main()
