#!/usr/bin/env python3
"""The GEMM ops dnntrace decoded, against the calls cuBLAS and cuBLASLt log of themselves.

    check_cublas_ops.py OPS CUBLAS_LOG [LT_LOG...] [--dnntrace DNNTRACE]

OPS is `dnntrace ops --format json` of a trace, or the trace itself (a .dnnt, read with
--dnntrace, `dnntrace` by default); CUBLAS_LOG cuBLAS's log of the same run
(CUBLAS_LOGINFO_DBG=1, CUBLAS_LOGDEST_DBG=...) and LT_LOG cuBLASLt's (CUBLASLT_LOG_LEVEL=5,
CUBLASLT_LOG_FILE=...): check_cublas.py writes both beside its traces, as OUTDIR/NAME.dnnt,
OUTDIR/NAME-cublas.log and OUTDIR/NAME-lt.PID.log. cublas_log_calls.py reads the logs.

The ops compared are the calls the program made: those it ran at once and those it captured
into a CUDA graph (origin "captured"), which each library logs once, at the call; the graph's
replays run them again without calling either library, so their ops (origin "replay") are left
out. cuBLAS's ops are paired with the log's calls of the same functions, in order; cuBLASLt's
matmuls with its log's cublasLtMatmul Api lines. An Api line gives the descriptors as addresses
only: their contents (types, rows, columns, the compute descriptor's attributes) and the
algorithm are on the Trace line cuBLASLt logs as the matmul runs (or is captured), after the
Api line with the same matrices' addresses. Compared, where both sides give a number:
transposes, m, n, k, leading dimensions, batch count and strides, the matrices' types and the
compute type (cuBLAS's by its arguments; cuBLASLt's from the descriptors the log prints), the
epilogue, and the algorithm's id and attributes (tile, stages, split-k, reduction, swizzling,
custom option, inner and cluster shape) against those cuBLASLt logs as it runs.

cuBLAS's GEMMs run through cuBLASLt's typed matmuls (cublasLtTSTMatmul: cublasLtMatmul's
parameters, not in its header), recorded nested in the cuBLAS call. Given the trace itself, each
nested typed matmul's recorded pointers (matrices, descriptors, compute descriptor, workspace,
stream) are compared with its Api line (a check of the signature the shim wraps it with), and the
algorithm the cuBLAS op shows (its knobs) with the matmul's Trace line.

Prints one line per check and the differences found; exit status 0 when everything compared
matches, 1 otherwise, 2 on bad input.
"""

import argparse
import json
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cublas_log_calls as logs  # noqa: E402

# an op's parameter (analyzer-cublas-gemm.c's names) -> the logged argument (the header's)
CUBLAS_ARGS = {"transa": ("transa", "trans"), "transb": ("transb",), "m": ("m",), "n": ("n",),
               "k": ("k",), "lda": ("lda",), "ldb": ("ldb",), "ldc": ("ldc",),
               "batch": ("batchCount",), "strideA": ("strideA",), "strideB": ("strideB", "stridex"),
               "strideC": ("strideC", "stridey"), "Atype": ("Atype",), "Btype": ("Btype",),
               "Ctype": ("Ctype",), "computeType": ("computeType",), "side": ("side",),
               "uplo": ("uplo",)}

# cuBLASLt's algorithm attributes as the knobs name them -> as its Trace line may
ALGO_KEYS = {"ID": ("algoId", "algo_id", "id"), "TILE_ID": ("tile", "tileId"),
             "STAGES_ID": ("stages", "stagesId"), "SPLITK_NUM": ("splitK", "splitKNum", "numSplitsK"),
             "REDUCTION_SCHEME": ("reductionScheme", "reduction"),
             "CTA_SWIZZLING": ("swizzle", "ctaSwizzling"), "CUSTOM_OPTION": ("customOption",),
             "INNER_SHAPE_ID": ("innerShape", "innerShapeId"),
             "CLUSTER_SHAPE_ID": ("clusterShape", "clusterShapeId")}

