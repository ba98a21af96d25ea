#!/usr/bin/env python3
"""dnntrace's cuBLAS and cuBLASLt calls against the libraries' own logs, program by program.

    check_cublas.py DNNTRACE SOURCE_ROOT OUTDIR [--prog C-PROGRAM] [--llama DIR] [--no-torch]
                    [--no-jax]

Programs: gpu-cublas-calls (tests/gpu/gpu-cublas-calls.c: cublasSgemm_v2 under both pointer
modes, cublasGemmEx, strided and pointer-array batched GEMMs, cublasLtMatmul with a bias and GELU
epilogue on the heuristic's algorithm), a PyTorch bf16 transformer training step
(wl_transformer.py: both libraries' paths), a JAX MLP training step (wl_jax_matmul.py: XLA
loads cuBLAS and cuBLASLt with dlopen and finds their functions with dlsym) and llama-bench's
prompt processing (--llama: the folder of run-llama.sh). Each runs twice with cuBLAS's log (CUBLAS_LOGINFO_DBG=1) and cuBLASLt's
(CUBLASLT_LOG_LEVEL=5): plainly, and under `dnntrace record`. Checked:

  * calls per function, of the functions the shim wraps (shim/libs/*-api.txt): the trace's
    against the same run's logs, the logs' records of dnntrace's own unrecorded queries left out
    (cublasGetPointerMode_v2 and cublasGetStream_v2, cuBLASLt's pointer-mode query and version);
    and the program's (with those cuBLAS makes into cuBLASLt, marked nested) against the plain
    run's logs: the recorder adds no call and misses none (for JAX, shown only: XLA's
    autotuning makes a few searches more or less from run to run);
  * call by call, in the recorded run: every argument both the trace and the log give as a
    number (m, n, k, transposes, leading dimensions, strides, types, batch counts, pointers,
    workspace sizes); calls made on several threads at once (XLA's compilation) by function, as
    multisets;
  * alpha and beta: in the C program, the values it passed in host mode, and in device mode the
    pointer the log shows; elsewhere, that every host-mode value was read;
  * each cublasLtMatmul's algorithm: the id and custom option dnntrace asked of cuBLASLt for its
    bytes, against the algorithm cuBLASLt logs as it runs;
  * kernels: in the C program every GEMM call has its kernels tied to it, and the two it
    captures into a CUDA graph their graph nodes and each replay's kernels.

Writes logs, traces and per-program reports under OUTDIR; prints a summary. Exit status 0 when
everything matches, 1 otherwise, 77 without a GPU.
"""

import argparse
import collections
import glob
import os
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
import cublas_log_calls as logs  # noqa: E402

# Calls dnntrace makes of the libraries without recording them: the pointer mode of a call's
# scalars and (cuBLASLt's) their scale type, of a descriptor it did not see made (cuBLAS makes its
# typed matmuls' descriptors in its own memory); the stream of a handle it did not see created (to
# follow CUDA graph capture); the loaded version.
RECORDER_QUERIES = {"cublasGetPointerMode_v2", "cublasGetStream_v2", "cublasLtGetVersion"}
LT_MODE_QUERIES = {
    "cublasLtMatmulDescGetAttribute": {"MATMUL_DESC_POINTER_MODE", "MATMUL_DESC_SCALE_TYPE"},
    "cublasLtMatrixTransformDescGetAttribute": {"MATRIX_TRANSFORM_DESC_POINTER_MODE",
                                                "MATRIX_TRANSFORM_DESC_SCALE_TYPE"}}
GEMM = re.compile(r"^cublas([SDCZH]gemm\w*|Gemm\w*Ex(_64)?|LtMatmul)$")


class Report:
    def __init__(self, name, out):
        self.name, self.out, self.failures = name, out, 0

    def check(self, ok, what):
        line = "%s %s: %s" % ("ok  " if ok else "FAIL", self.name, what)
        print(line)
        self.out.write(line + "\n")
        self.failures += not ok
        return ok


def wrapped_names(root):
    names = set()
    for lib in ("cublas", "cublaslt"):
        with open(os.path.join(root, "shim", "libs", lib + "-api.txt")) as f:
            names |= {line.split("(")[0] for line in f if not line.startswith("#")}
    return names


def run(cmd, env, out):
    with open(out, "w") as f:
        return subprocess.run(cmd, env=env, stdout=f, stderr=subprocess.STDOUT).returncode


def log_env(prefix):
    env = dict(os.environ, CUBLAS_LOGINFO_DBG="1", CUBLAS_LOGDEST_DBG=prefix + "-cublas.log",
               CUBLASLT_LOG_LEVEL="5", CUBLASLT_LOG_FILE=prefix + "-lt.%i.log")
    for f in glob.glob(prefix + "-cublas.log") + glob.glob(prefix + "-lt.*.log"):
        os.remove(f)
    return env


