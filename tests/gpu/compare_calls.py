#!/usr/bin/env python3
"""Compare two call-count maps (JSON {function: count}): dnntrace's trace against cuDNN's log.

    compare_calls.py DNNTRACE_JSON CUDNN_LOG_JSON [--ignore FUNC]...

Prints one row per function that either side saw (function, dnntrace count, cuDNN log count,
match), then the summary line `calls: N functions, M match, K differ`. Exit status: 0 when every
function matches, 1 when some differ (or neither side saw any call), 2 when an input cannot be
read. --ignore FUNC shows FUNC's row as "ignored" and leaves it out of N, M and K (for calls one
side makes on its own, such as the tracer's own queries to cuDNN; say why wherever you use it).
"""

import argparse
import json
import sys


def load_counts(path):
    """Read {function: count} from a JSON file; raise ValueError when it is not such a map."""
    with open(path) as f:
        data = json.load(f)
    if not isinstance(data, dict) or not all(
            isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) for k, v in data.items()):
        raise ValueError("%s: not a JSON object of function name to integer count" % path)
    return data


def compare(traced, logged, ignore=()):
    """Return rows (function, traced count, logged count, verdict) sorted by function name.

    verdict is "yes", "NO" or "ignored"; a function one side never saw counts 0 there.
    """
    rows = []
    for name in sorted(set(traced) | set(logged)):
        a, b = traced.get(name, 0), logged.get(name, 0)
        verdict = "ignored" if name in ignore else ("yes" if a == b else "NO")
        rows.append((name, a, b, verdict))
    return rows


def format_table(rows):
    """The rows as an aligned text table with a header."""
    header = ("function", "dnntrace", "cudnn log", "match")
    width = max([len(header[0])] + [len(r[0]) for r in rows])
    lines = ["%-*s %10s %10s  %s" % (width, *header)]
    for name, a, b, verdict in rows:
        diff = "" if a == b else "  (%+d)" % (a - b)
        lines.append("%-*s %10d %10d  %s%s" % (width, name, a, b, verdict, diff))
    return "\n".join(lines)


def summary(rows):
    """`calls: N functions, M match, K differ` over the rows not ignored."""
    checked = [r for r in rows if r[3] != "ignored"]
    match = sum(1 for r in checked if r[3] == "yes")
    return "calls: %d functions, %d match, %d differ" % (len(checked), match, len(checked) - match)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dnntrace_json", help="counts from dnntrace_calls.py")
    parser.add_argument("cudnn_json", help="counts from cudnn_log_calls.py")
    parser.add_argument("--ignore", action="append", default=[], metavar="FUNC",
                        help="show FUNC but leave it out of the verdict (repeatable)")
    args = parser.parse_args(argv)
    try:
        traced = load_counts(args.dnntrace_json)
        logged = load_counts(args.cudnn_json)
    except (OSError, ValueError) as e:
        print("compare_calls: %s" % e, file=sys.stderr)
        return 2
    rows = compare(traced, logged, set(args.ignore))
    print(format_table(rows))
    line = summary(rows)
    print(line)
    ignored = [r[0] for r in rows if r[3] == "ignored"]
    if ignored:
        print("ignored: " + ", ".join(ignored))
    if not rows:
        print("compare_calls: neither side saw any call: nothing was compared", file=sys.stderr)
        return 1
    return 0 if line.endswith(" 0 differ") else 1


if __name__ == "__main__":
    sys.exit(main())