EPILOGUES = {"DEFAULT": 1, "RELU": 2, "RELU_AUX": 130, "BIAS": 4, "RELU_BIAS": 6,
             "RELU_AUX_BIAS": 134, "DRELU": 136, "DRELU_BGRAD": 152, "GELU": 32, "GELU_AUX": 160,
             "GELU_BIAS": 36, "GELU_AUX_BIAS": 164, "DGELU": 192, "DGELU_BGRAD": 208,
             "BGRADA": 256, "BGRADB": 512}
TYPES = {"R_32F": 0, "R_64F": 1, "R_16F": 2, "R_8I": 3, "C_32F": 4, "C_64F": 5, "C_16F": 6,
         "R_8U": 8, "R_32I": 10, "R_16BF": 14, "R_8F_E4M3": 28, "R_8F_E5M2": 29}
OPS = {"OP_N": 0, "OP_T": 1, "OP_C": 2}
COMPUTE = {"16F": 64, "16F_PEDANTIC": 65, "32F": 68, "32F_PEDANTIC": 69, "32F_FAST_16F": 74,
           "32F_FAST_16BF": 75, "32F_FAST_TF32": 77, "32F_EMULATED_16BFX9": 78, "64F": 70,
           "64F_PEDANTIC": 71, "64F_EMULATED_FIXEDPOINT": 79, "32I": 72, "32I_PEDANTIC": 73}


# the names cuBLASLt's Trace lines give tiles, stages and cluster shapes (MATMUL_TILE_96x128),
# with their values, as cublasLt.h has them (read_algo_enums())
ALGO_ENUMS = {}


def read_algo_enums(header):
    """cublasLt.h's tile, stages and cluster shape enumerators, without their CUBLASLT_ prefix."""
    try:
        with open(header) as f:
            text = f.read()
    except OSError:
        return
    for name, v in re.findall(r"\bCUBLASLT_((?:MATMUL_TILE|MATMUL_STAGES|CLUSTER_SHAPE)_\w+)"
                              r"\s*=\s*(\d+)", text):
        ALGO_ENUMS[name] = int(v)


class Checks:
    def __init__(self):
        self.failures = 0

    def check(self, ok, what, examples=()):
        print("%s %s" % ("ok  " if ok else "FAIL", what))
        for e in list(examples)[:8]:
            print("     " + e)
        self.failures += not ok


def value(text):
    """A logged value as a number: cublas_log_calls.number(), or a name cuBLASLt prints
    (R_16BF, OP_T, EPILOGUE_GELU_BIAS, CUBLASLT_EPILOGUE_BIAS, COMPUTE_32F, COMPUTE_32F(68))."""
    if text is None:
        return None
    n = logs.number(text)
    if n is not None:
        return n
    name = re.sub(r"^(CUBLASLT_|CUBLAS_|CUDA_)", "", text.strip())
    for table, prefix in ((EPILOGUES, "EPILOGUE_"), (COMPUTE, "COMPUTE_"), (TYPES, ""),
                          (OPS, ""), (ALGO_ENUMS, "")):
        if name.startswith(prefix) and name[len(prefix):] in table:
            return table[name[len(prefix):]]
    return None


def nested(text):
    """The key=value pairs of a logged argument, its brackets' too: {key: text}."""
    out = {}
    for k, v in logs.LT_ARG.findall(text or ""):
        if v.startswith("["):
            for k2, v2 in nested(v[1:-1]).items():
                out.setdefault(k2, v2)
                out[k + "." + k2] = v2
        out.setdefault(k, v)
    return out


def lt_matmuls(api, trace):
    """The arguments of each cublasLtMatmul Api line, with those of its Trace line over them
    (the descriptors' contents for their addresses). Api and Trace lines of the same matrices
    A, B, C and D are paired in order: the matmuls of several threads interleave, each one's
    Trace line after its Api line."""
    calls, waiting = [dict(args) for args in api], {}
    for call in calls:
        waiting.setdefault(tuple(call.get(m) for m in "ABCD"), []).append(call)
    for args in trace:
        same = waiting.get(tuple(args.get(m) for m in "ABCD"))
        if same:
            same.pop(0).update(args)
    return calls


