"""Replay against cudnn-frontend's autotuning: does replay find PyTorch's choice the fastest?

Records wl_autotune.py (torch.backends.cudnn.benchmark = True: PyTorch times every plan
cudnn-frontend offers for each convolution and runs the fastest), replays the trace with
`--engines heuristic`, and for each convolution measured prints the engine autotune chose (the
recorded one) and replay's best, with their replayed medians and spreads. Autotune's choice
agrees when it is replay's best, or when the best is faster by no more than 5 % of its time
or than the larger spread of the two (the report's engine-choice threshold).

Where they disagree, the autotuner's own measurements decide: its trial runs of each engine
config are in the trace (cudnn-frontend executes every plan it times, and dnntrace records
those executions with their kernels). Replay's best is confirmed when, in those trials, its
config's kernels ran faster than those of the config autotune chose (beyond 5 %): replay then
agrees with what the autotuner measured, and the choice was made against its own kernels
(frontend times each plan with events around its host calls). Exits 1 when a convolution
disagrees and the trials do not confirm replay, 77 without a GPU.

usage: check_autotune.py DNNTRACE WORKDIR [--budget S] [--trace TRACE]
  --trace: a trace of wl_autotune.py replayed already (its .replay.jsonl beside it): no GPU
"""

import collections
import json
import os
import re
import statistics
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))


def without_uids(s):
    return re.sub(r"#\d+", "#", s)


def trials(dnntrace, trace):
    """Each executed problem's runs by engine config, from the trace: {problem (uids left
    out): {"engN KNOBS": [kernel ns, ...]}}."""
    out = subprocess.run([dnntrace, "ops", "--format", "json", "--with-warmup", trace],
                         capture_output=True, text=True, check=True).stdout
    runs = collections.defaultdict(lambda: collections.defaultdict(list))
    for op in json.loads(out)["ops"]:
        if op["api"] != "cudnnBackendExecute" or not op["kernels"] or op["engine"] < 0:
            continue
        problem = without_uids(re.sub(r"^plan=\d+ ", "", op["desc"]).split(" knobs{")[0]
                               .split(" notes{")[0])
        knobs = " ".join("%s=%s" % kv for kv in (op["knobs"] or {}).items())
        runs[problem][config(op["engine"], knobs)].append(op["gpu_ns"])
    return runs


def config(engine, knobs):
    return ("eng%d %s" % (engine, knobs)).strip()


def trial_median(tried, cfg):
    return statistics.median(tried[cfg]) if cfg in tried else None


def main():
    dnntrace, work = sys.argv[1], sys.argv[2]
    budget = sys.argv[sys.argv.index("--budget") + 1] if "--budget" in sys.argv else "60"
    if "--trace" in sys.argv:
        return check(dnntrace, sys.argv[sys.argv.index("--trace") + 1])
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
    return check(dnntrace, trace)


def check(dnntrace, trace):
    lines = [json.loads(l) for l in open(trace[:-5] + ".replay.jsonl")]
    tried = trials(dnntrace, trace)
    bad = confirmed = 0
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
        print("%-44s %-30s %8.1fus %-30s %8.1fus %7.3f  %s (%d candidates)" % (
            p.get("brief", "")[:44], name(rec)[:30], rec["median_ns"] / 1e3, name(best)[:30],
            best["median_ns"] / 1e3, best["median_ns"] / rec["median_ns"], verdict, len(c)))
        if verdict != "replay finds faster":
            continue
        # the autotuner's own trial runs of the two configs, as the trace holds them
        runs = tried.get(without_uids(p["problem"]), {})
        chose = trial_median(runs, config(rec["engine"], rec.get("knobs", "")))
        found = trial_median(runs, config(best["engine"], best.get("knobs", "")))
        ok = chose is not None and found is not None and found < 0.95 * chose
        confirmed += ok
        bad += not ok
        print("  autotune's trials (kernels, median): its choice %s, replay's best %s: %s" % (
            "%.1fus" % (chose / 1e3) if chose else "not run",
            "%.1fus" % (found / 1e3) if found else "not run",
            "replay agrees with the trials" if ok else "the trials do not confirm replay"))
    print("%d convolutions where replay finds a faster engine than autotune's: %d confirmed by "
          "the autotuner's own trial runs, %d not" % (bad + confirmed, confirmed, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
