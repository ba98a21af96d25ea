#!/usr/bin/env python3
"""The calls cuBLAS and cuBLASLt log of themselves, and the calls a dnntrace dump holds, as lists
of (function, {argument: value}) in call order, for check_cublas.py.

cuBLAS logs with CUBLAS_LOGINFO_DBG=1 and CUBLAS_LOGDEST_DBG=<file>, a record per call, in the
form cuBLAS 13.1 writes:

    I! cuBLAS (v13.1.0) function cublasStatus_t cublasSgemm_v2(cublasHandle_t, ...) called:
    i!  transa: type=cublasOperation_t; val=CUBLAS_OP_N(0)
    i!  m: type=int; val=256
    i!  alpha: type=float; val=POINTER (IN HEX:0x0x7fffd0dc2f68)
    i! Time: ...
    i!Process=1231; Thread=140275267710976; GPU=0; Handle=...

cuBLASLt logs with CUBLASLT_LOG_LEVEL=5 and CUBLASLT_LOG_FILE=<file>.%i, a line per event:

    [2026-11-27 04:24:15][cublasLt][1231][Api][cublasLtMatmul] A=0X7F92... workSpaceSizeInBytes=4194304 stream=0X0
    [2026-11-27 04:24:15][cublasLt][1231][Trace][cublasLtMatmul] ... algo=[algoId=66 tile=... customOption=3 ...]

An `Api` line is a call; cuBLAS's own calls into cuBLASLt's internal functions (cublasLtSSSMatmul,
cublasLtCtxInit: not in cublasLt.h) are logged too, and are left to the caller to drop. A `Trace`
line, logged as a matmul runs, tells its algorithm. Values are kept as the text the log wrote;
number() reads the numbers among them.
"""

import re
import subprocess

# Calls cuBLAS logs that it makes of itself, inside a call of the program's: the callee, logged
# right after the caller (entry records, on the same thread). As observed with cuBLAS 13.1:
# cublasGemmBatchedEx and cublasGemmStridedBatchedEx ask cublasGetMathMode.
INTERNAL_CALLEES = {"cublasGetMathMode": re.compile(r"^cublas(Gemm\w*Batched\w*Ex|\w*gemm\w*Batched)")}

CUBLAS_HEAD = re.compile(r"^I! cuBLAS \(v[^)]*\) function .*?\b(cublas\w+)\(.*\) called:")
CUBLAS_ARG = re.compile(r"^i!\s+(\w+): type=[^;]*; val=(.*)$")
LT_LINE = re.compile(r"^\[[^]]*\]\[cublasLt\]\[(\d+)\]\[(\w+)\]\[(\w+)\]\s*(.*)$")
LT_ARG = re.compile(r"(\w+)=(\[[^]]*\]|\S+)")


def number(text):
    """The integer a logged or dumped value says, or None: `256`, `CUBLAS_OP_T(1)`, `0x7f..`,
    `POINTER (IN HEX:0x0x7f..)`, `0X7F..`, `NULL`."""
    if text is None:
        return None
    text = text.strip()
    m = re.search(r"IN HEX:0x(0x[0-9a-fA-F]+|\(nil\))", text)
    if m:
        return 0 if m.group(1) == "(nil)" else int(m.group(1), 16)
    m = re.fullmatch(r"[A-Za-z_]\w*\((-?\d+)\)", text)
    if m:
        return int(m.group(1))
    if text == "NULL":
        return 0
    try:
        return int(text, 0)
    except ValueError:
        return None


def cublas_log(path):
    """[(function, {arg: text}, thread)] of a cuBLAS log, in order."""
    calls = []
    with open(path, errors="replace") as f:
        for line in f:
            m = CUBLAS_HEAD.match(line)
            if m:
                calls.append([m.group(1), {}, None])
                continue
            if not calls:
                continue
            m = CUBLAS_ARG.match(line)
            if m:
                calls[-1][1][m.group(1)] = m.group(2)
            elif line.startswith("i!Process="):
                t = re.search(r"Thread=(\d+)", line)
                calls[-1][2] = t.group(1) if t else None
    return drop_internal([tuple(c) for c in calls])


def drop_internal(calls):
    """The calls without those cuBLAS made of itself (INTERNAL_CALLEES)."""
    out, last = [], {}
    for call in calls:
        name, _, thread = call
        caller = INTERNAL_CALLEES.get(name)
        if caller is None or not caller.match(last.get(thread, "")):
            out.append(call)
        last[thread] = name
    return out


def lt_log(path):
    """([(function, {arg: text})] of the Api lines, [(function, {arg: text})] of the Trace lines)
    of a cuBLASLt log, each in order."""
    api, trace = [], []
    with open(path, errors="replace") as f:
        for line in f:
            m = LT_LINE.match(line.rstrip("\n"))
            if not m or m.group(2) not in ("Api", "Trace"):
                continue
            args = dict(LT_ARG.findall(m.group(4)))
            (api if m.group(2) == "Api" else trace).append((m.group(3), args))
    return api, trace


def split_args(text):
    """A dumped call's argument list `a=1, b=[1,2], c=<4 bytes: ..>, d=>0x10` into {name: text}
    (an output's text keeps its `>`)."""
    args, depth, start, quoted = {}, 0, 0, False
    for i, ch in enumerate(text + ","):
        if quoted:
            quoted = not (ch == '"' and text[i - 1] != "\\")
        elif ch == '"':
            quoted = True
        elif ch in "[<(":
            depth += 1
        elif ch in "]>)" and depth:
            depth -= 1
        elif ch == "," and depth == 0:
            name, eq, value = text[start:i].strip().partition("=")
            start = i + 1
            if eq:
                args[name] = value
    return args


DUMP_CALL = re.compile(r"^API_CALL seq=(\d+) tid=(\d+) .*? (\w+)\((.*)\) = (-?\d+)(.*)$")


def parse_dump(lines):
    """[(function, {arg: text}, seq, tid, flags)] of a dump's API_CALL lines, in record order
    (flags: the text after the status: `[nested]`, `[dnntrace]`), {seq: kernels tied} and
    {seq: CUDA graph nodes the call made}."""
    calls, kernels, nodes = [], {}, {}
    for line in lines:
        m = DUMP_CALL.match(line)
        if m:
            calls.append((m.group(3), split_args(m.group(4)), int(m.group(1)), m.group(2),
                          m.group(6)))
        elif line.startswith(("KERNEL ", "GRAPH_NODE ")):
            k = re.search(r" call=(\d+)", line)
            tally = kernels if line.startswith("KERNEL") else nodes
            if k:
                tally[int(k.group(1))] = tally.get(int(k.group(1)), 0) + 1
    return calls, kernels, nodes


def dnntrace_calls(dnntrace, trace):
    """parse_dump() of `dnntrace dump TRACE`."""
    out = subprocess.run([dnntrace, "dump", trace], capture_output=True, text=True,
                         errors="replace", check=True).stdout
    return parse_dump(out.splitlines())
