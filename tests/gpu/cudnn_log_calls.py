#!/usr/bin/env python3
"""Count the application's calls per cuDNN function in cuDNN API logs; print JSON {function: count}.

The logs are what cuDNN itself writes with CUDNN_LOGLEVEL_DBG=3 and CUDNN_LOGDEST_DBG=<file>
(`%i` in the file name becomes the pid). This is the oracle that dnntrace's call counts are
checked against. It is not a general log decoder: it only decides, record by record, whether the
record is a call the application made.

A record starts with a header line, in the form cuDNN 9.19 writes

    I! CuDNN (v91900 56) function cudnnSetStream() called:

(I/W/E severity; body lines prefixed `i!`/`w!`/`e!`), or in the older documented form
`cuDNN (v90000) function cudnnSetStream() called:` (no prefixes). It ends with
`Time: ...` and `Process=<pid>; Thread=<tid>; ...` (older: `Process: <pid>, Thread: <tid>, ...`).

What counts as a call, as observed with cuDNN 9.19 (see tests/gpu/README.md):
  * only I (info) records: W and E records are warnings/tracebacks attached to a call;
  * backend-style functions (cudnnBackend*, cudnnCreate, ...) log an entry record and an exit
    record whose top-level body has `status: type=cudnnStatus_t`; exit records are not calls.
    cudnnGetErrorString is the one function whose *argument* is named `status`;
  * records logged under an internal name count as the public function they stand for
    (INTERNAL_NAMES: cudnnCTCLossInternal is cudnnCTCLoss, or cudnnCTCLoss_v8 when the labels
    are in device memory);
  * pseudo-functions are dropped: cudnnGraphLibraryConfigInit, cudnnBackendExecuteInternal,
    names ending in `Visualize`, names containing `_CUDNN_ATTR_`;
  * calls cuDNN makes internally are dropped. Two detectors, both per thread:
      - bracket: any record between an entry record and its exit record on the same thread was
        made from inside that call (the application's thread is blocked in it);
      - known pairs (INTERNAL_CALLEES): single-record legacy functions that log a public callee
        right after their own record, e.g. cudnnSetTensor4dDescriptor logs
        cudnnSetTensor4dDescriptorEx. The callee record is dropped only when the record just
        before it on the same thread is its parent, that parent has not had this callee dropped
        already, and the fields the two records share by name have equal values. An application
        that itself calls the callee next still gets its call counted.
"""

import argparse
import collections
import json
import re
import sys

HEADER_RE = re.compile(r"^(?:([IWE])! )?[Cc]uDNN \(v(\d+)(?: (\d+))?\) function (\w+)\(\) called:")
THREAD_RE = re.compile(r"Process[=:] ?(\d+)[;,] Thread[=:] ?(\d+)")
FIELD_RE = re.compile(r"^( *)([A-Za-z_][\w\[\]]*): ?(.*)$")
BODY_PREFIXES = ("i!", "w!", "e!")

PSEUDO_FUNCTIONS = {"cudnnGraphLibraryConfigInit", "cudnnBackendExecuteInternal"}

# Functions whose entry record has a top-level `status:` argument (not an exit record).
STATUS_ARGUMENT_FUNCTIONS = {"cudnnGetErrorString"}

# callee -> parents that call it internally, logging the callee's record right after their own.
# Observed with cuDNN 9.19 on CPU (tests/gpu/README.md says how to find more: --stats).
INTERNAL_CALLEES = {
    "cudnnSetTensor4dDescriptorEx": ("cudnnSetTensor4dDescriptor",),
    "cudnnSetPoolingNdDescriptor": ("cudnnSetPooling2dDescriptor",),
    "cudnnGetPoolingNdForwardOutputDim": ("cudnnGetPooling2dForwardOutputDim",),
}
PAIR_FUNCTIONS = set(INTERNAL_CALLEES) | {p for ps in INTERNAL_CALLEES.values() for p in ps}

