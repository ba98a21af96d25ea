#!/usr/bin/env python3
"""Check what dnntrace's model decoded for every execution against cuDNN's own API log.

    check_ops.py DNNTRACE TRACE CUDNN_LOG [CUDNN_LOG...]

The trace and the log(s) must come from the same run (CUDNN_LOGLEVEL_DBG=3 and dnntrace
together). For every cudnnBackendExecute the application made, in order, it compares the
engine id and the graph's tensors (uid, dims, strides, data type, virtual) that `dnntrace ops
--format json` reports, and the engine's knob choices and numerical notes, with what cuDNN printed in the call's record; for every legacy
call that executes (convolutions, batch norm, pooling, RNN, ...) the algorithm and workspace
size where it has them, and the dims and strides of its tensor descriptors. Executes that cuDNN made inside other calls (XLA's
autotuning inside cudnnBackendFinalize) are not application calls and are skipped, as the
call-count oracle does.

Prints a summary per kind and the first mismatches; the last line is
`ops: N compared, M agree, K differ`. Exit 0 when all agree. Logs may be gzipped.
"""

import gzip
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cudnn_log_calls as logs  # noqa: E402

FIELD = re.compile(r"^(\s*)(\w+): type=([^;:]+)(?:; val=(.*?);?)?:?$")
# Public functions that log an entry and an exit record; internal ones (such as
# cudnnBackendGetMetadataFromGraph) log an entry only and cannot be bracketed.
ENTRY_EXIT = {"cudnnCreate"} | {"cudnnBackend" + f for f in (
    "CreateDescriptor", "DestroyDescriptor", "Initialize", "Finalize", "SetAttribute",
    "GetAttribute", "Execute", "PopulateCudaGraph", "UpdateCudaGraph")}


def ints(text):
    return [int(v) for v in re.findall(r"-?\d+", text)]


def enum_short(val):
    """`CUDNN_DATA_BFLOAT16 (9)` -> `BFLOAT16`."""
    name = val.split(" (")[0]
    return name[len("CUDNN_DATA_"):] if name.startswith("CUDNN_DATA_") else name


def blocks(body, block_type):
    """Each nested block of the given type (or types, a tuple) as {field: value} (one level of
    fields), in the record's order."""
    types = block_type if isinstance(block_type, tuple) else (block_type,)
    out, i = [], 0
    while i < len(body):
        m = FIELD.match(body[i])
        if m and m.group(3) in types:
            depth, fields = len(m.group(1)), {"_name": m.group(2)}
            i += 1
            while i < len(body):
                f = FIELD.match(body[i])
                if not f or len(f.group(1)) <= depth:
                    break
                if f.group(4) is not None and f.group(2) not in fields:
                    fields[f.group(2)] = f.group(4)
                i += 1
            out.append(fields)
            continue
        i += 1
    return out


def first_value(body, name):
    for line in body:
        m = FIELD.match(line)
        if m and m.group(2) == name and m.group(4) is not None:
            return m.group(4)
    return None


def app_records(paths):
    """The application's entry records, in log order, with nested calls left out."""
    for path in paths:
        opener = gzip.open if path.endswith(".gz") else open
        open_calls = {}  # thread -> [function of entries awaiting their exit]
        with opener(path, "rt", encoding="utf-8", errors="replace") as f:
            for rec in logs.read_records(f):
                if rec.is_annotation() or logs.is_pseudo(rec.func):
                    continue
                stack = open_calls.setdefault(rec.thread(), [])
                if rec.is_exit():
                    if rec.func in stack:
                        del stack[len(stack) - 1 - stack[::-1].index(rec.func)]
                    continue
                nested = bool(stack)
                if rec.func in ENTRY_EXIT:
                    stack.append(rec.func)
                if not nested:
                    yield rec


def log_notes(body):
    """The numerical notes (TENSOR_CORE, ...) of the record's first numericalNotes block."""
    notes, inside = set(), None
    for line in body:
        m = FIELD.match(line)
        if not m:
            continue
        if m.group(2) == "numericalNotes":
            if inside is not None:
                break
            inside = len(m.group(1))
        elif inside is not None:
            if len(m.group(1)) <= inside:
                break
            if m.group(2).startswith("CUDNN_NUMERICAL_NOTE_") and m.group(4) == "true":
                notes.add(m.group(2)[len("CUDNN_NUMERICAL_NOTE_"):])
    return notes


