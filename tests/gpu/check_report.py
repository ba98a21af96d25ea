#!/usr/bin/env python3
"""Check `dnntrace report` against PyTorch's profiler and Nsight Compute.

    check_report.py BUILD_DIR OUTDIR [--workloads a,b,...] [--ncu]

For each PyTorch workload (tests/gpu/wl_*.py) it runs, with the same iterations:
  A. under `dnntrace record`, with a marker cuDNN call around the timed iterations;
  B. under torch.profiler alone, around the same iterations.
From A it takes the op executions between the markers (`dnntrace ops --format json`) and adds
their GPU time up by kind; from B the kernels the profiler shows under cuDNN-backed aten ops,
added up by op. Convolution backward data and filter are one aten op (convolution_backward), RNN
backward data and weights one too, so those kinds are compared together. The two runs are
separate processes: their times agree to within run-to-run noise (--tolerance, 10%).

With --ncu it also runs wl_bandwidth.py (batch norm at inference on a 196 MiB fp16 tensor,
memory-bound) under `dnntrace record` and under Nsight Compute (clocks not locked; DRAM bytes
read plus bytes written into L2 by the batch norm kernels, DRAM bytes written shown too), and
compares the bytes the report says each execution must move with the bytes ncu measured (5%),
and shows the report's bandwidth beside ncu's.

Prints a table per check and a last line `report: ...`; exit 0 when all agree, 1 otherwise,
77 without a GPU.
"""

import argparse
import collections
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MARKER = re.compile(r"^API_CALL seq=(\d+) .*cudnnSetTensor4dDescriptor\(.* n=7, c=7, h=7, w=7\) = CUDNN_STATUS_SUCCESS$")

# aten ops that run cuDNN, and the report's kinds they stand for
ATEN = [
    (re.compile(r"^aten::cudnn_convolution$"), "conv_fwd"),
    (re.compile(r"^aten::convolution_backward$"), "conv_bwd"),
    (re.compile(r"^aten::cudnn_batch_norm$"), "norm_fwd"),
    (re.compile(r"^aten::cudnn_batch_norm_backward$"), "norm_bwd"),
    (re.compile(r"^aten::_cudnn_rnn$"), "rnn_fwd"),
    (re.compile(r"^aten::_cudnn_rnn_backward$"), "rnn_bwd"),
    (re.compile(r"cudnn_attention.*backward"), "attention_bwd"),
    (re.compile(r"cudnn_attention"), "attention_fwd"),
]
GROUP = {"conv_bwd_data": "conv_bwd", "conv_bwd_filter": "conv_bwd",
         "rnn_bwd_data": "rnn_bwd", "rnn_bwd_weights": "rnn_bwd"}


def run(cmd, env_extra, log):
    env = dict(os.environ, **env_extra)
    with open(log, "w") as f:
        return subprocess.run(cmd, env=env, stdout=f, stderr=subprocess.STDOUT).returncode


def workload(name, iters, warmup):
    return [sys.executable, os.path.join(HERE, "wl_%s.py" % name), "--iters", str(iters),
            "--warmup", str(warmup)]


def dnntrace_by_kind(dnntrace, traces):
    """GPU time and op count by kind group, for the ops between the markers."""
    ns, count = collections.Counter(), collections.Counter()
    for trace in traces:
        dump = subprocess.run([dnntrace, "dump", trace], capture_output=True, text=True,
                              check=True).stdout
        marks = [int(m[1]) for m in map(MARKER.match, dump.splitlines()) if m]
        if len(marks) < 2:
            continue
        ops = json.loads(subprocess.run([dnntrace, "ops", "--format", "json", "--with-warmup", trace],
                                        capture_output=True, text=True, check=True).stdout)
        for op in ops["ops"]:
            # cuDNN's ops only: the profiler's side is the aten ops that run cuDNN
            if marks[0] < op["seq"] < marks[-1] and op["kernels"] and op["api"].startswith("cudnn"):
                k = GROUP.get(op["kind"], op["kind"])
                ns[k] += op["gpu_ns"]
                count[k] += 1
    return ns, count


def profiler_by_kind(path):
    """Kernel time and kernels under cuDNN-backed aten ops, by kind group."""
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    op_of = {e.get("args", {}).get("External id"): e["name"]
             for e in events if e.get("cat") == "cpu_op"}
    ns, count = collections.Counter(), collections.Counter()
    for e in events:
        if e.get("cat") != "kernel":
            continue
        op = op_of.get(e.get("args", {}).get("External id"), "")
        for pat, kind in ATEN:
            if pat.search(op):
                ns[kind] += int(round(e["dur"] * 1000))  # us -> ns
                count[kind] += 1
                break
    return ns, count


def check_profiler(dnntrace, out, name, iters, warmup, tol):
    tdir = os.path.join(out, name + ".report")
    shutil.rmtree(tdir, ignore_errors=True)
    os.makedirs(tdir)
    wl = workload(name, iters, warmup)
    rc = run([dnntrace, "record", "-q", "-o", os.path.join(tdir, "%p.dnnt"), "--"] + wl,
             {"DNNTRACE_WL_MARKER": "1"}, os.path.join(out, name + ".report.log"))
    if rc == 77:
        sys.exit(77)
    if rc:
        sys.exit("%s under dnntrace failed (%d)" % (name, rc))
    prof = os.path.join(out, name + ".report.profile.json")
    rc = run(wl, {"DNNTRACE_WL_PROFILE": prof}, os.path.join(out, name + ".report.profile.log"))
    if rc:
        sys.exit("%s under the profiler failed (%d)" % (name, rc))
    traces = [os.path.join(tdir, f) for f in sorted(os.listdir(tdir))]
    ours, our_n = dnntrace_by_kind(dnntrace, traces)
    theirs, their_n = profiler_by_kind(prof)
    ok = bool(ours)
    print("%s (%d timed iterations)" % (name, iters))
    print("  %-15s %12s %12s %7s   %s" % ("kind", "dnntrace", "profiler", "ratio", "ops / kernels"))
    for kind in sorted(set(ours) | set(theirs), key=lambda k: -max(ours[k], theirs[k])):
        ratio = ours[kind] / theirs[kind] if theirs[kind] else float("inf")
        good = abs(ratio - 1) <= tol
        ok = ok and good
        print("  %-15s %9.3f ms %9.3f ms %7.3f   %d / %d%s"
              % (kind, ours[kind] / 1e6, theirs[kind] / 1e6, ratio, our_n[kind], their_n[kind],
                 "" if good else "  <-- differs"))
    return ok


