#!/usr/bin/env python3
"""Check the steps `dnntrace report` finds, and `diff`'s gate, on real runs.

    check_steps.py BUILD_DIR OUTDIR

Records four programs, each printing its own ms per iteration: eager PyTorch training
(wl_small_cnn.py), torch.compile training (wl_compile_train.py), a jitted JAX training step
(wl_jax_conv.py) and a CUDA-graph replay loop (wl_cuda_graph.py). For each, the steady steps
found must be at least the program's timed iterations and at most all it ran plus a few (a
framework may run the step function more than the loop does), and the mean step time within
10% of the program's ms per iteration (which is a mean too). Then the eager program is recorded four more times and
the five runs diffed pairwise with --fail-on regression: all 10 pass. Last, one run's PyTorch
kernels are made 1.5x slower (tests/tools/scale-trace): that copy fails the gate.
Exit 0 when all hold, 1 otherwise, 77 without a GPU.
"""

import itertools
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ITERS, WARMUP = 60, 3
PROGRAMS = [
    ("eager", "wl_small_cnn.py", [], 100),
    ("compile", "wl_compile_train.py", [], ITERS),
    ("jax", "wl_jax_conv.py", [], ITERS),
    ("graph", "wl_cuda_graph.py", ["--mode", "graph"], ITERS),
]
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def record(dnntrace, out, name, script, extra, iters):
    trace = os.path.join(out, name + ".dnnt")
    cmd = [dnntrace, "record", "-q", "-o", trace, "--", sys.executable,
           os.path.join(HERE, script), "--iters", str(iters), "--warmup",
           str(WARMUP)] + extra
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if res.returncode == 77:
        sys.exit(77)
    m = re.search(r"ms_per_iter=([0-9.]+)", res.stdout)
    if res.returncode or not m:
        sys.exit("%s failed (%d): %s" % (name, res.returncode, res.stderr[-2000:]))
    return trace, float(m.group(1))


def steps_of(dnntrace, trace):
    out = subprocess.run([dnntrace, "report", "--format", "json", trace],
                         capture_output=True, check=True).stdout
    return json.loads(out)["steps"]


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    build, out = sys.argv[1:3]
    dnntrace = os.path.join(build, "tools", "dnntrace")
    scale = os.path.join(build, "tests", "tools", "scale-trace")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    print("%-8s %6s %6s %8s %8s %10s %10s" % ("program", "iters", "steady", "start-up",
                                            "start-up", "ms/iter", "step ms"))
    eager = None
    for name, script, extra, iters in PROGRAMS:
        trace, ms = record(dnntrace, out, name, script, extra, iters)
        s = steps_of(dnntrace, trace)
        step_ms = s["time"]["mean_ns"] / 1e6
        print("%-8s %6d %6d %8d %7.0fms %10.4f %10.4f  (%s %.50s)" % (
            name, iters + WARMUP, s["steps"], s["startup_steps"], s["startup_ns"] / 1e6,
            ms, step_ms, s["anchor_kind"], s["anchor"]))
        if not s["found"] or not iters <= s["steps"] <= iters + WARMUP + 8:
            fail("%s: %d steady steps, the program timed %d of %d" % (
                name, s["steps"], iters, iters + WARMUP))
        if abs(step_ms - ms) > 0.10 * ms:
            fail("%s: %.4f ms a step, the program says %.4f" % (name, step_ms, ms))
        if name == "eager":
            eager = (trace, script, extra, iters)
    runs = [eager[0]]
    for i in range(2, 6):
        trace, ms = record(dnntrace, out, "eager%d" % i, *eager[1:])
        s = steps_of(dnntrace, trace)
        print("eager run %d: %.4f ms/iter (program), step %.4f ms mean, %.4f median, "
              "p10 %.4f, p90 %.4f" % (i, ms, s["time"]["mean_ns"] / 1e6,
                                      s["time"]["median_ns"] / 1e6, s["time"]["p10_ns"] / 1e6,
                                      s["time"]["p90_ns"] / 1e6))
        runs.append(trace)
    for a, b in itertools.combinations(range(5), 2):
        res = subprocess.run([dnntrace, "diff", "--fail-on", "regression", "--format", "json",
                              runs[a], runs[b]], capture_output=True)
        d = json.loads(res.stdout)
        tripped = [q["name"][:40] for q in d["quantities"] if q["verdict"] == "slower"] + \
            [o["brief"][:40] for o in d["ops"] if o["verdict"] == "slower"]
        step = [q for q in d["quantities"] if q["kind"] == "step"]
        print("diff run %d run %d: exit %d, step time %s%s" % (
            a + 1, b + 1, res.returncode,
            "%+.1f%%" % (100 * step[0]["change"]) if step else "?",
            ", slower: " + "; ".join(tripped) if tripped else ""))
        if res.returncode:
            fail("runs %d and %d of one program: exit %d" % (a + 1, b + 1, res.returncode))
    slow = os.path.join(out, "eager-aten-1.5x.dnnt")
    subprocess.run([scale, runs[0], slow, "--lib", "aten", "--scale", "1.5"], check=True)
    res = subprocess.run([dnntrace, "diff", "--fail-on", "regression", "--format", "json",
                          runs[0], slow], capture_output=True)
    named = [q["name"] for q in json.loads(res.stdout)["quantities"] if q["verdict"] == "slower"]
    print("diff run 1 against its PyTorch kernels 1.5x: exit %d, slower: %s" % (
        res.returncode, ", ".join(n[:40] for n in named[:6])))
    if res.returncode != 1 or "PyTorch (ATen)" not in named:
        fail("a slowed copy: exit %d, slower %s" % (res.returncode, named))
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