def read_logs(prefix, wrapped):
    """The calls of wrapped functions both logs show (cuBLAS's in order, then cuBLASLt's Api
    lines in order), and cuBLASLt's Trace lines of matmuls."""
    blas = logs.cublas_log(prefix + "-cublas.log") if os.path.exists(prefix + "-cublas.log") else []
    api, trace = [], []
    for path in sorted(glob.glob(prefix + "-lt.*.log")):
        a, t = logs.lt_log(path)
        api += a
        trace += t
    blas = [(n, a) for n, a, _ in blas if n in wrapped]
    api = [(n, a) for n, a in api if n in wrapped]
    return blas, api, [a for n, a in trace if n == "cublasLtMatmul"]


def is_recorder_query(name, args):
    return name in RECORDER_QUERIES or (name in LT_MODE_QUERIES
                                        and args.get("attr") in LT_MODE_QUERIES[name])


def counts(calls):
    return collections.Counter(name for name, _ in calls)


def compare_counts(r, what, traced, blas, api, strict):
    want = counts(blas) + counts(api)
    got = counts(traced)
    bad = sorted(n for n in set(want) | set(got) if want[n] != got[n])
    for n in bad[:10]:
        print("     %s: trace %d, log %d" % (n, got[n], want[n]))
    line = "%d calls of %d functions, %s%s" % (sum(got.values()), len(got), what,
                                              "" if not bad else "; %d functions differ" % len(bad))
    if strict:
        r.check(not bad, line)
    else:
        print("info %s: %s" % (r.name, line))


def value_of(text):
    """A dumped or logged value as a number, when it is one (a pointer of a scalar in device
    mode is dumped with its mode)."""
    return logs.number(re.sub(r" \(mode -?\d+\)$", "", text))


def numeric_args(mine, theirs):
    """(argument, trace's value, log's value) of the arguments both give as numbers (not the
    trace's outputs, nor scalars it read where the log shows their pointer)."""
    out = []
    for arg, text in mine.items():
        if text.startswith(">") or arg not in theirs:
            continue
        if theirs[arg].startswith("POINTER") and not re.match(r"0x|NULL", text):
            continue  # a scalar read in host mode: the log shows where it was
        a, b = value_of(text), value_of(theirs[arg])
        if a is not None and b is not None:
            out.append((arg, a, b))
    return out


def compare_args(r, what, traced, logged):
    """Align the two lists by function and compare the arguments both give as numbers. Calls
    made on several threads at once (XLA's) may be logged in another order than they were
    numbered: then each function's calls are compared as multisets of those arguments."""
    compared = mismatched = 0
    examples = []
    in_order = [n for n, _ in traced] == [n for n, _ in logged]
    if in_order:
        for (name, mine), (_, theirs) in zip(traced, logged):
            for arg, a, b in numeric_args(mine, theirs):
                compared += 1
                if a != b:
                    mismatched += 1
                    examples.append("%s %s: trace %s, log %s" % (name, arg, a, b))
    elif counts(traced) == counts(logged):
        for name in counts(traced):
            mine = [a for n, a in traced if n == name]
            theirs = [a for n, a in logged if n == name]
            keys = sorted(k for k, _, _ in numeric_args(mine[0], theirs[0]))
            got = collections.Counter(tuple(value_of(a[k]) for k in keys) for a in mine)
            want = collections.Counter(tuple(value_of(a[k]) for k in keys) for a in theirs)
            compared += len(keys) * len(mine)
            bad = sum((got - want).values())
            mismatched += bad
            if bad:
                examples.append("%s: %d calls' %s differ" % (name, bad, ",".join(keys)))
    else:
        r.check(False, "%s: the calls differ (trace %d, log %d)" % (what, len(traced), len(logged)))
        return
    for e in examples[:5]:
        print("     " + e)
    r.check((compared > 0 or not traced) and not mismatched, "%s: %d calls %s, %d numeric "
            "arguments compared, %d differ" % (what, len(traced), "in the same order" if in_order
                                               else "(several threads: as multisets)",
                                               compared, mismatched))


def le_int(blob):
    m = re.match(r"<(\d+) bytes: ([0-9a-f]*)", blob.lstrip(">"))
    if not m or not int(m.group(1)):
        return None
    return int.from_bytes(bytes.fromhex(m.group(2)), "little", signed=True)


