#!/usr/bin/env python3
"""Check the fusion what-if `dnntrace replay` measures against a program that runs it for real.

    check_fusion_replay.py DNNTRACE OUTDIR [--budget SECONDS] [--tolerance FRACTION]

wl_conv_fused.py times two chains (bf16, NHWC) unfused in PyTorch eager and fused by cuDNN
(torch.cudnn_convolution_relu, torch.cudnn_convolution_add_relu), per iteration, with CUDA
events: the real saving is the unfused time less the fused. The unfused program is then
recorded; `dnntrace fusion` must call both chains fusable, `dnntrace replay` must build both
fused graphs and time them against the steps unfused, and its measured saving must be within
the tolerance (15 %) of the real one. `fusion` must then show the measured saving beside the
priced one. Prints a table and a last line `fusion what-if: ...`; exit 0 when all agree, 1
otherwise, 77 without a GPU.
"""

import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
WL = [sys.executable, os.path.join(HERE, "wl_conv_fused.py")]

# each chain by the steps `fusion` finds in it
CHAINS = {
    "relu": ["convolution forward", "bias add", "ReLU"],
    "add_relu": ["convolution forward", "residual add", "bias add", "ReLU"],
}


def real_times(out):
    """The program's own times per chain: {chain: (unfused_us, fused_us)}."""
    p = subprocess.run(WL + ["--mode", "both"], capture_output=True, text=True)
    with open(os.path.join(out, "real.log"), "w") as f:
        f.write(p.stdout + p.stderr)
    if p.returncode == 77:
        sys.exit(77)
    if p.returncode:
        sys.exit("FAIL: wl_conv_fused.py --mode both exited %d:\n%s" % (p.returncode, p.stderr[-2000:]))
    times = {}
    for m in re.finditer(r"^TIME (\S+) unfused_us=(\S+) fused_us=(\S+)", p.stdout, re.M):
        times[m[1]] = (float(m[2]), float(m[3]))
    return times


def of_steps(key, steps):
    """Whether the chain key (pattern|blocked|step|step...) has these steps."""
    parts = key.split("|")[2:]
    return len(parts) == len(steps) and all(p.startswith(w + " ") for p, w in zip(parts, steps))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dnntrace")
    ap.add_argument("out")
    ap.add_argument("--budget", type=float, default=120)
    ap.add_argument("--tolerance", type=float, default=0.15)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    trace = os.path.join(a.out, "conv_fused.dnnt")
    results = os.path.join(a.out, "conv_fused.replay.jsonl")
    for f in (trace, results):
        if os.path.exists(f):
            os.unlink(f)

    real = real_times(a.out)
    rec = subprocess.run([a.dnntrace, "record", "-q", "-o", trace, "--"] + WL + ["--mode", "unfused"],
                         capture_output=True, text=True)
    if rec.returncode:
        sys.exit("FAIL: recording exited %d: %s" % (rec.returncode, rec.stderr[-2000:]))
    fz = json.loads(subprocess.run([a.dnntrace, "fusion", "--format", "json", trace],
                                   capture_output=True, text=True, check=True).stdout)
    rp = subprocess.run([a.dnntrace, "replay", "--budget", str(a.budget), trace],
                        capture_output=True, text=True)
    with open(os.path.join(a.out, "replay.log"), "w") as f:
        f.write(rp.stderr)
    if rp.returncode:
        sys.exit("FAIL: replay exited %d: %s" % (rp.returncode, rp.stderr[-2000:]))
    lines = [json.loads(x) for x in open(results)]
    whatifs = {x["fusion"]: x for x in lines[1:] if "fusion" in x}
    text = subprocess.run([a.dnntrace, "fusion", trace], capture_output=True, text=True).stdout
    with open(os.path.join(a.out, "fusion.txt"), "w") as f:
        f.write(text)

    bad = []
    print("%-9s %10s %10s %10s | %10s %10s %10s %10s | %6s  %s" % (
        "chain", "unfused", "fused", "saving", "replayed", "fused", "saving", "priced", "ratio",
        "steps replayed"))
    for name, steps in CHAINS.items():
        opp = [o for o in fz["fusion"]["opportunities"] if [s["what"] for s in o["steps"]] == steps]
        if not opp or opp[0]["status"] != "fusable":
            bad.append("%s: fusion does not call the chain fusable" % name)
            continue
        w = next((x for k, x in whatifs.items() if of_steps(k, steps)), None)
        if not w or w["status"] != "measured":
            bad.append("%s: replay did not measure it: %s" % (
                name, w["reason"] if w else "no line for it: the budget spent first? (replay.log)"))
            continue
        if name not in real:
            bad.append("%s: the program did not time it" % name)
            continue
        ru, rf = real[name]
        saving = (ru - rf) * 1e3
        ratio = w["saving_ns"] / saving if saving > 0 else float("nan")
        print("%-9s %8.1fus %8.1fus %8.1fus | %8.1fus %8.1fus %8.1fus %8.1fus | %6.2f  %s" % (
            name, ru, rf, saving / 1e3, w["unfused_ns"] / 1e3, w["fused_ns"] / 1e3,
            w["saving_ns"] / 1e3, w["priced_ns"] / 1e3, ratio,
            ", ".join("%s %.1fus (%s)" % (s["what"], s["ns"] / 1e3, s["source"]) for s in w["steps"])))
        if not abs(ratio - 1) <= a.tolerance:
            bad.append("%s: measured saving %.1f us, the program's %.1f us (%.2fx)" % (
                name, w["saving_ns"] / 1e3, saving / 1e3, ratio))
    if text.count("   measured:   saving") + text.count("   measured:   no saving") < len(CHAINS):
        bad.append("fusion does not show the measured saving of each chain")
    for b in bad:
        print("FAIL:", b)
    print("fusion what-if: %s" % ("ok" if not bad else "%d failed" % len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
