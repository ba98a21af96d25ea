#!/usr/bin/env python3
"""Per-operation GPU times of a sampled trace against a fully traced run.

usage: check_sampled.py FULL.json SAMPLED.json [--tol 0.05] [--min-share 0.9]
       [--baseline FULL2.json]

The two files are `dnntrace report --format json` of two runs of one
workload: one recorded with every launch traced, one with `record
--gpu-sample`. Operations are matched by their problem (what they
computed); for each, the median and the mean GPU time per execution of the
sampled run are compared with the full run's. With --baseline (a second
fully traced run), the same comparison between the two full runs is shown
beside it: how far two runs differ anyway.

Exit status 0 when the operations within --tol (relative, median and mean)
hold at least --min-share of the full run's cuDNN GPU time, 1 otherwise, 2
on bad input.
"""
import argparse
import json
import sys


def problems(path):
    with open(path) as f:
        rep = json.load(f)
    out = {}
    for p in rep.get("ops", []):
        timed = p.get("timed", p["count"])
        if timed and p.get("median_ns"):
            out[p["problem"]] = p
    return rep, out


def rel(a, b):
    return (b - a) / a if a else float("inf")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("full")
    ap.add_argument("sampled")
    ap.add_argument("--baseline", help="a second fully traced run")
    ap.add_argument("--tol", type=float, default=0.05)
    ap.add_argument("--min-share", type=float, default=0.9)
    a = ap.parse_args()
    try:
        _, full = problems(a.full)
        srep, samp = problems(a.sampled)
        base = problems(a.baseline)[1] if a.baseline else None
    except (OSError, ValueError, KeyError) as e:
        print("check_sampled: %s" % e, file=sys.stderr)
        return 2
    files = srep.get("files", [])
    sample = [f["gpu_sample"] for f in files if "gpu_sample" in f]
    if not sample:
        print("check_sampled: %s is not a sampled trace" % a.sampled,
              file=sys.stderr)
        return 2
    s = sample[0]
    print("sampled: one window of %d ms in %d, %d windows, %d op executions "
          "outside them" % (s["window_ms"], s["one_in"], s["windows"],
                            s["unsampled_ops"]))
    total = sum(p["gpu_ns"] for p in full.values())
    within = matched = 0
    print("%-9s %-9s %10s %10s %8s %8s %s" %
          ("full n", "timed", "full med", "sampl med", "d med", "d mean",
           "operation" + ("  [two full runs: d med, d mean]" if base else "")))
    for key, f in sorted(full.items(), key=lambda kv: -kv[1]["gpu_ns"]):
        p = samp.get(key)
        if not p:
            print("%-9d %-9s %10.1f %10s %8s %8s %s" %
                  (f["count"], "-", f["median_ns"] / 1e3, "-", "-", "-",
                   f["brief"][:60]))
            continue
        matched += f["gpu_ns"]
        dm = rel(f["median_ns"], p["median_ns"])
        da = rel(f["mean_ns"], p["mean_ns"])
        ok = abs(dm) <= a.tol and abs(da) <= a.tol
        within += f["gpu_ns"] if ok else 0
        extra = ""
        if base and key in base:
            b = base[key]
            extra = "  [%+.1f%% %+.1f%%]" % (
                100 * rel(f["median_ns"], b["median_ns"]),
                100 * rel(f["mean_ns"], b["mean_ns"]))
        print("%-9d %-9s %10.1f %10.1f %+7.1f%% %+7.1f%% %s%s%s" %
              (f["count"], "%d/%d" % (p.get("timed", p["count"]), p["count"]),
               f["median_ns"] / 1e3, p["median_ns"] / 1e3, 100 * dm, 100 * da,
               "" if ok else "OFF ", f["brief"][:60], extra))
    share = within / total if total else 0
    print("summary: operations holding %.1f%% of the full run's cuDNN GPU "
          "time matched, %.1f%% within %.0f%% (median and mean)" %
          (100 * matched / total if total else 0, 100 * share, 100 * a.tol))
    return 0 if share >= a.min_share else 1


if __name__ == "__main__":
    sys.exit(main())