def log_knobs(body):
    """{knob: value} of the record's first knobDesc block."""
    knobs, inside = {}, None
    for line in body:
        m = FIELD.match(line)
        if not m:
            continue
        if m.group(2) == "knobDesc":
            if inside is not None:
                break
            inside = len(m.group(1))
        elif inside is not None:
            if len(m.group(1)) <= inside:
                break
            # -1: the knob is left at its default, not a choice
            if (m.group(2).startswith("CUDNN_KNOB_TYPE_") and m.group(4) is not None
                    and int(m.group(4)) != -1):
                knobs[m.group(2)[len("CUDNN_KNOB_TYPE_"):]] = int(m.group(4))
    return knobs


def log_tensor(t):
    return (int(t.get("uid", "0")), tuple(ints(t.get("dimA", ""))),
            tuple(ints(t.get("strideA", ""))), enum_short(t.get("type", "?")),
            t.get("isVirtual", "false") == "true")


def log_tensors(body):
    """The graph's tensors in a backend run's record, but for host scalars (passed by value, left
    out on both sides) and empty slots. An operation's record prints every tensor slot its kind
    has: the unified SDPA forward operation (CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR) prints
    statsDesc, blockMaskDesc, pageTableKDesc, pageTableVDesc, seqLenQDesc and seqLenKVDesc also
    when the program set none of them (inference: no softmax statistics), as a descriptor never
    set: FLOAT, nbDims -1, no dims, uid -1. The program passed no such tensor (cuDNN finalizes no
    tensor descriptor without dimensions), so the trace rightly lacks it."""
    return {log_tensor(t) for t in blocks(body, "CUDNN_BACKEND_TENSOR_DESCRIPTOR")
            if t.get("isByVal") != "true" and t.get("nbDims") != "-1"}


# The calls that run a backend plan: executed now, or put into a CUDA graph.
BACKEND_RUNS = {"cudnnBackendExecute", "cudnnBackendPopulateCudaGraph",
                "cudnnBackendUpdateCudaGraph"}


def from_log(paths, legacy_names):
    execs, convs = [], []
    for rec in app_records(paths):
        if rec.func in BACKEND_RUNS:
            engine = first_value(rec.body, "engine_id")
            tensors = log_tensors(rec.body)
            # an RNG operation (dropout) shows its seed as a number, not as the seed and
            # offset tensors the graph has (the variant pack passes them: uids in the trace)
            rng = any("CUDNN_BACKEND_OPERATION_RNG_DESCRIPTOR" in line for line in rec.body)
            execs.append((rec.func, int(engine) if engine else None, tensors,
                          log_knobs(rec.body), log_notes(rec.body), rng))
        elif rec.func in legacy_names:
            ts = {}
            # in parameter order: older functions' records name them as cuDNN 7 did
            # (srcDesc, destDesc, srcDiffDesc, destDiffDesc)
            for t in blocks(rec.body, ("cudnnTensorDescriptor_t", "cudnnFilterDescriptor_t")):
                filt = "strideA" not in t
                ts[t["_name"]] = (tuple(ints(t.get("dimA", ""))),
                                  None if filt else tuple(ints(t.get("strideA", ""))))
            algo = first_value(rec.body, "algo")
            ws = first_value(rec.body, "workSpaceSizeInBytes")
            convs.append((rec.func, ints(algo)[-1] if algo else None,
                          int(ws) if ws else None, ts))
    return execs, convs


def from_trace(dnntrace, trace):
    out = subprocess.run([dnntrace, "ops", "--format", "json", "--with-warmup", trace], capture_output=True,
                         text=True, check=True).stdout
    execs, convs = [], []
    for op in json.loads(out)["ops"]:
        if op.get("origin") == "replay":
            continue  # a CUDA graph's launch, not a call: the log has none
        if not op["api"].startswith("cudnn"):
            continue  # another library's (cuBLAS's GEMMs): not in cuDNN's log
        if op["api"] in BACKEND_RUNS:
            # tensors passed by value (host scalars) are left out on both sides
            tensors = {(t["uid"], tuple(t["dims"]), tuple(t["strides"]), t["dtype"], t["virtual"])
                       for t in op["tensors"] if not t.get("by_value")}
            execs.append((op["api"], op["engine"] if op["engine"] >= 0 else None, tensors,
                          op["knobs"], set(op["notes"])))
        elif op["desc"]:
            # (an op with no description is a call that is no computation,
            # cudnnCreate say, listed because it launched work; it launched
            # nothing in other runs, so it is not compared)
            ts = {t["role"] + "Desc": (tuple(t["dims"]), tuple(t["strides"])) for t in op["tensors"]}
            convs.append((op["api"], op["engine"] if "algo" in op["desc"] else None,
                          op["workspace"] if op["workspace"] >= 0 else None, ts))
    return execs, convs


