"""Replay against cudnn-frontend's autotuning: does replay find PyTorch's choice the fastest?

Records wl_autotune.py (torch.backends.cudnn.benchmark = True: PyTorch times every plan
cudnn-frontend offers for each convolution and runs the fastest), replays the trace with
`--engines heuristic`, and for each convolution measured prints the engine autotune chose (the
recorded one) and replay's best, with their replayed medians and spreads. Autotune's choice
agrees when it is replay's best, or when the best is faster by no more than 5 % of its time
or than the larger spread of the two (the report's engine-choice threshold). Exits 1 when a
convolution disagrees, 77 without a GPU.

usage: check_autotune.py DNNTRACE WORKDIR [--budget S]
"""

import json
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))


def main():
    dnntrace, work = sys.argv[1], sys.argv[2]
    budget = sys.argv[sys.argv.index("--budget") + 1] if "--budget" in sys.argv else "60"
    os.makedirs(work, exist_ok=True)
    trace = os.path.join(work, "autotune.dnnt")
    rc = subprocess.call([dnntrace, "record", "-q", "-o", trace, "--", sys.executable,
                          os.path.join(here, "wl_autotune.py"), "--iters", "10", "--warmup", "2"])
    if rc == 77:
        return 77
    if rc:
        print("FAIL: the workload exited %d" % rc)
        return 1
    subprocess.check_call([dnntrace, "replay", "-q", "--engines", "heuristic", "--budget", budget,
                           trace])
    lines = [json.loads(l) for l in open(trace[:-5] + ".replay.jsonl")]
    bad = 0
    print("%-44s %-30s %10s %-30s %10s %7s  %s" % ("convolution", "autotune's (recorded)", "replayed",
                                                  "replay's best", "best", "ratio", "verdict"))
    for p in lines[1:]:
        if p["status"] != "measured" or p["best"] < 0:
            print("%-44s %s: %s" % (p.get("brief", "")[:44], p["status"], p.get("reason", "")))
            continue
        c = p["candidates"]
        rec, best = c[0], c[p["best"]]
        name = lambda x: "eng%d %s" % (x["engine"], x.get("knobs", ""))
        gain = rec["median_ns"] - best["median_ns"]
        noise = max(0.05 * rec["median_ns"], rec["spread"] * rec["median_ns"],
                    best["spread"] * best["median_ns"])
        verdict = ("best" if p["best"] == p["chosen"] else
                   "within noise" if gain <= noise else "replay finds faster")
        bad += verdict == "replay finds faster"
        print("%-44s %-30s %8.1fus %-30s %8.1fus %7.3f  %s (%d candidates)" % (
            p.get("brief", "")[:44], name(rec)[:30], rec["median_ns"] / 1e3, name(best)[:30],
            best["median_ns"] / 1e3, best["median_ns"] / rec["median_ns"], verdict, len(c)))
    print("%d convolutions where replay finds a faster engine than autotune's" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
