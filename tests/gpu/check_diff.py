#!/usr/bin/env python3
"""Check `dnntrace diff` on real runs of the ResNet-50 workload.

    check_diff.py BUILD_DIR OUTDIR [--iters N] [--warmup N]

Records wl_resnet50.py under `dnntrace record` four times: twice unchanged, once with
cudnn.benchmark on (PyTorch then times cuDNN's candidates and may keep other engines), once with
NCHW tensors instead of channels_last (other problems). Then:
  1. diff of the two unchanged runs: --fail-on regression and --fail-on engine-change must pass;
  2. unchanged against benchmark mode: the diff names the engine changes (--fail-on
     engine-change trips when cuDNN kept another engine for some problem);
  3. unchanged against NCHW: --fail-on any trips, with operations removed and added.
Prints each diff's verdict line; exit 0 when all three hold, 1 otherwise, 77 without a GPU.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def record(dnntrace, out, name, extra, iters, warmup):
    tdir = os.path.join(out, name)
    shutil.rmtree(tdir, ignore_errors=True)
    os.makedirs(tdir)
    cmd = [dnntrace, "record", "-q", "-o", os.path.join(tdir, "%p.dnnt"), "--", sys.executable,
           os.path.join(HERE, "wl_resnet50.py"), "--iters", str(iters), "--warmup", str(warmup)] + extra
    with open(tdir + ".log", "w") as log:
        rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT).returncode
    if rc == 77:
        sys.exit(77)
    if rc:
        sys.exit("%s run failed (%d), see %s.log" % (name, rc, tdir))
    return tdir


def diff(dnntrace, base, new, gate, out, name):
    txt = subprocess.run([dnntrace, "diff", "--fail-on", gate, base, new], capture_output=True, text=True)
    with open(os.path.join(out, name + ".txt"), "w") as f:
        f.write(txt.stdout + txt.stderr)
    js = subprocess.run([dnntrace, "diff", "--format", "json", base, new], capture_output=True, text=True)
    data = json.loads(js.stdout)
    verdict = [l for l in txt.stdout.splitlines() if "slower," in l]
    print("%-28s --fail-on %-13s exit %d: %s" % (name, gate, txt.returncode, verdict[0] if verdict else "?"))
    return txt.returncode, data


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("outdir")
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    args = ap.parse_args()
    if not shutil.which("nvidia-smi"):
        print("SKIP: no nvidia-smi: no GPU here", file=sys.stderr)
        sys.exit(77)
    dnntrace = os.path.join(args.build, "tools", "dnntrace")
    out = os.path.abspath(args.outdir)
    os.makedirs(out, exist_ok=True)
    a = record(dnntrace, out, "diff.a", [], args.iters, args.warmup)
    b = record(dnntrace, out, "diff.b", [], args.iters, args.warmup)
    bench = record(dnntrace, out, "diff.benchmark", ["--benchmark"], args.iters, args.warmup)
    nchw = record(dnntrace, out, "diff.nchw", ["--no-channels-last"], args.iters, args.warmup)

    ok = True
    rc, _ = diff(dnntrace, a, b, "regression", out, "same.regression")
    ok &= rc == 0
    rc, data = diff(dnntrace, a, b, "engine-change", out, "same.engine")
    ok &= rc == 0
    rc, data = diff(dnntrace, a, bench, "engine-change", out, "benchmark.engine")
    changed = [o for o in data["ops"] if o["engine_changed"]]
    print("  benchmark mode: %d operations changed engine, e.g. %s" % (
        len(changed), "%s %s: %s -> %s" % (changed[0]["kind"], changed[0]["brief"][:60],
                                           changed[0]["base"]["engine"], changed[0]["new"]["engine"])
        if changed else "none"))
    ok &= rc == (1 if changed else 0)
    rc, data = diff(dnntrace, a, nchw, "any", out, "nchw.any")
    print("  channels_last off: %d removed, %d added" % (data["counts"]["removed"], data["counts"]["added"]))
    ok &= rc == 1 and data["counts"]["removed"] > 0 and data["counts"]["added"] > 0
    print("diff: %s" % ("as expected" if ok else "NOT as expected"))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