def ncu_rows(text):
    """(kernel name, metric, value) from `ncu --csv` output."""
    start = text.find('"ID"')
    rows = csv.DictReader(io.StringIO(text[start:] if start >= 0 else ""))
    for r in rows:
        try:
            yield r["Kernel Name"], r["Metric Name"], r["Metric Unit"], float(r["Metric Value"].replace(",", ""))
        except (KeyError, ValueError):
            continue


def check_ncu(dnntrace, out, tol):
    ncu = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
    if not os.path.exists(ncu):
        print("ncu: not found, bandwidth not checked")
        return False
    tdir = os.path.join(out, "bandwidth.report")
    shutil.rmtree(tdir, ignore_errors=True)
    os.makedirs(tdir)
    wl = workload("bandwidth", 3, 1)
    rc = run([dnntrace, "record", "-q", "-o", os.path.join(tdir, "%p.dnnt"), "--"] + wl, {},
             os.path.join(out, "bandwidth.report.log"))
    if rc:
        sys.exit("wl_bandwidth under dnntrace failed (%d)" % rc)
    traces = [os.path.join(tdir, f) for f in sorted(os.listdir(tdir))]
    rep = json.loads(subprocess.run([dnntrace, "report", "--format", "json"] + traces,
                                    capture_output=True, text=True, check=True).stdout)
    bn = [o for o in rep["ops"] if o["kind"] == "norm_fwd"]
    if not bn:
        print("bandwidth: no cuDNN batch norm in the trace (PyTorch did not use cuDNN)")
        return False
    op = max(bn, key=lambda o: o["gpu_ns"])
    log = os.path.join(out, "bandwidth.ncu.csv")
    # Clocks as in the traced run (ncu locks them to base by default), caches flushed before each
    # kernel. Every byte a kernel writes goes through L2 (lts write sectors from the SMs) but may
    # still sit there, dirty, when the kernel ends: DRAM write counts those late or never. So the
    # bytes the kernel moved are its DRAM reads plus its L2 writes; DRAM writes are shown too.
    metrics = ["dram__bytes_read.sum", "dram__bytes_write.sum",
               "lts__t_sectors_srcunit_tex_op_write.sum", "gpu__time_duration.sum"]
    res = subprocess.run([ncu, "--csv", "--clock-control", "none", "--metrics", ",".join(metrics),
                          "-k", "regex:(?i)bn|batch_?norm", "-c", "4"] + wl,
                         capture_output=True, text=True)
    with open(log, "w") as f:
        f.write(res.stdout + res.stderr)
    per = collections.defaultdict(dict)
    launch = 0
    for name, metric, unit, value in ncu_rows(res.stdout):
        scale = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "sector": 32, "nsecond": 1,
                 "usecond": 1e3, "msecond": 1e6}.get(unit, 1)
        if metric == metrics[0]:
            launch += 1
        per[launch][metric] = value * scale
    if not per:
        print("ncu: no batch norm kernel profiled (see %s)" % log)
        return False

    def median(metric):
        v = sorted(p.get(metric, 0) for p in per.values())
        return v[len(v) // 2]

    read_b, write_b, l2w_b, dur_ns = (median(m) for m in metrics)
    moved = read_b + (l2w_b or write_b)
    ratio = op["bytes"] / moved if moved else float("inf")
    print("bandwidth (batch norm inference, %s)" % op["brief"])
    print("  bytes per execution: report %d; ncu DRAM read %d + L2 write %d = %d (DRAM write %d): ratio %.3f"
          % (op["bytes"], read_b, l2w_b, moved, write_b, ratio))
    print("  bandwidth: report %.0f GB/s (median %.1f us), ncu %.0f GB/s (%.1f us)"
          % (op["achieved_bandwidth"] / 1e9, op["median_ns"] / 1e3,
             moved / dur_ns if dur_ns else 0, dur_ns / 1e3))
    return abs(ratio - 1) <= tol


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("outdir")
    ap.add_argument("--workloads", default="resnet50,sdpa,small_cnn,lstm")
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--tolerance", type=float, default=0.10)
    ap.add_argument("--ncu", action="store_true")
    args = ap.parse_args()
    if not shutil.which("nvidia-smi"):
        print("SKIP: no nvidia-smi: no GPU here", file=sys.stderr)
        sys.exit(77)
    dnntrace = os.path.join(args.build, "tools", "dnntrace")
    out = os.path.abspath(args.outdir)
    os.makedirs(out, exist_ok=True)
    results = {}
    for name in args.workloads.split(","):
        results[name] = check_profiler(dnntrace, out, name, args.iters, args.warmup, args.tolerance)
    if args.ncu:
        results["bandwidth"] = check_ncu(dnntrace, out, 0.05)
    print("report: " + ", ".join("%s %s" % (k, "agrees" if v else "DIFFERS") for k, v in results.items()))
    sys.exit(0 if all(results.values()) else 1)


if __name__ == "__main__":
    main()
