#!/usr/bin/env python3
"""Count calls per cuDNN function in dnntrace traces; print JSON {function: count}.

    dnntrace_calls.py DNNTRACE_BIN TRACE.dnnt [TRACE.dnnt ...] [-o OUT.json]

Runs `DNNTRACE_BIN dump TRACE` for each trace (one per process) and counts the lines that start
with `API_CALL`, by function name: the token right before the first `(` on the line, as in

    API_CALL seq=12 tid=4242 t=0.001234567 dur=850ns cudnnSetTensor4dDescriptor(tensorDesc=...) -> ...

The counts of all traces are added up. It does not decode anything else. Exit status: 0 when every
dump succeeded, 1 when a dump exited non-zero or reported lost records (the counts it could read are
still written: a truncated trace still has its calls), 2 on bad usage or when the dnntrace binary
cannot be run.
"""

import argparse
import collections
import json
import subprocess
import sys


def call_name(line):
    """The function name of an API_CALL dump line, or None when the line has no `name(`."""
    head, paren, _ = line.partition("(")
    if not paren:
        return None
    words = head.split()
    if len(words) < 2 or not words[-1].isidentifier():
        return None
    return words[-1]


def count_dump(lines, counts, prefix="cudnn"):
    """Add the API_CALL lines of one dump whose function starts with prefix to counts;
    return (malformed lines, LOSS lines)."""
    malformed = losses = 0
    for line in lines:
        if line.startswith("API_CALL"):
            name = call_name(line)
            if name:
                if name.startswith(prefix):
                    counts[name] += 1
            else:
                malformed += 1
        elif line.startswith("LOSS"):
            losses += 1
    return malformed, losses


def dump_and_count(dnntrace, trace, counts):
    """Run `dnntrace dump trace`, streaming its output into counts; return a list of problems."""
    with subprocess.Popen([dnntrace, "dump", trace], stdout=subprocess.PIPE, universal_newlines=True,
                          errors="replace") as proc:
        malformed, losses = count_dump(proc.stdout, counts)
    rc = proc.returncode
    problems = []
    if rc != 0:
        problems.append("%s: `dnntrace dump` exited with status %d" % (trace, rc))
    if malformed:
        problems.append("%s: %d API_CALL lines without `name(`" % (trace, malformed))
    if losses:
        problems.append("%s: %d LOSS records: the trace is missing calls" % (trace, losses))
    return problems


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dnntrace", help="the dnntrace binary (BUILD_DIR/tools/dnntrace)")
    parser.add_argument("traces", nargs="+", help="trace files (.dnnt), one per process")
    parser.add_argument("-o", "--output", help="write the JSON here instead of stdout")
    args = parser.parse_args(argv)
    counts = collections.Counter()
    problems = []
    try:
        for trace in args.traces:
            problems += dump_and_count(args.dnntrace, trace, counts)
    except OSError as e:
        print("dnntrace_calls: cannot run %s: %s" % (args.dnntrace, e), file=sys.stderr)
        return 2
    text = json.dumps(dict(sorted(counts.items())), indent=1, sort_keys=True) + "\n"
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    for problem in problems:
        print("dnntrace_calls: " + problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