# Per-thread records kept for looking back (bracket openers, the previous record).
HISTORY = 8192


def is_pseudo(name):
    """True for log entries that are not functions of the API."""
    return (name in PSEUDO_FUNCTIONS or name.endswith("Visualize") or "_CUDNN_ATTR_" in name)


class Record:
    """One log record: header facts plus its body lines (prefix `i!` etc. removed)."""

    __slots__ = ("severity", "func", "body")

    def __init__(self, severity, func):
        self.severity = severity  # "I", "W", "E", or None in the older format
        self.func = func
        self.body = []

    def thread(self):
        """(pid, tid) from the trailer line; ("?", "?") if the record has none."""
        for line in reversed(self.body):
            m = THREAD_RE.search(line)
            if m:
                return m.group(1), m.group(2)
        return "?", "?"

    def is_annotation(self):
        """W/E records (and tracebacks in the older format) annotate a call; they are none."""
        if self.severity is not None:
            return self.severity != "I"
        return any("Traceback contains" in line for line in self.body)

    def top_fields(self):
        """{name: value text} of the top-level body fields; a nested block's lines are appended
        to its field's value. Trailer lines are not fields."""
        fields, indent, current = {}, None, None
        for line in self.body:
            stripped = line.strip()
            if not stripped or stripped.startswith("Time:") or THREAD_RE.search(stripped):
                continue
            m = FIELD_RE.match(line)
            depth = len(line) - len(line.lstrip(" "))
            if m and (indent is None or depth <= indent):
                indent, current = depth, m.group(2)
                fields[current] = m.group(3).strip()
            elif current is not None:
                fields[current] += "\n" + stripped
        return fields

    def is_exit(self):
        """True for the second (status) record of a function that logs entry and exit."""
        if self.func in STATUS_ARGUMENT_FUNCTIONS:
            return False
        if not any("status: type=cudnnStatus_t" in line for line in self.body):
            return False
        return self.top_fields().get("status", "").startswith("type=cudnnStatus_t")


# Public functions cuDNN logs under an internal name (cuDNN 9.19, checked on an H100): which
# one a record stands for follows from its arguments, since the _v8 functions take the labels
# in device memory and the older ones on the host.
INTERNAL_NAMES = {
    "cudnnCTCLossInternal": ("cudnnCTCLoss", "cudnnCTCLoss_v8"),
    "cudnnGetCTCLossWorkspaceSizeInternal": ("cudnnGetCTCLossWorkspaceSize",
                                             "cudnnGetCTCLossWorkspaceSize_v8"),
}
LABELS_ON_DEVICE = re.compile(r"^\s*(isLabelDataOnDevice: type=bool; val=true|labels: location=dev)",
                              re.M)


def public_name(record):
    """The public function a record of an internal name stands for; its own name otherwise."""
    names = INTERNAL_NAMES.get(record.func)
    if not names:
        return record.func
    return names[1] if LABELS_ON_DEVICE.search("\n".join(record.body)) else names[0]


def read_records(lines):
    """Yield the Records of a log, given its lines, named by the public function they stand
    for."""
    record = None
    for line in lines:
        line = line.rstrip("\r\n")
        m = HEADER_RE.match(line)
        if m:
            if record is not None:
                record.func = public_name(record)
                yield record
            record = Record(m.group(1), m.group(4))
        elif record is not None:
            if line[:2] in BODY_PREFIXES:
                line = line[2:]
            record.body.append(line)
    if record is not None:
        record.func = public_name(record)
        yield record


class Entry:
    """An entry record kept in its thread's history."""

    __slots__ = ("func", "counted", "open", "fields", "dropped_callees")

    def __init__(self, func, fields):
        self.func = func
        self.counted = True
        self.open = True  # no exit record seen (single-record functions stay open: harmless)
        self.fields = fields
        self.dropped_callees = set()