def compare_legacy_tensors(ours, theirs):
    """The log names legacy descriptors by parameter (xDesc, wDesc, ...), or as cuDNN 7 did
    (srcDesc, destDesc, ...) for activation, softmax, pooling, LRN and others: those are
    matched by their place in the parameter list. Filters have no strides in the log."""
    by_place = dict(zip(theirs, ours))
    for name, (dims, strides) in theirs.items():
        if not dims:
            continue  # a NULL descriptor: the log prints it empty
        mine = ours.get(name) or ours.get(by_place.get(name))
        if not mine or mine[0] != dims or (strides is not None and mine[1] != strides):
            return False
    return True


def rng_tensors(only_in_trace):
    """A dropout's seed and offset: INT64 tensors of one element, at most two."""
    return len(only_in_trace) <= 2 and all(
        dtype == "INT64" and all(d == 1 for d in dims)
        for _, dims, _, dtype, _ in only_in_trace)


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    dnntrace, trace, log_paths = argv[1], argv[2], argv[3:]
    t_execs, t_convs = from_trace(dnntrace, trace)
    l_execs, l_convs = from_log(log_paths, {c[0] for c in t_convs})
    problems, compared, agree = [], 0, 0
    if len(l_execs) != len(t_execs):
        problems.append("backend executions: %d in the trace, %d in the log"
                        % (len(t_execs), len(l_execs)))
    engine_ok = tensors_ok = knobs_ok = knobs_unknown = notes_ok = notes_unknown = 0
    for i, ((ta, te, tt, tk, tn), (la, le, lt, lk, ln, rng)) in enumerate(zip(t_execs, l_execs)):
        compared += 1
        if rng and lt <= tt and rng_tensors(tt - lt):
            tt = lt
        # what nobody read back is unknown to the trace, not wrong
        if not tk and lk:
            knobs_unknown += 1
            tk = lk
        if not tn and ln:
            notes_unknown += 1
            tn = ln
        e_ok, t_ok, k_ok, n_ok = te == le and ta == la, tt == lt, tk == lk, tn == ln
        engine_ok += e_ok
        tensors_ok += t_ok
        knobs_ok += k_ok
        notes_ok += n_ok
        agree += e_ok and t_ok and k_ok and n_ok
        if not (e_ok and t_ok and k_ok and n_ok) and len(problems) < 10:
            problems.append("execute #%d: %s engine %s vs log %s %s; knobs %s vs log %s; notes "
                            "%s vs log %s; tensors only in trace %s, only in log %s"
                            % (i + 1, ta, te, la, le, tk, lk, sorted(tn), sorted(ln),
                               sorted(tt - lt)[:2], sorted(lt - tt)[:2]))
    print("backend executions: %d compared; engine ids agree on %d, knobs on %d (%d unknown), "
          "numerical notes on %d (%d unknown), tensors on %d"
          % (min(len(t_execs), len(l_execs)), engine_ok, knobs_ok - knobs_unknown, knobs_unknown,
             notes_ok - notes_unknown, notes_unknown, tensors_ok))
    if len(l_convs) != len(t_convs):
        problems.append("legacy calls: %d in the trace, %d in the log"
                        % (len(t_convs), len(l_convs)))
    conv_ok = 0
    for i, (t, l) in enumerate(zip(t_convs, l_convs)):
        compared += 1
        # the algorithm and workspace where the call has them; tensors by name
        ok = (t[0] == l[0] and (l[1] is None or t[1] == l[1]) and (l[2] is None or t[2] == l[2])
              and compare_legacy_tensors(t[3], l[3]))
        conv_ok += ok
        agree += ok
        if not ok and len(problems) < 10:
            bad = [(k, t[3].get(k), v) for k, v in l[3].items()
                   if not compare_legacy_tensors(t[3], {k: v})]
            problems.append("legacy #%d: trace %s algo %s ws %s vs log %s algo %s ws %s; "
                            "tensors (name, trace, log) %s"
                            % (i + 1, t[0], t[1], t[2], l[0], l[1], l[2], bad[:2]))
    print("legacy calls that execute: %d compared; %d agree (algorithm, workspace, tensors)"
          % (min(len(t_convs), len(l_convs)), conv_ok))
    for p in problems:
        print("  " + p)
    differ = compared - agree + (len(l_execs) != len(t_execs)) + (len(l_convs) != len(t_convs))
    print("ops: %d compared, %d agree, %d differ" % (compared, agree, differ))
    return 0 if differ == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
