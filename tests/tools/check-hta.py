#!/usr/bin/env python3
"""`dnntrace export --format chrome` read as Holistic Trace Analysis (HTA,
facebookresearch/HolisticTraceAnalysis) reads a Kineto trace, its rules
written out here (HTA itself needs pandas and PyTorch's stack), and checked
against `dnntrace report --format json` of the same traces.

usage: check-hta.py DNNTRACE SYNTH_TRACE API_LISTING SOURCE_ROOT

The rules, each named after the HTA code it mirrors:

- hta/common/trace_parser.py, _compress_df(): `df.dropna(subset=["dur",
  "cat"])` then rows of cat "Trace" dropped: an event with a duration and
  no category is lost to every analysis. So every event with `dur` has a
  `cat`, and what is kept is what the report counts.
- hta/configs/parser_config.py, DEFAULT_MIN_REQUIRED_COLS: ts, dur, name,
  cat, pid, tid on every event kept.
- hta/configs/event_args_formats/event_args_1.0.0.yaml: the arguments HTA
  lifts into columns by their raw names: "correlation", "device",
  "stream", "External id", "grid", "block", "registers per thread",
  "shared memory", "bytes", "memory bandwidth (GB/s)"; integers, grid and
  block lists of three.
- hta/common/trace.py, GPU kernels by category (Kineto's "kernel",
  "gpu_memcpy", "gpu_memset"); CPU ops ("cpu_op") tied to the GPU work
  they launched by "External id"; runtime events ("cuda_runtime") to
  theirs by "correlation".
- the trace's rank from "distributedInfo"."rank" (HTA's TraceCollection).

Exits 1 with a line per failure.
"""
import json
import os
import subprocess
import sys
import tempfile

GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}
REQUIRED = ("ts", "dur", "name", "cat", "pid", "tid")
KERNEL_ARGS = ("correlation", "device", "stream", "grid", "block",
               "registers per thread", "shared memory")
COPY_ARGS = ("correlation", "device", "stream", "bytes")

failures = []


def fail(what):
    failures.append(what)
    print("FAIL:", what)


def kept(events):
    """The rows HTA's parser keeps."""
    return [e for e in events
            if e.get("dur") is not None and e.get("cat") is not None
            and e["cat"] != "Trace"]


def check_trace(label, doc, report, rank=None):
    events = doc["traceEvents"]
    for e in events:
        if "dur" in e and not isinstance(e.get("cat"), str):
            fail(f"{label}: '{e.get('name')}' has a duration and no "
                 "category: HTA drops it")
            break
    rows = kept(events)
    for e in rows:
        missing = [c for c in REQUIRED if c not in e]
        if missing:
            fail(f"{label}: '{e['name']}' lacks {missing}")
            break
    gpu = [e for e in rows if e["cat"] in GPU_CATS]
    ns = sum(round(float(e["dur"]) * 1000) for e in gpu)
    if ns != report["gpu"]["total_ns"]:
        fail(f"{label}: GPU work HTA keeps: {ns} ns, report "
             f"{report['gpu']['total_ns']}")
    kernels = [e for e in gpu if e["cat"] == "kernel"]
    want = sum(f["kernels"] for f in report["files"])
    if len(kernels) != want:
        fail(f"{label}: {len(kernels)} kernels, report {want}")
    for e in gpu:
        args = e.get("args", {})
        need = KERNEL_ARGS if e["cat"] == "kernel" else COPY_ARGS
        bad = [a for a in need if a not in args]
        bad += [a for a in ("grid", "block") if a in need and not (
            isinstance(args[a], list) and len(args[a]) == 3
            and all(isinstance(v, int) for v in args[a]))]
        bad += [a for a in need if a not in ("grid", "block")
                and a in args and not isinstance(args[a], int)]
        if bad:
            fail(f"{label}: {e['cat']} '{e['name']}': arguments {bad} "
                 "missing or not as HTA reads them")
            break
    # CPU ops and what they launched, by External id
    ops = {(e["pid"], e["args"]["External id"]) for e in rows
           if e["cat"] == "cpu_op" and "External id" in e.get("args", {})}
    calls = sum(a["calls"] for a in report["apis"])
    n_ops = sum(e["cat"] == "cpu_op" and not e["args"].get("by dnntrace")
                for e in rows)
    if n_ops != calls:
        fail(f"{label}: {n_ops} cpu_op events, report {calls} calls")
    by_call = [e for e in gpu if "External id" in e["args"]]
    orphans = [e for e in by_call
               if (e["pid"], e["args"]["External id"]) not in ops]
    if orphans:
        fail(f"{label}: {len(orphans)} GPU events name an External id no "
             "cpu_op has")
    cudnn_ns = sum(round(float(e["dur"]) * 1000) for e in by_call)
    if cudnn_ns != report["gpu"]["cudnn_ns"]:
        fail(f"{label}: GPU work tied to cpu_ops: {cudnn_ns} ns, report "
             f"{report['gpu']['cudnn_ns']}")
    # graph launches and their kernels, by correlation
    runtime = {(e["pid"], e["args"]["correlation"]) for e in rows
               if e["cat"] == "cuda_runtime"}
    if len(runtime) != report["graphs"]["launches"]:
        fail(f"{label}: {len(runtime)} cuda_runtime launches, report "
             f"{report['graphs']['launches']}")
    replayed = [e for e in kernels if "graph" in e["args"]]
    unmatched = sum((e["pid"], e["args"]["correlation"]) not in runtime
                    for e in replayed)
    if unmatched > doc["otherData"]["kernels_without_flow"]:
        fail(f"{label}: {unmatched} graph kernels without their launch")
    flows = [e for e in events if e["ph"] in "sf"]
    if any(e.get("cat") != "ac2g" for e in flows):
        fail(f"{label}: arrows not in Kineto's category ac2g")
    props = doc.get("deviceProperties", [])
    if report.get("devices") and not all(
            isinstance(p.get("id"), int) and p.get("name") and
            isinstance(p.get("numSms"), int) for p in props):
        fail(f"{label}: deviceProperties without id, name, numSms")
    got = doc.get("distributedInfo", {}).get("rank")
    if got != rank:
        fail(f"{label}: distributedInfo.rank {got!r}, expected {rank!r}")
    print(f"ok   {label}: {len(rows)} events kept, {len(kernels)} kernels, "
          f"{len(ops)} cpu_ops, {len(runtime)} launches")


def main():
    dnntrace, synth, listing, root = sys.argv[1:5]
    with tempfile.TemporaryDirectory() as tmp:
        job = os.path.join(tmp, "job")
        os.mkdir(job)
        subprocess.run([synth, listing, job, "--ranks", "2", "--steps", "4"],
                       check=True, capture_output=True)
        cases = [(os.path.join(root, "tests", "data", t + ".dnnt"), None)
                 for t in ("h200-sample", "cuda-graph", "llama")]
        cases += [(os.path.join(job, "rank1.dnnt"), 1), (job, None)]
        for i, (path, rank) in enumerate(cases):
            out = os.path.join(tmp, "e%d.json" % i)
            subprocess.run([dnntrace, "export", "--format", "chrome", "-o",
                            out, path], check=True, capture_output=True)
            report = json.loads(subprocess.run(
                [dnntrace, "report", "--format", "json", "--with-warmup",
                 path],
                check=True, capture_output=True, text=True).stdout)
            with open(out) as f:
                check_trace(os.path.basename(path), json.load(f), report,
                            rank)
    if failures:
        print(f"{len(failures)} failures")
        sys.exit(1)


main()
