#!/usr/bin/env python3
"""A program's steps, as `dnntrace report --format json` finds them: on
synthetic training jobs of known steps, on steps marked by NVTX ranges, on
tests/data/cuda-graph.dnnt (13
timed replays after 3 warm-up ones, wl_cuda_graph.py's defaults), on a run
too short to repeat, and the same once a trace's kernels run 3x slower.

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