def ops_of(path, dnntrace):
    if path.endswith(".json"):
        with open(path) as f:
            return json.load(f)["ops"]
    r = subprocess.run([dnntrace, "ops", "--format", "json", "--with-warmup", path], capture_output=True,
                       text=True)
    if r.returncode:
        sys.exit("check_cublas_ops.py: dnntrace ops %s: %s" % (path, r.stderr.strip()))
    return json.loads(r.stdout)["ops"]


def compare(c, what, pairs, fields):
    """fields(op, logged) -> [(name, ours, theirs)]: count the numbers both give and differ."""
    compared, bad = 0, []
    for op, logged in pairs:
        for name, ours, theirs in fields(op, logged):
            if ours is None or theirs is None:
                continue
            compared += 1
            if ours != theirs:
                bad.append("call %s %s %s: ops %s, log %s" % (op["seq"], op["api"], name, ours,
                                                              theirs))
    c.check(compared > 0 and not bad, "%s: %d calls, %d numbers compared, %d differ"
            % (what, len(pairs), compared, len(bad)), bad)


def cublas_fields(op, logged):
    params = op.get("params", {})
    for name, args in CUBLAS_ARGS.items():
        theirs = next((value(logged[a]) for a in args if a in logged), None)
        ours = params.get(name)
        yield name, None if ours is None else int(ours), theirs


def lt_fields(op, logged):
    params, log = op.get("params", {}), nested(" ".join("%s=%s" % kv for kv in logged.items()))
    d = {k[len("Ddesc."):]: v for k, v in log.items() if k.startswith("Ddesc.")} or \
        {k[len("Cdesc."):]: v for k, v in log.items() if k.startswith("Cdesc.")}
    a = {k[len("Adesc."):]: v for k, v in log.items() if k.startswith("Adesc.")}
    transa = value(log.get("transa")) or 0
    yield "transa", params.get("transa"), value(log.get("transa"))
    yield "transb", params.get("transb"), value(log.get("transb"))
    yield "m", params.get("m"), value(d.get("rows"))
    yield "n", params.get("n"), value(d.get("cols"))
    yield "k", params.get("k"), value(a.get("rows" if transa else "cols"))
    for m in "ABCD":
        desc = {k[len(m + "desc."):]: v for k, v in log.items() if k.startswith(m + "desc.")}
        yield m + "type", params.get(m + "type"), value(desc.get("type"))
    yield "computeType", params.get("computeType"), value(log.get("computeType"))
    if "epilogue" in log:  # the default, when the descriptor did not set one, is not logged
        yield "epilogue", params.get("epilogue", 1), value(log.get("epilogue"))


def algo_fields(op, logged):
    log = nested(logged.get("algo", "")[1:-1] if logged.get("algo", "").startswith("[")
                 else logged.get("algo", ""))
    knobs = op.get("knobs", {})
    for name, keys in ALGO_KEYS.items():
        theirs = next((value(log[k]) for k in keys if k in log), None)
        # attributes at 0 are left out of the knobs
        ours = knobs.get(name, 0 if knobs else None)
        yield name, ours, theirs


TYPED = re.compile(r"^cublasLt[A-Z]{3}Matmul$")
# a typed matmul's recorded argument -> its Api line's
TYPED_PTRS = {"A": "A", "Adesc": "Adesc", "B": "B", "Bdesc": "Bdesc", "C": "C", "Cdesc": "Cdesc",
              "D": "D", "Ddesc": "Ddesc", "computeDesc": "computeDesc", "workspace": "workSpace",
              "workspaceSizeInBytes": "workSpaceSizeInBytes", "stream": "stream"}


def typed_pointers(op, logged):
    for ours, theirs in TYPED_PTRS.items():
        yield ours, logs.number(op["args"].get(ours)), logs.number(logged.get(theirs))


