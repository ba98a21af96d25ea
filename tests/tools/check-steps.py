#!/usr/bin/env python3
"""A program's steps, as `dnntrace report --format json` finds them: on
synthetic training jobs of known steps, on steps marked by NVTX ranges, on
tests/data/cuda-graph.dnnt (13
timed replays after 3 warm-up ones, wl_cuda_graph.py's defaults), on a run
too short to repeat, and the same once a trace's kernels run 3x slower;
and what the report is of: a compiling start-up left out, its steady
state reported (--with-warmup: the whole run).

usage: check-steps.py DNNTRACE SYNTH_TRACE API_LISTING SCALE_TRACE DATA_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def steps(dnntrace, path):
    out = subprocess.run([dnntrace, "report", "--format", "json", path],
                         capture_output=True, check=True).stdout
    return json.loads(out)["steps"]


def report(dnntrace, path, *opts):
    out = subprocess.run([dnntrace, "report", "--format", "json", *opts,
                          path], capture_output=True, check=True).stdout
    return json.loads(out)


def findings(r):
    return {f["type"]: f for f in r["findings"]}


def check_startup(dnntrace, synth, api, tmp):
    """A program that compiles for 3 s (1 s pauses, one-off kernels)
    before 20 steps of 145 us of GPU work each, 200 us apart: by default
    the report is of the steps, the start-up said once; --with-warmup
    gives the whole run, its idle GPU the largest finding."""
    d = os.path.join(tmp, "startup")
    subprocess.run([synth, api, d, "--scenario", "startup", "--steps", "20"],
                   check=True, capture_output=True)
    path = os.path.join(d, "startup.dnnt")
    steady, whole = report(dnntrace, path), report(dnntrace, path,
                                                   "--with-warmup")
    up, g = steady["startup"], steady["gpu"]
    want = {"left_out": True, "gpu_ns": 2152000, "late_ns": 0,
            "total_ns": 20 * 145000, "busy_ns": 20 * 145000,
            "whole_ns": 2152000 + 20 * 145000}
    got = {"left_out": up["left_out"], "gpu_ns": up["gpu_ns"],
           "late_ns": up["late_ns"], "total_ns": g["total_ns"],
           "busy_ns": g["busy_ns"], "whole_ns": whole["gpu"]["total_ns"]}
    if got != want:
        fail(f"start-up and steady state: {got}, want {want}")
    # the steady state's GPU is busy 145 of every 200 us: no idle finding;
    # the whole run's sat idle through the compiling
    idle = findings(whole).get("gpu_idle")
    if "gpu_idle" in findings(steady) or not idle or \
            idle["cost_ns"] < 3 * 10**9:
        fail(f"GPU idle: steady {findings(steady).get('gpu_idle')}, "
             f"whole {idle}")
    pct = 100 * g["busy_ns"] / g["span_ns"]
    if not 70 < pct < 75:
        fail(f"steady state's GPU busy {pct:.1f}% of its span, want 72.5%")
    # the one-off kernels are the start-up's: no library of unknown
    # kernels in the steady state's GPU time
    other = {k["family"]: k["ns"] for k in steady["gpu"]["other_kernels"]}
    other_whole = {k["family"]: k["ns"]
                   for k in whole["gpu"]["other_kernels"]}
    if other.get("other") or other_whole.get("other") != 150000:
        fail(f"one-off kernels: steady {other}, whole {other_whole}")
    relu = [o["count"] for o in steady["ops"] if o["kind"] == "pointwise"]
    if relu != [20]:
        fail(f"steady state's ReLU executions: {relu}, want [20]")
    if not failures:
        print(f"start-up of {up['ns']} ns left out: {up['gpu_ns']} ns of "
              f"GPU time; steady state {g['total_ns']} ns, busy "
              f"{pct:.1f}%; the whole run's idle GPU {idle['cost_ns']} ns")


def main():
    if len(sys.argv) != 6:
        print(__doc__, file=sys.stderr)
        return 2
    dnntrace, synth, api, scale, data = sys.argv[1:6]
    tmp = tempfile.mkdtemp()
    try:
        for n in (10, 40, 200):
            d = os.path.join(tmp, f"train{n}")
            subprocess.run([synth, api, d, "--ranks", "1", "--steps",
                            str(n)], check=True, capture_output=True)
            s = steps(dnntrace, os.path.join(d, "rank0.dnnt"))
            if not s["found"] or s["steps"] != n:
                fail(f"{n} synthetic steps: found {s['found']}, "
                     f"{s['steps']} steady steps")
            else:
                print(f"{n} synthetic steps: {s['steps']} steady, "
                      f"{s['startup_steps']} start-up, "
                      f"{s['time']['median_ns']} ns each")
        d = os.path.join(tmp, "short")
        subprocess.run([synth, api, d, "--scenario", "modules", "--steps",
                        "2"], check=True, capture_output=True)
        s = steps(dnntrace, os.path.join(d, "modules.dnnt"))
        if s["found"] or s["steps"] != 1:
            fail(f"a run of 2 steps: found {s['found']}, {s['steps']} steps")
        else:
            print("a run of 2 steps: no repeating structure, one step")

        d = os.path.join(tmp, "ranges")
        subprocess.run([synth, api, d, "--scenario", "ranges", "--steps",
                        "12"], check=True, capture_output=True)
        s = steps(dnntrace, os.path.join(d, "ranges.dnnt"))
        if (s["anchor_kind"], s["anchor"], s["steps"]) != ("NVTX range",
                                                           "step", 12):
            fail(f"12 steps in NVTX ranges: {s['anchor_kind']} "
                 f"{s['anchor']}, {s['steps']} steps")
        else:
            print("12 steps in NVTX ranges named step: found by the ranges")
        # a library's ranges around its collectives, four a step: they
        # recur within the step the kernels make, and are no steps
        d = os.path.join(tmp, "collectives")
        subprocess.run([synth, api, d, "--scenario", "ranges", "--steps",
                        "12", "--variant", "collectives"], check=True,
                       capture_output=True)
        s = steps(dnntrace, os.path.join(d, "ranges.dnnt"))
        if (s["anchor_kind"], s["steps"] + s["startup_steps"]) != ("kernel",
                                                                   12):
            fail(f"12 steps, four collectives' ranges each: "
                 f"{s['anchor_kind']} {s['anchor']}, {s['steps']} steady, "
                 f"{s['startup_steps']} start-up steps")
        else:
            print("12 steps, four collectives' ranges each: found by the "
                  "kernels")

        check_startup(dnntrace, synth, api, tmp)

        graph = os.path.join(data, "cuda-graph.dnnt")
        s = steps(dnntrace, graph)
        if s["steps"] + s["startup_steps"] != 16 or s["steps"] < 12:
            fail(f"cuda-graph.dnnt: {s['steps']} steady and "
                 f"{s['startup_steps']} start-up steps, want 16 in all")
        slow = os.path.join(tmp, "slow.dnnt")
        subprocess.run([scale, graph, slow, "--all", "--scale", "3"],
                       check=True)
        t = steps(dnntrace, slow)
        ratio = t["time"]["median_ns"] / s["time"]["median_ns"]
        if t["steps"] != s["steps"] or not 2.5 < ratio < 3.5:
            fail(f"cuda-graph.dnnt 3x slower: {t['steps']} steps of "
                 f"{t['time']['median_ns']} ns, {ratio:.2f}x")
        else:
            print(f"cuda-graph.dnnt: {s['steps']} steady + "
                  f"{s['startup_steps']} start-up steps; 3x slower: "
                  f"{ratio:.2f}x the step time")
    finally:
        shutil.rmtree(tmp)
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
