#!/usr/bin/env python3
"""check-cublas-ops.py - the real cuBLAS and cuBLASLt, recorded through the
shim without a GPU (tests/shim/cublas-prog.c: every call fails for want of
a handle, but each is recorded), read as ops: each GEMM call an op with
the shapes, types, strides, scalars, epilogue and algorithm the program
passed, a grouped batch left a call.

usage: check-cublas-ops.py DNNTRACE LIBDNNTRACE CUBLAS-PROG [ALGO-PROG]

With ALGO-PROG (tests/shim/cublaslt-algo-prog.c), also the algorithms
the shim asks of cuBLASLt after a matmul, read into the matmuls' ops.
"""
import json
import os
import subprocess
import sys
import tempfile

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL: " + what)


# api: params the op's recipe must hold (cublas-prog.c's arguments)
EXPECTED = [
    ("cublasSgemm_v2", {"transa": 0, "transb": 1, "m": 64, "n": 32, "k": 16,
                        "lda": 64, "ldb": 32, "ldc": 64, "Atype": 0}),
    ("cublasDgemm_v2", {"transa": 1, "m": 8, "n": 8, "k": 8, "Atype": 1}),
    ("cublasHgemm", {"m": 16, "n": 16, "k": 16, "Atype": 2, "computeType": 64}),
    ("cublasGemmEx", {"m": 256, "n": 128, "k": 64, "Atype": 14,
                      "computeType": 68}),
    ("cublasSgemmBatched", {"m": 32, "batch": 2}),
    ("cublasGemmBatchedEx", {"transa": 1, "batch": 2, "Atype": 2}),
    ("cublasGemmStridedBatchedEx", {"transb": 1, "m": 128, "n": 64, "k": 32,
                                    "batch": 12, "strideA": 4096,
                                    "strideB": 2048, "strideC": 8192}),
    ("cublasLtMatmul", {"transa": 1, "m": 512, "n": 256, "k": 768,
                        "epilogue": 36, "alpha": 2, "beta": 0.5}),
    ("cublasLtMatmul", {"transa": 0, "m": 512, "n": 256, "k": 512,
                        "alpha": None, "beta": None}),
]


def main():
    dnntrace, shim, prog = sys.argv[1:4]
    with tempfile.TemporaryDirectory() as d:
        t = os.path.join(d, "t.dnnt")
        # the real libraries: not the stand-in cuBLASLt of the tests'
        # folder, which the test's run may put on the library path
        path = [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(":")
                if p and not p.rstrip("/").endswith("tests/shim")]
        env = dict(os.environ, DNNTRACE_LIB=shim,
                   LD_LIBRARY_PATH=":".join(path))
        r = subprocess.run([dnntrace, "record", "-o", t, "--", prog],
                           env=env, capture_output=True, text=True)
        if r.returncode:
            print("record failed: " + r.stdout + r.stderr)
            return 1
        r = subprocess.run([dnntrace, "ops", "--format", "json", t],
                           capture_output=True, text=True)
        check(r.returncode == 0, "ops --format json exits 0")
        ops = json.loads(r.stdout)["ops"] if r.returncode == 0 else []

    check([o["api"] for o in ops] == [e[0] for e in EXPECTED],
          "the ops, in call order (no grouped batch): %s" %
          [o["api"] for o in ops])
    for op, (api, params) in zip(ops, EXPECTED):
        got = op.get("params", {})
        check(op["kind"] == "matmul" and op["status"] != 0,
              "%s: a matmul, failed" % api)
        for k, v in params.items():
            check(got.get(k) == v, "%s: %s = %s, expected %s" %
                  (api, k, got.get(k), v))
    if ops:
        # 2 m n k, and A, B and C (read: beta unknown) and C written
        check(ops[0]["flops"] == 2 * 64 * 32 * 16 and
              ops[0]["bytes"] == (64 * 16 + 32 * 16 + 2 * 64 * 32) * 4,
              "cublasSgemm_v2: FLOPs and bytes, got %s and %s" %
              (ops[0]["flops"], ops[0]["bytes"]))
        lt = ops[7] if len(ops) > 7 else {}
        check(lt.get("knobs") == {"SPLITK_NUM": 4},
              "cublasLtMatmul: the algorithm the program made, got %s" %
              lt.get("knobs"))
        check(lt.get("workspace") == 1 << 22, "cublasLtMatmul: workspace")
        check(lt.get("pointers", {}).get("D") == "0xc000",
              "cublasLtMatmul: D's pointer, got %s" % lt.get("pointers"))
    if len(sys.argv) > 4:
        check_algorithms(dnntrace, shim, sys.argv[4])
    return 1 if failures else 0


def check_algorithms(dnntrace, shim, prog):
    """cublaslt-algo-prog (a stand-in cuBLASLt whose matmuls succeed):
    the algorithm the shim asks after a matmul reaches that matmul's op,
    and later ones; a matmul whose layouts were never seen has its shape
    unknown, not made up, and of a descriptor never seen, the scale type
    the recorder was told (the fake's CUDA_R_32F)."""
    with tempfile.TemporaryDirectory() as d:
        t = os.path.join(d, "t.dnnt")
        env = dict(os.environ, DNNTRACE_LIB=shim)
        subprocess.run([dnntrace, "record", "-q", "-o", t, "--", prog],
                       env=env, capture_output=True)
        r = subprocess.run([dnntrace, "ops", "--format", "json", t],
                           capture_output=True, text=True)
        ops = json.loads(r.stdout)["ops"] if r.returncode == 0 else []
    want = {"ID": 1, "TILE_ID": 101, "SPLITK_NUM": 201,
            "REDUCTION_SCHEME": 301, "CTA_SWIZZLING": 401,
            "CUSTOM_OPTION": 501, "STAGES_ID": 601, "INNER_SHAPE_ID": 701,
            "CLUSTER_SHAPE_ID": 801}
    check(len(ops) >= 2 and ops[0].get("knobs") == want and
          ops[1].get("knobs") == want,
          "algorithm: the first matmul's op and the next learn it, got %s" %
          [o.get("knobs") for o in ops[:2]])
    check(ops and "m=? n=? k=? A=? B=? C=? scale=R_32F alpha" in ops[0]["desc"],
          "a matmul of unseen layouts: its shape unknown, got %s" %
          (ops[0]["desc"] if ops else None))


if __name__ == "__main__":
    sys.exit(main())