def check_algos(r, calls, lt_trace):
    """Each cublasLtMatmul's algorithm as dnntrace asked it, against cuBLASLt's Trace line."""
    config = collections.defaultdict(dict)
    for name, args, _, _, _ in calls:
        if name == "cublasLtMatmulAlgoConfigGetAttribute" and "algo" in args:
            config[args["algo"]][int(args["attr"])] = le_int(args.get("buf", ""))
    matmuls = [a for n, a, _, _, flags in calls if n == "cublasLtMatmul" and "nested" not in flags]
    if len(matmuls) != len(lt_trace):
        r.check(False, "algorithms: %d matmuls, %d logged as run" % (len(matmuls), len(lt_trace)))
        return
    checked = bad = unasked = 0
    for args, logged in zip(matmuls, lt_trace):
        algo = logs.LT_ARG.findall(logged.get("algo", "").strip("[]"))
        want = {k: v for k, v in algo}
        got = config.get(args.get("algo"))
        if not got:
            unasked += args.get("algo", "").startswith("<64")
            continue
        checked += 1
        if got.get(0) != int(want.get("algoId", -1)) or \
                got.get(5) != int(want.get("customOption", 0)):
            bad += 1
            print("     algo %s: asked id %s custom %s, logged %s" % (args["algo"][:40], got.get(0),
                                                                    got.get(5), logged["algo"]))
    r.check(not bad and not unasked, "algorithms: %d matmuls given one, their id and custom "
            "option as cuBLASLt logs them (%d differ, %d never asked)" % (checked, bad, unasked))


def check_program(r, calls, gpu, blas_log):
    """The C program's scalars, kernels and CUDA graph."""
    kernels, nodes = gpu
    sgemm = [a for n, a, _, _, _ in calls if n == "cublasSgemm_v2"]
    logged = [a for n, a in blas_log if n == "cublasSgemm_v2"]
    host = len(sgemm) == 2 and (sgemm[0]["alpha"], sgemm[0]["beta"]) == ("1.5", "0.25")
    r.check(host, "host-mode alpha, beta read: %s" % [(a["alpha"], a["beta"]) for a in sgemm])
    dev = len(sgemm) == 2 and len(logged) == 2 and \
        value_of(sgemm[1]["alpha"]) == logs.number(logged[1]["alpha"]) and \
        sgemm[1]["alpha"].endswith("(mode 1)")
    r.check(dev, "device-mode alpha recorded as the pointer the log shows, unread: %s"
            % (sgemm[1]["alpha"] if len(sgemm) > 1 else None))
    lt = [(a["alpha"], a["beta"]) for n, a, _, _, _ in calls if n == "cublasLtMatmul"]
    r.check(lt == [("1", "0")] * 3, "cublasLtMatmul's host alpha, beta: %s" % lt)
    gemms = [(n, s) for n, _, s, _, flags in calls if GEMM.match(n) and "nested" not in flags]
    untied = [n for n, s in gemms if not kernels.get(s)]
    r.check(gemms and not untied, "%d GEMM calls, each with its kernels (untied: %s)"
            % (len(gemms), untied))
    # the last cublasGemmEx and cublasLtMatmul were captured, their graph replayed 3 times
    captured = [max(s for n, s in gemms if n == name) for name in ("cublasGemmEx", "cublasLtMatmul")
                if any(n == name for n, _ in gemms)]
    seen = [(nodes.get(s, 0), kernels.get(s, 0)) for s in captured]
    r.check(len(seen) == 2 and all(n >= 1 and k >= 3 * n for n, k in seen),
            "captured into a CUDA graph: (graph nodes made, kernels replayed) of cublasGemmEx and "
            "cublasLtMatmul: %s" % seen)


def check_host_scalars(r, calls):
    values = collections.Counter()
    unread = 0
    for name, args, _, _, _ in calls:
        for arg in ("alpha", "beta"):
            text = args.get(arg, "")
            if re.fullmatch(r"0x[0-9a-f]+", text):  # host memory, mode unknown: never here
                unread += 1
            elif text and not text.endswith(")"):
                values[text] += 1
    r.check(not unread and values, "host-mode scalars read: %s"
            % ", ".join("%s x%d" % kv for kv in values.most_common(6)))


def check(name, command, args, wrapped, reports):
    """Run command(prefix) plainly and recorded (prefix: `dnntrace record ... --`), compare."""
    out = os.path.join(args.outdir, name)
    r = Report(name, open(out + "-report.txt", "w"))
    reports.append(r)
    rc = run(command([]), log_env(out + "-plain"), out + "-plain.txt")
    if rc == 77:
        print("skip %s: %s" % (name, open(out + "-plain.txt").read().strip().splitlines()[-1]))
        reports.remove(r)
        return
    if rc:
        r.check(False, "the plain run failed (%s-plain.txt)" % out)
        return
    trace = out + ".dnnt"
    if run(command([args.dnntrace, "record", "-q", "-o", trace, "--"]), log_env(out),
           out + "-recorded.txt"):
        r.check(False, "the recorded run failed (%s-recorded.txt)" % out)
        return
    results = [re.findall(r"checksum=(\S+)", open(out + f).read()) for f in ("-plain.txt",
                                                                           "-recorded.txt")]
    if results[0]:
        r.check(results[0] == results[1], "the program's results, recorded as plain: checksum "
                "%s, %s" % tuple(x[-1] if x else None for x in results))
    calls, kernels, nodes = logs.dnntrace_calls(args.dnntrace, trace)
    compare(r, name, calls, (kernels, nodes), out, wrapped)


