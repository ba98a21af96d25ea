"""A true positive of replay's engine choice, against the program's own timing.

gpu-engine-choice runs one backend convolution with the first engine config cuDNN's FALLBACK
heuristics give (slow and safe), timing itself. Recorded, then replayed with `--engines all`:
replay's best engine and knobs and its predicted saving per execution (the recorded engine's
replayed median minus the best's). The program is then run again, unrecorded, with the default
and with replay's best, interleaved REPEATS times each: the median of its own medians gives
the measured saving. Passes when replay names another engine than the recorded one and the
measured saving is within 20 % of the predicted. Prints every candidate replay made (engine,
knobs, source, median, spread, status) and what its budget left out. Each command it runs is
bounded: the replay by its budget and 60 s more, the program by 60 s. Exits 77 without a GPU.

usage: check_engine_choice.py DNNTRACE GPU_ENGINE_CHOICE WORKDIR [--budget S] [--repeats N]
"""

import json
import os
import statistics
import subprocess
import sys
import time


PROGRAM_S = 60


def timed(prog, args):
    out = subprocess.run([prog] + args, capture_output=True, text=True, timeout=PROGRAM_S)
    if out.returncode:
        raise SystemExit(out.returncode if out.returncode == 77 else
                         "FAIL: %s %s: %s" % (prog, " ".join(args), out.stderr.strip()))
    kv = dict(x.split("=", 1) for x in out.stdout.split())
    return float(kv["median_us"]), int(kv["engine"])


def table(cands):
    print("%4s %-6s %-40s %-12s %10s %7s %s" % (
        "#", "engine", "knobs", "source", "median us", "spread", "status"))
    for i, x in enumerate(cands):
        print("%4d eng%-3d %-40s %-12s %10s %7s %s%s" % (
            i, x["engine"], x.get("knobs", "")[:40], x["source"],
            "%.2f" % (x["median_ns"] / 1e3) if "median_ns" in x else "-",
            "%.3f" % x["spread"] if "spread" in x else "-", x["status"],
            "" if x.get("agrees", True) else " (outputs differ)"))


def main():
    dnntrace, prog, work = sys.argv[1:4]
    opt = lambda k, d: sys.argv[sys.argv.index(k) + 1] if k in sys.argv else d
    budget, repeats = opt("--budget", "90"), int(opt("--repeats", "5"))
    os.makedirs(work, exist_ok=True)
    trace = os.path.join(work, "choice.dnnt")
    rc = subprocess.call([dnntrace, "record", "-q", "-o", trace, "--", prog],
                         stdout=subprocess.DEVNULL, timeout=PROGRAM_S)
    if rc:
        return rc if rc == 77 else 1
    results = trace[:-5] + ".replay.jsonl"
    if os.path.exists(results):
        os.remove(results)
    start = time.monotonic()
    try:
        rc = subprocess.call([dnntrace, "replay", "--engines", "all", "--budget", budget, trace],
                             timeout=float(budget) + 60)
    except subprocess.TimeoutExpired:
        rc = -9  # killed: what it wrote is read
    print("replay: exit status %d after %.1f s of a %s s budget" % (
        rc, time.monotonic() - start, budget))
    lines = [json.loads(l) for l in open(results)]
    p = [x for x in lines[1:] if x["status"] == "measured"][0]
    c = p["candidates"]
    table(c)
    print("cut short:", json.dumps(p.get("cut_short", "no")))
    rec, best = c[0], c[p["best"]]
    ok = sum(x["status"] == "ok" for x in c)
    print("replay: %d candidates (%d timed); recorded eng%d %s %.2f us (trace %.2f us); "
          "best eng%d %s %.2f us (spread %.3f), agrees %s" % (
              len(c), ok, rec["engine"], rec.get("knobs", ""), rec["median_ns"] / 1e3,
              p["recorded_ns"] / 1e3, best["engine"], best.get("knobs", ""),
              best["median_ns"] / 1e3, best["spread"], best.get("agrees")))
    if p["best"] == p["chosen"]:
        print("FAIL: replay found no engine faster than the recorded one")
        return 1
    args = [str(best["engine"])] + (best.get("knobs") or "").split()
    base, chosen = [], []
    for _ in range(repeats):
        t, e = timed(prog, [])
        base.append(t)
        t2, e2 = timed(prog, args)
        chosen.append(t2)
    spread = lambda v: (max(v) - min(v)) / statistics.median(v)
    print("program: default (eng%d) %s us, median %.2f (spread %.3f); replay's best (eng%d) %s us, "
          "median %.2f (spread %.3f)" % (
              e, " ".join("%.2f" % x for x in base), statistics.median(base), spread(base), e2,
              " ".join("%.2f" % x for x in chosen), statistics.median(chosen), spread(chosen)))
    predicted = (rec["median_ns"] - best["median_ns"]) / 1e3
    measured = statistics.median(base) - statistics.median(chosen)
    off = (measured - predicted) / predicted
    print("saving per execution: predicted %.2f us (%.1f%%), measured %.2f us (%.1f%%): %+.1f%% off" % (
        predicted, 100 * predicted / (rec["median_ns"] / 1e3), measured,
        100 * measured / statistics.median(base), 100 * off))
    if abs(off) > 0.2:
        print("FAIL: the measured saving is more than 20 % from the predicted")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
