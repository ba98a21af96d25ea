#!/usr/bin/env python3
"""Calibration table of a replay's results file (replay/REPLAY.md).

Per cuDNN problem: its share of the trace's cuDNN GPU time (recorded median
x executions), the recorded median, the recorded engine's replayed medians
by events and by kernels (CUPTI), the calibration and its measure, and
whether replay flagged it (over 15 % off); then the share of cuDNN GPU time
within 15 %, by the results' calibration and, for comparison, by the
events. A continued replay appends lines: a problem's last line is what it
measured, as `dnntrace report` reads it.

    python3 tests/gpu/calib_table.py TRACE.replay.jsonl [--library cudnn]
"""
import argparse
import json
import sys


def problems(lines, library="cudnn"):
    """The last line of each problem of library, in the file's order."""
    last = {}
    for p in lines[1:]:
        if "problem" in p and p.get("api", "").startswith(library):
            last[p["problem"]] = p
    return list(last.values())


def within(probs):
    """Shares of GPU time (0..1) that calibrated: by the results' own flag,
    and by the events' median within 15 %."""
    total = sum(p["recorded_ns"] * p["executions"] for p in probs) or 1
    ok = ok_events = 0.0
    for p in probs:
        share = p["recorded_ns"] * p["executions"] / total
        if p["status"] != "measured":
            continue
        if not p.get("uncertain", True):
            ok += share
        rec, ev = p["recorded_ns"], p.get("replayed_ns", 0)
        if rec and ev and abs(ev / rec - 1) <= 0.15:
            ok_events += share
    return ok, ok_events


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", help="a replay's results file (JSON lines)")
    ap.add_argument("--library", default="cudnn",
                    help="the problems of calls whose name starts so (default %(default)s)")
    a = ap.parse_args(argv)
    with open(a.results) as f:
        lines = [json.loads(l) for l in f if l.strip()]
    probs = problems(lines, a.library)
    total = sum(p["recorded_ns"] * p["executions"] for p in probs) or 1
    print("%6s %6s %11s %11s %11s %6s %-7s %-9s %s" % (
        "share", "execs", "recorded", "events", "kernels", "calib", "by", "flag", "status | brief"))
    for p in sorted(probs, key=lambda p: -p["recorded_ns"] * p["executions"]):
        what = p["status"] if p["status"] == "measured" else "%s: %s" % (p["status"], p.get("reason", ""))
        print("%5.1f%% %6d %8.1f us %8.1f us %8.1f us %5.2fx %-7s %-9s %s | %s" % (
            100 * p["recorded_ns"] * p["executions"] / total, p["executions"],
            p["recorded_ns"] / 1e3, p.get("replayed_ns", 0) / 1e3,
            p.get("replayed_kernels_ns", 0) / 1e3, p.get("calibration", 0),
            p.get("calibration_by", "-"), "uncertain" if p.get("uncertain", True) else "-",
            str(what)[:60], p.get("brief", "")[:80]))
    ok, ok_events = within(probs)
    print("%s GPU time within 15%% of the recorded median: %.1f%% by the results' calibration, "
          "%.1f%% by the events (of %.1f us, %d problems)"
          % (a.library, 100 * ok, 100 * ok_events, total / 1e3, len(probs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