class CallCounter:
    """Feeds records in log order; keeps the counts and statistics of what was dropped."""

    def __init__(self):
        self.counts = collections.Counter()
        self.stats = collections.Counter()
        self.dropped = collections.Counter()  # ("bracket"|"pair", parent, callee) -> n
        self.threads = {}

    def add(self, record):
        self.stats["records"] += 1
        if record.is_annotation():
            self.stats["warning/error records"] += 1
            return
        if is_pseudo(record.func):
            self.stats["pseudo-function records"] += 1
            self.dropped[("pseudo", "", record.func)] += 1
            return
        history = self.threads.setdefault(record.thread(), collections.deque(maxlen=HISTORY))
        if record.is_exit():
            self.stats["exit records"] += 1
            self._close(history, record.func)
        else:
            self._enter(history, record)

    def _enter(self, history, record):
        fields = record.top_fields() if record.func in PAIR_FUNCTIONS else None
        entry = Entry(record.func, fields)
        parent = self._previous_counted(history)
        if parent is not None and self._is_internal_callee(parent, entry):
            parent.dropped_callees.add(entry.func)
            entry.counted = False
            self.dropped[("pair", parent.func, entry.func)] += 1
        else:
            self.counts[entry.func] += 1
        history.append(entry)

    @staticmethod
    def _previous_counted(history):
        for entry in reversed(history):
            if entry.counted:
                return entry
        return None

    @staticmethod
    def _is_internal_callee(parent, entry):
        if parent.func not in INTERNAL_CALLEES.get(entry.func, ()):
            return False
        if entry.func in parent.dropped_callees:
            return False
        shared = set(parent.fields or {}) & set(entry.fields or {})
        return all(parent.fields[name] == entry.fields[name] for name in shared)

    def _close(self, history, func):
        """Match an exit record with its entry; every counted record after that entry on this
        thread was made from inside the call."""
        for i in range(len(history) - 1, -1, -1):
            opener = history[i]
            if opener.func == func and opener.open:
                opener.open = False
                for j in range(i + 1, len(history)):
                    inner = history[j]
                    if inner.counted:
                        inner.counted = False
                        self.counts[inner.func] -= 1
                        self.dropped[("bracket", func, inner.func)] += 1
                return
        self.stats["exit records without an entry"] += 1

    def result(self):
        return {name: n for name, n in sorted(self.counts.items()) if n > 0}


def count_files(paths):
    """Count the calls of several logs (one per process); return the CallCounter."""
    counter = CallCounter()
    for path in paths:
        counter.threads = {}  # pids differ between files; start each log fresh anyway
        with open(path, encoding="utf-8", errors="replace") as f:
            for record in read_records(f):
                counter.add(record)
    return counter


def print_stats(counter, out):
    """What was read and what was dropped, for extending INTERNAL_CALLEES."""
    for key in sorted(counter.stats):
        print("%-32s %d" % (key, counter.stats[key]), file=out)
    print("application calls                %d" % sum(counter.result().values()), file=out)
    for (kind, parent, callee), n in sorted(counter.dropped.items()):
        where = " under %s" % parent if parent else ""
        print("dropped %-7s %8d  %s%s" % (kind, n, callee, where), file=out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logs", nargs="+", help="cuDNN API log files (one per process)")
    parser.add_argument("-o", "--output", help="write the JSON here instead of stdout")
    parser.add_argument("--stats", action="store_true",
                        help="print on stderr what was read and what was dropped as internal/pseudo")
    args = parser.parse_args(argv)
    try:
        counter = count_files(args.logs)
    except OSError as e:
        print("cudnn_log_calls: %s" % e, file=sys.stderr)
        return 2
    if counter.stats["records"] == 0:
        print("cudnn_log_calls: no cuDNN log record in %s (CUDNN_LOGLEVEL_DBG=3 set?)"
              % ", ".join(args.logs), file=sys.stderr)
        return 2
    text = json.dumps(counter.result(), indent=1, sort_keys=True) + "\n"
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    if args.stats:
        print_stats(counter, sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
