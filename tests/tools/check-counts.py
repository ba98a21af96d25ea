#!/usr/bin/env python3
"""One quantity, one number: every reading command must print the same count
for the same thing (analyzer/COUNTS.md defines them).

usage: check-counts.py DNNTRACE SYNTH_TRACE SOURCE_ROOT

Each trace of tests/data and a few synthetic ones (a job's ranks, CUDA
graphs, sampled GPU recording) is read by `info`, `report --format json`,
`ops --format json` (with and without --plans), `dump`, `diff --format json`
of the trace against itself, `fusion --format json` and, where the sqlite3
client is installed, the SQLite export. The program's calls, dnntrace's own
calls, op executions, kernels, copies, sets and GPU time must agree wherever
they are printed (an op that already runs fused too, in report's fusion
section), and a report of every trace at once must add up to the traces
read alone.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

failures = checks = 0


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"{' '.join(cmd)} exited {r.returncode}: {r.stderr}")
    return r.stdout


def agree(trace, what, numbers):
    """numbers: {where: value}; every value must be the same."""
    global failures, checks
    checks += 1
    if len(set(numbers.values())) != 1:
        failures += 1
        said = ", ".join(f"{k} {v}" for k, v in numbers.items())
        print(f"FAIL: {trace}: {what}: {said}")


def from_info(dnntrace, path):
    text = run([dnntrace, "info", "--calls", "0", path])
    rec = re.search(r"^records: .*\((\d+) calls", text, re.M)
    split = re.search(r"^calls: +(\d+) the program's, (?:(\d+) made by one "
                      r"library inside another's call, )?(\d+) dnntrace's own",
                      text, re.M)
    work = re.search(r"^GPU work: +(\d+) kernels, (\d+) copies and sets",
                     text, re.M)
    calls, own = (int(split[1]), int(split[3])) if split else (int(rec[1]), 0)
    nested = int(split[2] or 0) if split else 0
    if split:
        agree(path, "calls in info's records line", {
            "records line": int(rec[1]),
            "program's + nested + own": calls + nested + own})
    steps = re.search(r"^steps: +(.*)$", text, re.M)
    return {"calls": calls, "own": own,
            "kernels": int(work[1]) if work else 0,
            "copies": int(work[2]) if work else 0,
            "untimed": "untimed" in text,
            "steps": steps[1] if steps else None}


def from_dump(dnntrace, path):
    n = {"calls": 0, "own": 0, "kernels": 0, "timed": 0, "copies": 0,
         "MEMCPY": 0, "MEMSET": 0, "gpu_ns": 0}
    for line in run([dnntrace, "dump", path]).splitlines():
        kind = line.split(" ", 1)[0]
        if kind == "API_CALL":
            # a library's call inside another's is not the program's
            if not line.endswith(" [nested]"):
                n["own" if line.endswith(" [dnntrace]") else "calls"] += 1
            continue
        if kind not in ("KERNEL", "MEMCPY", "MEMSET"):
            continue
        dur = re.search(r" dur=(\d+)ns ", line)
        n["kernels" if kind == "KERNEL" else "copies"] += 1
        if kind != "KERNEL":
            n[kind] += 1
        n["timed"] += kind == "KERNEL" and dur is not None
        n["gpu_ns"] += int(dur[1]) if dur else 0
    return n


def from_sqlite(dnntrace, path, tmp):
    db = os.path.join(tmp, os.path.basename(path) + ".sqlite")
    run([dnntrace, "export", "--format", "sqlite", "--force", "-o", db,
         path])
    dur = 'CASE WHEN "end" > start THEN "end" - start ELSE 0 END'
    sql = f"""SELECT
      (SELECT COUNT(*) FROM (SELECT byDnntrace, nested FROM CUDNN_EVENTS
        UNION ALL SELECT byDnntrace, nested FROM CUBLAS_EVENTS)
        WHERE byDnntrace = 0 AND nested = 0) AS calls,
      (SELECT COUNT(*) FROM (SELECT byDnntrace FROM CUDNN_EVENTS
        UNION ALL SELECT byDnntrace FROM CUBLAS_EVENTS)
        WHERE byDnntrace = 1) AS own,
      (SELECT calls FROM PROCESSES) AS process_calls,
      (SELECT ownCalls FROM PROCESSES) AS process_own,
      (SELECT COUNT(*) FROM CUDNN_OPS WHERE origin <> 'captured') AS ops,
      (SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL
        WHERE start IS NOT NULL) AS timed,
      (SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY) AS memcpy,
      (SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_MEMSET) AS memset,
      (SELECT COALESCE(SUM({dur}), 0) FROM (
        SELECT start, "end" FROM CUPTI_ACTIVITY_KIND_KERNEL
        UNION ALL SELECT start, "end" FROM CUPTI_ACTIVITY_KIND_MEMCPY
        UNION ALL SELECT start, "end" FROM CUPTI_ACTIVITY_KIND_MEMSET)
        WHERE start IS NOT NULL) AS gpu_ns"""
    return json.loads(run(["sqlite3", "-json", db, sql]))[0]


def check_trace(dnntrace, path, tmp):
    info = from_info(dnntrace, path)
    dump = from_dump(dnntrace, path)
    report = json.loads(run([dnntrace, "report", "--format", "json", path]))
    whole = json.loads(run([dnntrace, "report", "--format", "json",
                            "--with-warmup", path]))
    f = report["files"][0]
    ops = json.loads(run([dnntrace, "ops", "--format", "json",
                          "--with-warmup", path]))
    plans = json.loads(run([dnntrace, "ops", "--plans", "--format", "json",
                            "--with-warmup", path]))
    kernels = json.loads(run([dnntrace, "kernels", "--format", "json",
                              "--with-warmup", path]))
    diff = json.loads(run([dnntrace, "diff", "--format", "json",
                           "--with-warmup", path, path]))["base"]
    steady = json.loads(run([dnntrace, "diff", "--format", "json", path,
                             path]))["base"]
    sql = from_sqlite(dnntrace, path, tmp) if shutil.which("sqlite3") else {}

    def more(key, numbers):
        if key in sql:
            numbers["sqlite"] = sql[key]
        if "process_" + key in sql:
            numbers["sqlite PROCESSES"] = sql["process_" + key]
        return numbers

    agree(path, "the program's calls", more("calls", {
        "info": info["calls"], "dump": dump["calls"],
        "report": f["calls"], "diff": diff["calls"]}))
    agree(path, "dnntrace's own calls", more("own", {
        "info": info["own"], "dump": dump["own"],
        "report": f.get("own_calls"), "diff": diff.get("own_calls")}))
    agree(path, "op executions", more("ops", {
        "report": f["ops"], "ops": ops["stats"]["ops"],
        "ops --plans": sum(p["count"] for p in plans["problems"]),
        "diff": diff["ops"]}))
    agree(path, "kernel records", {"info": info["kernels"],
                                   "dump": dump["kernels"]})
    agree(path, "timed kernels", more("timed", {
        "dump": dump["timed"], "report": f["kernels"],
        "diff": diff.get("kernels"), "kernels": kernels["runs"]}))
    if not info["untimed"]:
        agree(path, "kernels", {"info": info["kernels"],
                                "report": f["kernels"]})
    agree(path, "copies and sets", {
        "info": info["copies"], "dump": dump["copies"],
        "report": f.get("copies")})
    if sql:
        agree(path, "copies", {"dump": dump["MEMCPY"],
                               "sqlite": sql["memcpy"]})
        agree(path, "sets", {"dump": dump["MEMSET"],
                             "sqlite": sql["memset"]})
    agree(path, "kernels, copies and sets", {
        "report work": whole["gpu"].get("work"), "diff work": diff.get("work"),
        "report kernels + copies": f["kernels"] + f.get("copies", 0)})
    agree(path, "GPU time", more("gpu_ns", {
        "dump": dump["gpu_ns"], "report": f["gpu_ns"],
        "report total": whole["gpu"]["total_ns"],
        "diff": diff.get("gpu_ns")}))
    check_steady(path, report, whole, steady)
    check_steady_lists(dnntrace, path, report, kernels)
    check_fusion(dnntrace, path, report, whole)
    said = re.search(r"^steps +(.*)$", run([dnntrace, "report", "--no-fusion",
                                            path]), re.M)
    agree(path, "steps", {"info": info["steps"],
                          "report": said[1] if said else None})
    return f


def check_steady(path, report, whole, diff):
    """The steady state, report's and diff's the same; with its start-up,
    the whole run."""
    up = report["startup"]
    agree(path, "steady state's GPU time", {
        "report": report["gpu"]["total_ns"], "diff": diff.get("gpu_ns"),
        "whole run less start-up": whole["gpu"]["total_ns"] - up["gpu_ns"]})
    agree(path, "steady state's kernels, copies and sets", {
        "report": report["gpu"]["work"], "diff": diff.get("work")})
    # GPU work is on the side of the cut its time is, however late it
    # reached the trace, as its op is: the calls' work by library is their
    # ops' by kind
    for name, r in (("steady state", report), ("whole run", whole)):
        gpu = r["gpu"]
        agree(path, f"{name}'s GPU work in calls, by library and by kind", {
            "by library": gpu["attributed_by"]["cudnn_call"],
            "by op kind": sum(k["ns"] for k in gpu["cudnn_by_kind"])})
    agree(path, "steady state's host time in calls", {
        "report": report["host_cudnn_ns"],
        "whole run less start-up": whole["host_cudnn_ns"] - up["host_ns"]})
    agree(path, "steady state's GPU busy", {
        "report": report["gpu"]["busy_ns"],
        "whole run less start-up": whole["gpu"]["busy_ns"] - up["busy_ns"]})
    if up["left_out"] and up["traces"] == 1 and len(report["files"]) == 1:
        agree(path, "start-up steps", {
            "steps": report["steps"]["startup_steps"],
            "start-up": up["steps"]})


def check_steady_lists(dnntrace, path, report, whole_kernels):
    """ops and kernels list the steady state report and diff are of."""
    ops = json.loads(run([dnntrace, "ops", "--format", "json", path]))
    plans = json.loads(run([dnntrace, "ops", "--plans", "--format", "json",
                            path]))
    kernels = json.loads(run([dnntrace, "kernels", "--format", "json",
                              path]))
    agree(path, "steady state's op executions", {
        "report": sum(k["count"] for k in report["gpu"]["cudnn_by_kind"]),
        "ops": ops["stats"]["ops"],
        "ops --plans": sum(p["count"] for p in plans["problems"])})
    agree(path, "steady state's timed kernels", {
        "kernels": kernels["runs"],
        "whole run less report's start-up":
            whole_kernels["runs"] - report["startup"]["kernels"]})
    agree(path, "start-up", {"report": json.dumps(report["startup"]),
                             "ops": json.dumps(ops["startup"]),
                             "kernels": json.dumps(kernels["startup"])})


def check_fusion(dnntrace, path, report, whole):
    """Fusion is of the steady state report is of: an op that already runs
    fused counts its executions and GPU time as report's operations do,
    with and without the start-up, and `fusion` says what report's section
    says."""
    for name, r, opt in (("steady state", report, []),
                         ("whole run", whole, ["--with-warmup"])):
        ops = {}
        for o in r["ops"]:
            n = ops.setdefault(o["brief"], [0, 0])
            n[0] += o["count"]
            n[1] += o["gpu_ns"]
        fused = {}
        for f in r["fusion"]["already_fused"]:
            n = fused.setdefault(f["brief"], [0, 0])
            n[0] += f["count"]
            n[1] += f["gpu_ns"]
        for brief, (count, ns) in sorted(fused.items()):
            agree(path, f"{name}'s executions of fused {brief[:40]}", {
                "report's fusion": count,
                "report's operations": ops.get(brief, [0, 0])[0]})
            agree(path, f"{name}'s GPU time of fused {brief[:40]}", {
                "report's fusion": ns,
                "report's operations": ops.get(brief, [0, 0])[1]})
        alone = json.loads(run([dnntrace, "fusion", "--format", "json",
                                *opt, path]))
        agree(path, f"{name}'s fusion", {
            "report": json.dumps([r["fusion"], r["startup"]]),
            "fusion": json.dumps([alone["fusion"], alone["startup"]])})


def check_all(dnntrace, folder, alone):
    """Every trace at once (a folder of them): the totals of report and diff
    and report's Traces are the traces read alone (alone: report's
    files[0] of each), summed."""
    report = json.loads(run([dnntrace, "report", "--format", "json",
                             folder]))
    text = run([dnntrace, "report", folder])
    m = re.search(r"^totals +(\d+) calls \(\d+ failed\)"
                  r"(?: and (\d+) of dnntrace's own)?, (\d+) (?:cuDNN )?op "
                  r"executions(?: \([^)]*\))?, (\d+) kernels", text, re.M)
    said = {"calls": int(m[1]), "own_calls": int(m[2] or 0),
            "ops": int(m[3]), "kernels": int(m[4])}
    whole = json.loads(run([dnntrace, "report", "--format", "json",
                            "--with-warmup", folder]))
    diff = json.loads(run([dnntrace, "diff", "--format", "json",
                           "--with-warmup", folder, folder]))["base"]
    for key in ("calls", "own_calls", "ops", "kernels", "copies", "gpu_ns"):
        numbers = {
            "traces read alone": sum(f[key] for f in alone),
            "report's Traces": sum(f[key] for f in report["files"])}
        if key in said:
            numbers["report's totals"] = said[key]
        if key in diff:
            numbers["diff"] = diff[key]
        agree("every trace", key, numbers)
    agree("every trace", "kernels, copies and sets", {
        "traces read alone": sum(f["kernels"] + f["copies"] for f in alone),
        "report": whole["gpu"]["work"], "diff": diff["work"]})
    agree("every trace", "GPU time", {
        "traces read alone": sum(f["gpu_ns"] for f in alone),
        "report": whole["gpu"]["total_ns"]})
    steady = json.loads(run([dnntrace, "diff", "--format", "json", folder,
                             folder]))["base"]
    check_steady("every trace", report, whole, steady)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    dnntrace, synth, root = sys.argv[1:]
    data = os.path.join(root, "tests", "data")
    traces = sorted(os.path.join(data, n) for n in os.listdir(data)
                    if n.endswith(".dnnt"))
    tmp = tempfile.mkdtemp()
    try:
        listing = os.path.join(root, "shim", "libs", "cudnn-api.txt")
        for name, args in (("job", ["--ranks", "2", "--steps", "4"]),
                           ("graphs", ["--scenario", "graphs"]),
                           ("startup", ["--scenario", "startup"]),
                           ("sampled", ["--scenario", "sampled"]),
                           # long enough for the cut's points to be
                           # dropped while fusion's thread lags behind
                           ("fusion", ["--scenario", "fusion", "--steps",
                                       "2000"])):
            out = os.path.join(tmp, name)
            os.mkdir(out)
            run([synth, listing, out, *args])
            traces += sorted(os.path.join(out, n) for n in os.listdir(out)
                             if n.endswith(".dnnt"))
        alone = [check_trace(dnntrace, path, tmp) for path in traces]
        every = os.path.join(tmp, "every")
        os.mkdir(every)
        for path in traces:
            os.symlink(os.path.abspath(path),
                       os.path.join(every, os.path.basename(path)))
        check_all(dnntrace, every, alone)
    finally:
        shutil.rmtree(tmp)
    print(f"counts: {checks - failures} of {checks} checks agree"
          f"{'' if shutil.which('sqlite3') else ' (sqlite3 not installed)'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
