#!/usr/bin/env python3
"""Check that JAX's profiler sees the GPU under dnntrace as it does alone.

    check_jax_profiler.py BUILD_DIR OUTDIR [--iters N]

XLA finds CUPTI's functions with dlopen and dlsym, and takes CUPTI's one callback subscriber
when its profiler starts. Runs tests/gpu/wl_jax_attn.py with JAX's profiler around the timed
iterations (DNNTRACE_WL_PROFILE) three times: alone; under `dnntrace record` (launches tied to
calls by CUPTI's callbacks, which dnntrace must give up); and under `dnntrace record` with
DNNTRACE_CUPTI_SUBSCRIBE=0. Counts the GPU events in each profile (events of processes whose
name says GPU) and, for the recorded runs, the kernels dnntrace recorded and its GPU_STATE
records (where it handed CUPTI over and took it back).

Exit 0 when the profiler saw GPU events alone and the same number in both recorded runs, and
dnntrace recorded kernels in both and says where it handed CUPTI over and took it back (and, tying
by callback, that it gave the subscriber up); 1 otherwise, 77 without JAX or a GPU.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def gpu_events(path):
    """GPU events in a Chrome JSON trace, and the names of the processes they are in."""
    if not os.path.exists(path):
        return 0, []
    with open(path) as f:
        data = json.load(f)
    events = data.get("traceEvents", []) if isinstance(data, dict) else data
    names = {e.get("pid"): e.get("args", {}).get("name", "") for e in events
             if e.get("ph") == "M" and e.get("name") == "process_name"}
    gpu = {pid for pid, name in names.items() if "GPU" in name}
    n = sum(1 for e in events if e.get("ph") == "X" and e.get("pid") in gpu)
    return n, sorted(names[p] for p in gpu)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("outdir")
    ap.add_argument("--iters", type=int, default=5)
    args = ap.parse_args()
    dnntrace = os.path.join(os.path.abspath(args.build), "tools", "dnntrace")
    out = os.path.abspath(args.outdir)
    os.makedirs(out, exist_ok=True)
    wl = [sys.executable, os.path.join(HERE, "wl_jax_attn.py"), "--iters", str(args.iters)]

    # the runs start from the environment without any tracer
    base = {k: v for k, v in os.environ.items()
            if k not in ("LD_PRELOAD", "CUDA_INJECTION64_PATH") and not k.startswith("DNNTRACE_")}
    seen, ok = {}, True
    for name, env, rec in (("alone", {}, False),
                           ("recorded", {}, True),
                           ("recorded, DNNTRACE_CUPTI_SUBSCRIBE=0",
                            {"DNNTRACE_CUPTI_SUBSCRIBE": "0"}, True)):
        tag = "run%d" % len(seen)
        prof = os.path.join(out, tag + ".profile.json")
        tdir = os.path.join(out, tag + ".traces")
        # nothing of an earlier check may count
        shutil.rmtree(tdir, ignore_errors=True)
        shutil.rmtree(prof + ".d", ignore_errors=True)
        if os.path.exists(prof):
            os.remove(prof)
        os.makedirs(tdir)
        cmd = ([dnntrace, "record", "-q", "-o", os.path.join(tdir, "%p.dnnt"), "--"] if rec
               else []) + wl
        with open(os.path.join(out, tag + ".log"), "w") as log:
            rc = subprocess.run(cmd, env=dict(base, DNNTRACE_WL_PROFILE=prof, **env),
                                stdout=log, stderr=subprocess.STDOUT).returncode
        if rc == 77:
            sys.exit(77)
        n, procs = gpu_events(prof)
        seen[name] = n
        line = "%-40s exit %d; JAX's profiler: %d GPU events (%s)" % (name, rc, n,
                                                                      ", ".join(procs) or "-")
        if rec:
            kernels, states = 0, []
            for t in sorted(os.listdir(tdir)):
                dump = subprocess.run([dnntrace, "dump", os.path.join(tdir, t)],
                                      capture_output=True, text=True).stdout
                kernels += dump.count("\nKERNEL ")
                states += [l for l in dump.splitlines() if l.startswith("GPU_STATE")]
            line += "; dnntrace: %d kernels" % kernels
            line += "".join("\n    " + s for s in states)
            # handed over (3) and taken back (4); tying by callback, the
            # subscriber given up first (1, "took CUPTI's callbacks")
            said = [st for st in states if " state=3 " in st or " state=4 " in st]
            gave = any(" state=1 " in st and "took CUPTI's callbacks" in st for st in states)
            if kernels == 0 or len(said) < 2 or (not env and not gave):
                line += "\n    dnntrace recorded no kernel, or did not say it handed CUPTI over"
                ok = False
        print(line)
        ok = ok and rc == 0
    alone = seen["alone"]
    same = alone > 0 and all(v == alone for v in seen.values())
    print("JAX's profiler saw %s under dnntrace as alone"
          % ("the same GPU events" if same else "DIFFERENT GPU events"))
    sys.exit(0 if ok and same else 1)


if __name__ == "__main__":
    main()