def compare(r, name, calls, gpu, out, wrapped):
    """The checks of one program's trace (calls, kernels) against its logs (out-*.log) and its
    plain run's (out-plain-*.log)."""
    # in the order they were entered, as the logs write them
    calls = sorted((c for c in calls if c[0] in wrapped), key=lambda c: c[2])
    plain_blas, plain_api, _ = read_logs(out + "-plain", wrapped)
    blas, api, lt_trace = read_logs(out, wrapped)
    program = [(n, a) for n, a, _, _, flags in calls if "dnntrace" not in flags]
    mine = [(n, a) for n, a, _, _, _ in calls if not is_recorder_query(n, a)]
    compare_counts(r, "as its logs count them (dnntrace's own among them)", mine,
                   [c for c in blas if not is_recorder_query(*c)],
                   [c for c in api if not is_recorder_query(*c)], True)
    # a run without dnntrace: the same calls, where the program makes the same ones each run
    # (XLA's autotuning does not: a few searches more or less)
    compare_counts(r, "as a run without dnntrace's logs count them", program, plain_blas,
                   plain_api, name != "jax")
    compare_args(r, "cuBLAS", [c for c in mine if not c[0].startswith("cublasLt")],
                 [c for c in blas if not is_recorder_query(*c)])
    compare_args(r, "cuBLASLt", [c for c in mine if c[0].startswith("cublasLt")],
                 [c for c in api if not is_recorder_query(*c)])
    check_algos(r, calls, lt_trace)
    if name == "program":
        check_program(r, calls, gpu, blas)
    else:
        check_host_scalars(r, calls)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dnntrace")
    p.add_argument("root")
    p.add_argument("outdir")
    p.add_argument("--prog", help="gpu-cublas-calls")
    p.add_argument("--llama", help="the llama.cpp workload's folder (run-llama.sh; default: "
                   "$DNNTRACE_LLAMA, else ../shared/workloads/llama beside SOURCE_ROOT)")
    p.add_argument("--no-torch", action="store_true")
    p.add_argument("--no-jax", action="store_true")
    args = p.parse_args()
    if not shutil.which("nvidia-smi") or \
            subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode:
        print("no GPU: skipped")
        return 77
    os.makedirs(args.outdir, exist_ok=True)
    # an earlier run's traces and logs: `dnntrace record` would not write over a trace, and a
    # log appended to would hold two runs
    for old in glob.glob(os.path.join(args.outdir, "*.dnnt")) + \
            glob.glob(os.path.join(args.outdir, "*.log")):
        os.remove(old)
    if not args.llama:
        for d in (os.environ.get("DNNTRACE_LLAMA"),
                  os.path.join(args.root, "..", "shared", "workloads", "llama")):
            if d and os.path.isfile(os.path.join(d, "run-llama.sh")):
                args.llama = d
                break
    wrapped = wrapped_names(args.root)
    reports = []
    if args.prog:
        check("program", lambda prefix: prefix + [args.prog], args, wrapped, reports)
    if not args.no_torch:
        wl = [sys.executable, os.path.join(args.root, "tests", "gpu", "wl_transformer.py"),
              "--iters", "2", "--warmup", "1"]
        check("transformer", lambda prefix: prefix + wl, args, wrapped, reports)
    if not args.no_jax:
        wl = [sys.executable, os.path.join(args.root, "tests", "gpu", "wl_jax_matmul.py"),
              "--iters", "2", "--warmup", "1"]
        check("jax", lambda prefix: prefix + wl, args, wrapped, reports)
    if args.llama:
        # prompt processing only: llama.cpp's GEMMs (token generation's are its own kernels)
        os.environ["LLAMA_ARGS"] = "-p 64 -n 0 -ngl 99 -r 1"
        llama = ["bash", os.path.join(args.llama, "run-llama.sh"),
                 os.path.join(args.outdir, "llama-bin")]
        check("llama", lambda prefix: llama + prefix, args, wrapped, reports)
    failed = sum(r.failures for r in reports)
    print("%d programs, %d checks failed" % (len(reports), failed))
    return 1 if failed or not reports else 0


if __name__ == "__main__":
    sys.exit(main())