def check_typed(c, trace, dnntrace, ops, api, lt_trace):
    """The typed matmuls cuBLAS ran, recorded nested: their pointers against their Api lines, and
    the algorithm of the cuBLAS op each ran inside against its Trace line."""
    calls, _, _ = logs.dnntrace_calls(dnntrace, trace)
    nested = sorted(((seq, n, a) for n, a, seq, _, flags in calls
                     if TYPED.match(n) and "nested" in flags), key=lambda x: x[0])
    logged = [(n, a) for n, a in api if TYPED.match(n)]
    ran = [a for n, a in lt_trace if TYPED.match(n)]
    c.check(len(nested) == len(logged) and
            [n for _, n, _ in nested] == [n for n, _ in logged],
            "typed matmuls: %d recorded nested, %d Api lines, %d Trace lines (%s)"
            % (len(nested), len(logged), len(ran),
               ", ".join(sorted({n for _, n, _ in nested}))))
    if not nested or len(nested) != len(logged):
        return
    pairs = [({"seq": seq, "api": n, "args": a}, theirs)
             for (seq, n, a), (_, theirs) in zip(nested, logged)]
    compare(c, "typed matmuls' pointers, recorded and logged", pairs, typed_pointers)
    # each one's outer call: the cuBLAS op numbered last before it
    cublas = sorted((o for o in ops if o["api"] != "cublasLtMatmul"), key=lambda o: o["seq"])
    outer = []
    for seq, _, _ in nested:
        before = [o for o in cublas if o["seq"] < seq]
        outer.append(before[-1] if before else None)
    if len(ran) == len(nested):
        pairs = [(o, t) for o, t in zip(outer, ran) if o is not None]
        shown = sum(1 for o, _ in pairs if "ID" in o.get("knobs", {}))
        c.check(shown == len(nested), "cuBLAS ops showing cuBLASLt's algorithm: %d of %d"
                % (shown, len(nested)))
        compare(c, "cuBLAS ops' algorithm, against their typed matmul's Trace line",
                [(o, t) for o, t in pairs if "ID" in o.get("knobs", {})], algo_fields)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("ops", help="ops --format json, or the trace")
    p.add_argument("cublas_log")
    p.add_argument("lt_logs", nargs="*")
    p.add_argument("--dnntrace", default="dnntrace")
    p.add_argument("--lt-header", default="/usr/local/cuda/include/cublasLt.h",
                   help="cublasLt.h, for the values of the tile, stages and cluster shape names "
                   "its log prints (without it, only the algorithm ids are compared)")
    a = p.parse_args()
    read_algo_enums(a.lt_header)
    ops = [o for o in ops_of(a.ops, a.dnntrace) if o.get("kind") == "matmul" and
           o["api"].startswith("cublas") and o.get("origin", "call") in ("call", "captured")]
    c = Checks()
    blas = [(n, args) for n, args, _ in logs.cublas_log(a.cublas_log)] \
        if os.path.exists(a.cublas_log) else []
    api, trace, lt_api, lt_trace = [], [], [], []
    for path in a.lt_logs:
        x, t = logs.lt_log(path)
        lt_api += x
        lt_trace += t
        trace += [args for n, args in t if n == "cublasLtMatmul"]
        api += lt_matmuls([args for n, args in x if n == "cublasLtMatmul"],
                          [args for n, args in t if n == "cublasLtMatmul"])

    mine = [o for o in ops if o["api"] != "cublasLtMatmul"]
    names = {o["api"] for o in mine}
    theirs = [args for n, args in blas if n in names]
    c.check(len(mine) == len(theirs), "cuBLAS: %d ops, %d logged calls of their functions"
            % (len(mine), len(theirs)))
    if mine and len(mine) == len(theirs):
        order = [o["api"] for o in mine] == [n for n, _ in blas if n in names]
        c.check(order, "cuBLAS: the same functions in the same order")
        if order:
            compare(c, "cuBLAS arguments", list(zip(mine, theirs)), cublas_fields)

    lt = [o for o in ops if o["api"] == "cublasLtMatmul"]
    if lt or api:
        c.check(len(lt) == len(api), "cuBLASLt: %d matmul ops, %d logged" % (len(lt), len(api)))
        if lt and len(lt) == len(api):
            compare(c, "cuBLASLt shapes, types, epilogue", list(zip(lt, api)), lt_fields)
        given = [(o, t) for o, t in zip(lt, trace) if o.get("knobs")]
        if len(trace) == len(lt) and given:
            compare(c, "cuBLASLt algorithms", given, algo_fields)
    if a.ops.endswith(".dnnt"):
        check_typed(c, a.ops, a.dnntrace, ops, lt_api, lt_trace)
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main())
