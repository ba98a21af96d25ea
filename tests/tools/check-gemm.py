#!/usr/bin/env python3
"""check-gemm.py - cuBLAS and cuBLASLt calls read as ops (synth-trace's
`gemm` scenario): every product an op with its shapes, types, algorithm and
the FLOPs and bytes worked out by hand below; the kernels inside each call
its GPU time, the one no call launched left to the kernel families; an
algorithm change a change for `diff`; the exports' tables and tracks by
library; cuBLAS linked into the program said so by info and report.

usage: check-gemm.py DNNTRACE SYNTH-TRACE API-LISTING
"""
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL: " + what)


def run(*args):
    r = subprocess.run(args, capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


# api: (FLOPs, bytes, math, GPU ns, params the recipe must hold)
EXPECTED = {
    # 2 m n k; A and B read, C written (beta 0): 3 x 1024^2 x 4 bytes;
    # FP32 on a handle allowed TF32
    "cublasSgemm_v2": (2 * 1024**3, 3 * 1024**2 * 4, "tf32", 40000,
                       {"m": 1024, "n": 1024, "k": 1024, "mathMode": 3}),
    # BF16 4096 x 4096 x 1024, A transposed
    "cublasGemmEx": (2 * 4096 * 4096 * 1024,
                     (2 * 1024 * 4096 + 4096 * 4096) * 2, "bf16", 250000,
                     {"transa": 1, "transb": 0, "Atype": 14,
                      "computeType": 68}),
    # 16 FP16 products of 512 x 512 x 64
    "cublasGemmStridedBatchedEx": (2 * 512 * 512 * 64 * 16,
                                   (2 * 64 * 512 + 512 * 512) * 2 * 16,
                                   "fp16", 30000,
                                   {"batch": 16, "strideC": 262144}),
    # 2 m n; A, x, y read (beta 1), y written
    "cublasSgemv_v2": (2 * 4096 * 4096,
                       (4096 * 4096 + 3 * 4096) * 4, "fp32", 25000,
                       {"m": 4096, "n": 4096, "beta": 1}),
    # m^2 n; A's triangle read, B read and written
    "cublasDtrsm_v2": (512 * 512 * 256,
                       (512 * 513 // 2 + 2 * 512 * 256) * 8, "fp64", 35000,
                       {"side": 0, "m": 512, "n": 256}),
    # n (n + 1) k; A read, C's triangle written (beta 0)
    "cublasDsyrk_v2": (512 * 513 * 256,
                       (512 * 256 + 512 * 513 // 2) * 8, "fp64", 20000,
                       {"n": 512, "k": 256}),
    # 2 m n k and bias and GELU per element of D; A, B read, D written,
    # the bias vector read
    "cublasLtMatmul": (2 * 2048 * 512 * 1024 + 2 * 2048 * 512,
                       (1024 * 2048 + 1024 * 512 + 2048 * 512) * 2 +
                       2048 * 2, "bf16", 24000,
                       {"m": 2048, "n": 512, "k": 1024, "epilogue": 36}),
}


def main():
    dnntrace, synth, listing = sys.argv[1:4]
    with tempfile.TemporaryDirectory() as d:
        rc, out = run(synth, listing, d, "--scenario", "gemm", "--steps",
                      "4")
        if rc:
            print(out)
            return 1
        os.mkdir(d + "/changed")
        rc, out = run(synth, listing, d + "/changed", "--scenario", "gemm",
                      "--steps", "4", "--variant", "changed")
        if rc:
            print(out)
            return 1
        t = d + "/gemm.dnnt"
        rc, out = run(dnntrace, "ops", "--format", "json", "--with-warmup", t)
        check(rc == 0, "ops --format json exits 0")
        ops = json.loads(out)["ops"] if rc == 0 else []
        seen = {}
        for op in ops:
            seen.setdefault(op["api"], []).append(op)
        for api, (flops, nbytes, math, gpu, params) in EXPECTED.items():
            got = [o for o in seen.get(api, []) if not o.get("origin")]
            # cuBLASLt's: with the epilogue GELU_BIAS, and BIAS alone
            want = 8 if api == "cublasLtMatmul" else 4
            check(len(got) == want, "%s: %d ops, got %d" %
                  (api, want, len(got)))
            for op in got[:1]:
                check(op["kind"] == "matmul", "%s: kind %s" %
                      (api, op["kind"]))
                check(op["flops"] == flops, "%s: %d FLOPs, expected %d" %
                      (api, op["flops"], flops))
                check(op["bytes"] == nbytes, "%s: %d bytes, expected %d" %
                      (api, op["bytes"], nbytes))
                check(op["math"] == math, "%s: math %s, expected %s" %
                      (api, op["math"], math))
                check(op["gpu_ns"] == gpu and op["kernels"] == 1,
                      "%s: %d ns in %d kernels, expected %d in 1" %
                      (api, op["gpu_ns"], op["kernels"], gpu))
                for k, v in params.items():
                    check(op.get("params", {}).get(k) == v,
                          "%s: param %s = %s, expected %s" %
                          (api, k, op.get("params", {}).get(k), v))
        # the GemmEx captured into a CUDA graph: its 3 replays are its
        # executions, its kernels theirs
        ex = [o for o in ops if o["api"] == "cublasGemmEx" and
              o.get("origin")]
        check([o["origin"] for o in ex] == ["captured"] + ["replay"] * 3 and
              all(o["kernels"] == 1 and o["gpu_ns"] == 20000 and
                  o["flops"] == 2 * 4096 * 4096 * 1024 for o in ex[1:]),
              "cublasGemmEx in a CUDA graph: captured, replayed 3 times "
              "with its kernel and FLOPs, got %s" %
              [(o["origin"], o["kernels"], o["gpu_ns"]) for o in ex])
        # a cuBLAS call's status is its number, as dump shows it: 0
        # is no CUDNN_STATUS_SUCCESS
        rc, out = run(dnntrace, "ops", "--call",
                      str(seen.get("cublasLtMatmul", [{"seq": 0}])[0]["seq"]),
                      t)
        check(re.search(r"^  cublasLtMatmul\(.*\) = 0$", out, re.M),
              "ops --call: cuBLASLt's status, got " + out[:200])
        lt = seen.get("cublasLtMatmul", [{}])[0]
        check(lt.get("engine") == 66, "cublasLtMatmul: algorithm 66")
        # those at 0 (none, auto) left out
        check(lt.get("knobs") == {"ID": 66, "TILE_ID": 20, "SPLITK_NUM": 1,
                                  "STAGES_ID": 18},
              "cublasLtMatmul: the algorithm's attributes, got %s" %
              lt.get("knobs"))
        check(lt.get("workspace") == 4 << 20, "cublasLtMatmul: workspace")
        check([t["role"] for t in lt.get("tensors", [])] ==
              ["A", "B", "D", "C", "product", "biased"],
              "cublasLtMatmul: its matrices and the epilogue's "
              "intermediates")
        check(seen.get("cublasSgemm_v2", [{}])[0].get("stream") == "0x77",
              "cublasSgemm_v2: the stream its handle was given")

        # a cuBLASLt matmul whose epilogue is its bias: GELU after it
        # makes GELU_BIAS
        rc, out = run(dnntrace, "fusion", "--format", "json", t)
        opps = json.loads(out)["fusion"]["opportunities"] if rc == 0 else []
        check([o["cover"].split(" (")[0] for o in opps if
               "cublasLtMatmul" in o["steps"][0].get("detail", "")] ==
              ["cuBLASLt matmul with CUBLASLT_EPILOGUE_GELU_BIAS"],
              "fusion: the bias epilogue and GELU after it, got %s" %
              [o["cover"] for o in opps])
        check(not any(s["cudnn"] for o in opps for s in o["steps"]),
              "fusion: no step of cuBLAS's or PyTorch's called cuDNN's")

        # a problem under 1% of the libraries' GPU time is no finding
        rc, out = run(dnntrace, "report", t)
        findings = out[out.find("Findings"):out.find("Fusion opportunities")]
        check("far below both roofs" in findings and
              "m=64 n=64 k=64" not in findings,
              "report: the products far below both roofs, not the one "
              "under 1% of GPU time")

        # the kernel no call launched stays under its family
        rc, out = run(dnntrace, "ops", "--with-warmup", t)
        check("# 39 op executions; 20 kernels ran outside the libraries' "
              "calls" in out, "ops: the closing line, got " +
              out.splitlines()[-1] if out else "")

        # an algorithm change is an engine change
        rc, out = run(dnntrace, "diff", "--fail-on", "engine-change", t,
                      d + "/changed/gemm.dnnt")
        check(rc == 1, "diff --fail-on engine-change exits 1, got %d" % rc)
        check("engine algo66 {TILE_ID=20 SPLITK_NUM=1 STAGES_ID=18} -> "
              "algo66 {TILE_ID=15 SPLITK_NUM=1 STAGES_ID=8}" in out,
              "diff: the algorithm's change")
        check("library cuBLAS" in out and "library cuDNN" not in out,
              "diff: GPU time per step under cuBLAS, not cuDNN")
        check_exports(dnntrace, d, t)
        check_static(dnntrace, synth, listing, d, t)
        check_nested(dnntrace, synth, listing, d)
        check_prologue(dnntrace, synth, listing, d)
        check_scalars(dnntrace, synth, listing, d)
    return 1 if failures else 0


def check_exports(dnntrace, d, t):
    """SQLite: cuBLAS's and cuBLASLt's calls in CUBLAS_EVENTS, as Nsight
    Systems puts them, their ops in CUDNN_OPS by library, their kernels
    tied to them; the timeline names their calls by library."""
    db = d + "/gemm.sqlite"
    rc, out = run(dnntrace, "export", "--format", "sqlite", "-o", db, t)
    check(rc == 0, "export --format sqlite: " + out)
    con = sqlite3.connect(db)
    q = lambda sql: con.execute(sql).fetchall()
    check(q("SELECT library, COUNT(*) FROM CUBLAS_EVENTS GROUP BY library "
            "ORDER BY library") == [("cublas", 34), ("cublaslt", 32)],
          "CUBLAS_EVENTS: every call of both libraries, got %s" %
          q("SELECT library, COUNT(*) FROM CUBLAS_EVENTS GROUP BY library"))
    check(q("SELECT COUNT(*) FROM CUDNN_EVENTS") == [(0,)],
          "CUDNN_EVENTS: no call of cuBLAS")
    check(q("SELECT library, COUNT(*) FROM CUDNN_OPS GROUP BY library "
            "ORDER BY library") == [("cublas", 32), ("cublaslt", 8)],
          "CUDNN_OPS: the GEMMs, by library")
    check(q("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN "
            "CUBLAS_EVENTS e ON e.seq = k.callSeq AND "
            "e.globalPid = k.globalPid") == [(39,)],
          "kernels: each GEMM's tied to its call in CUBLAS_EVENTS")
    con.close()
    js = d + "/gemm.json"
    rc, out = run(dnntrace, "export", "--format", "chrome", "-o", js, t)
    check(rc == 0, "export --format chrome: " + out)
    text = open(js).read() if rc == 0 else ""
    check('"cuBLAS call"' in text and '"cuBLASLt call"' in text and
          '"cuDNN call"' not in text,
          "chrome: calls named by their library")
    check("the libraries' ops" in text, "chrome: the ops' tracks")


def check_nested(dnntrace, synth, listing, d):
    """A cuBLAS call running through cuBLASLt's public matmul: one
    execution, the outer call's, holding the kernel; the inner call is in
    the trace, marked nested, and makes no op of its own. And one running
    through cuBLASLt's typed matmul, as cuBLAS's GEMMs do: its op shows
    the algorithm cuBLASLt chose (what the shim asked of it), in ops,
    report JSON and SQLite."""
    os.mkdir(d + "/nested")
    rc, out = run(synth, listing, d + "/nested", "--scenario", "gemm",
                  "--steps", "1", "--variant", "nested")
    check(rc == 0, "synth-trace --variant nested: " + out)
    t = d + "/nested/gemm.dnnt"
    rc, out = run(dnntrace, "dump", t)
    check(sum(1 for ln in out.splitlines() if "cublasLtMatmul(" in ln and
              ln.endswith("[nested]")) == 1, "nested: the inner call dumped")
    rc, out = run(dnntrace, "ops", "--format", "json", "--with-warmup", t)
    ops = json.loads(out)["ops"] if rc == 0 else []
    lt = [o for o in ops if o["api"] == "cublasLtMatmul"]
    ex = [o for o in ops if o["api"] == "cublasGemmEx" and
          o.get("origin", "call") == "call"]
    check(len(lt) == 3, "nested: the inner matmul makes no op (%d "
          "cublasLtMatmul ops, 3 expected)" % len(lt))
    check(len(ex) == 4 and ex[1]["gpu_ns"] == 250000,
          "nested: the outer GemmEx holds the kernel (%s)" %
          [(o["seq"], o["gpu_ns"]) for o in ex])
    typed = [o for o in ops if "cublasLtTST" in o["api"]]
    check(not typed, "nested: the typed calls make no op (%s)" % typed)
    chosen = "lt{ID=66 TILE_ID=18 STAGES_ID=24 CLUSTER_SHAPE_ID=2}"
    last = ([o for o in ex if " m=1024 n=512 " in o["desc"]] or [{}])[0]
    check(last.get("desc", "").endswith(" beta=0 " + chosen) and
          last.get("engine") == 66 and last.get("gpu_ns") == 40000 and
          last.get("knobs") == {"ALGO": -1, "ID": 66, "TILE_ID": 18,
                                "STAGES_ID": 24, "CLUSTER_SHAPE_ID": 2},
          "nested: the GemmEx shows cuBLASLt's algorithm, got %s" %
          {k: last.get(k) for k in ("desc", "engine", "knobs", "gpu_ns")})
    check(last.get("params", {}).get("workspaceNeeded") == 0,
          "nested: the heuristic's workspace, got %s" % last.get("params"))
    # its algorithm asked of on another thread, reaching the file after it
    other = [o for o in ex if " m=2048 n=1024 " in o["desc"]]
    chosen = "lt{ID=66 TILE_ID=20 SPLITK_NUM=1 CUSTOM_OPTION=1 STAGES_ID=35 CLUSTER_SHAPE_ID=3}"
    check(len(other) == 1 and other[0]["desc"].endswith(" " + chosen) and
          other[0]["engine"] == 66,
          "nested: a GemmEx whose algorithm was asked of on another thread "
          "shows it, got %s" % [(o["desc"][-90:], o["engine"]) for o in other])
    rc, out = run(dnntrace, "report", "--format", "json", t)
    rep = [o for o in json.loads(out)["ops"] if "m=1024 n=512" in
           o["problem"]] if rc == 0 else []
    check(rep and rep[0]["engine"] == 66 and rep[0]["knobs"] ==
          "TILE_ID=18 STAGES_ID=24 CLUSTER_SHAPE_ID=2",
          "nested: report JSON has cuBLASLt's algorithm, got %s" %
          [(o["engine"], o["knobs"]) for o in rep])
    db = d + "/nested/gemm.sqlite"
    rc, out = run(dnntrace, "export", "--format", "sqlite", "-o", db, t)
    con = sqlite3.connect(db)
    rows = con.execute(
        "SELECT o.engine FROM CUDNN_OPS o JOIN StringIds s ON s.id = "
        "o.nameId WHERE s.value = 'cublasGemmEx' AND o.origin = 'call' "
        "ORDER BY o.seq").fetchall()
    con.close()
    check(rows[-1:] == [(66,)],
          "nested: CUDNN_OPS.engine of the GemmEx, got %s" % rows)


def check_scalars(dnntrace, synth, listing, d):
    """dump prints alpha and beta in the type the call gives them: FP16
    under a GemmEx computing in FP16 though 16 bytes were read, FP32 under
    one computing in FP32, a __half, a complex with both parts."""
    os.mkdir(d + "/scalars")
    rc, out = run(synth, listing, d + "/scalars", "--scenario", "gemm",
                  "--steps", "1", "--variant", "scalars")
    check(rc == 0, "synth-trace --variant scalars: " + out)
    rc, out = run(dnntrace, "dump", d + "/scalars/gemm.dnnt")
    calls = [ln for ln in out.splitlines()
             if re.search(r"cublas(GemmEx|Hgemm|Cgemm_v2)\(", ln)]
    want = [("alpha=1.5,", "beta=0.25,"), ("alpha=0.75,", "beta=0,"),
            ("alpha=1.5,", "beta=0.25,"), ("alpha=1+2i,", "beta=0.5-1i,")]
    check(len(calls) == len(want), "scalars: %d calls dumped, got %d" %
          (len(want), len(calls)))
    for ln, (alpha, beta) in zip(calls, want):
        check(alpha in ln and beta in ln, "scalars: %s %s in %s" %
              (alpha, beta, ln))


def check_prologue(dnntrace, synth, listing, d):
    """Ops whose output a product reads as A or B: a chain that ends at
    the GEMM, priced with the GEMM's own input (its write and read back
    per step), the cuDNN graph that fuses it named, cuBLASLt's lack of a
    prologue said; a layer norm and an FP64 input blocked, with why."""
    os.mkdir(d + "/prologue")
    rc, out = run(synth, listing, d + "/prologue", "--scenario", "gemm",
                  "--steps", "3", "--variant", "prologue")
    check(rc == 0, "synth-trace --variant prologue: " + out)
    rc, out = run(dnntrace, "fusion", "--format", "json",
                  d + "/prologue/gemm.dnnt")
    opps = json.loads(out)["fusion"]["opportunities"] if rc == 0 else []
    got = {o["steps"][-1]["detail"].split(" ")[0]: o for o in opps
           if o["steps"][-1]["what"] == "matrix multiply"}
    # api: (steps before the GEMM, its input, bytes saved and added,
    #       status, what the cover or the block says)
    want = {
        # SiLU and a multiply of B, 1024 x 4096 FP32: two intermediates
        # written and read back; the multiply's other operand read
        "cublasSgemm_v2": (["SiLU", "multiply"], 2 * 2 * 4096 * 1024 * 4,
                           4096 * 1024 * 4, "fusable", "ops on B ->"),
        # a cast of B, 1024 x 1024 BF16
        "cublasGemmEx": (["copy/cast"], 2 * 1024 * 1024 * 2, 0, "fusable",
                         "mixed-input-precision"),
        # a layer norm of B, 1024 x 512 BF16: no pointwise op
        "cublasLtMatmul": (["layer norm"], 2 * 1024 * 512 * 2, 0,
                           "blocked", "pointwise ops only"),
        # an add of A or B (both 64 x 64) in FP64
        "cublasDgemm_v2": (["residual add"], 2 * 64 * 64 * 8, 64 * 64 * 8,
                           "blocked", "not DOUBLE"),
    }
    for api, (steps, saved, added, status, says) in want.items():
        o = got.get(api)
        check(o is not None, "prologue: a chain ending at %s, got %s" %
              (api, sorted(got)))
        if not o:
            continue
        check([s["what"] for s in o["steps"][:-1]] == steps and
              all(s["removed"] for s in o["steps"][:-1]) and
              not o["steps"][-1]["removed"],
              "prologue %s: steps %s removed, the GEMM kept" % (api, steps))
        check((o["bytes_saved"], o["bytes_added"]) == (saved, added),
              "prologue %s: %d bytes saved, %d added; got %d, %d" %
              (api, saved, added, o["bytes_saved"], o["bytes_added"]))
        check(o["status"] == status and
              says in (o["blocked_by"] or o["cover"]),
              "prologue %s: %s, '%s'; got %s: %s" %
              (api, status, says, o["status"],
               o["blocked_by"] or o["cover"]))
        check("cuBLASLt has no prologue" in (o["note"] or ""),
              "prologue %s: cuBLASLt's limit in the note" % api)
        check(not o["steps"][-1]["cudnn"],
              "prologue %s: the GEMM not called cuDNN's" % api)
        # the second Dgemm right after the first may read the same input
        check(("right after it (cublasDgemm_v2)" in (o["note"] or "")) ==
              (api == "cublasDgemm_v2"),
              "prologue %s: the matmul right after it noted only for the "
              "Dgemm" % api)
    # the HTML report's chains name the library each GEMM ran in
    rc, out = run(dnntrace, "report", "--format", "html",
                  d + "/prologue/gemm.dnnt")
    boxes = re.findall(r'class="mute">([^<,]*), \d+ kernels?<', out)
    check({"cuBLAS", "cuBLASLt"} <= set(boxes) and "cuDNN" not in boxes,
          "prologue: the HTML chains' GEMMs by library, got %s" %
          sorted(set(boxes)))
    # the ReLU of another size feeds no product
    check(not any(s["what"] == "ReLU" for o in opps for s in o["steps"]),
          "prologue: the ReLU no product reads in no chain")


def check_static(dnntrace, synth, listing, d, t):
    """cuBLAS linked into the program: info and report say so, once;
    not of a program that loaded it."""
    os.mkdir(d + "/static")
    rc, out = run(synth, listing, d + "/static", "--scenario", "gemm",
                  "--steps", "3", "--variant", "static")
    check(rc == 0, "synth-trace --variant static: " + out)
    for cmd in ("info", "report"):
        rc, out = run(dnntrace, cmd, d + "/static/gemm.dnnt")
        lines = [ln for ln in out.splitlines()
                 if "links cuBLAS statically" in ln]
        check(len(lines) == 1 and "870.0 us of GPU time, 6 kernels" in
              lines[0], "%s: one line says cuBLAS is linked statically, "
              "got %s" % (cmd, lines))
        rc, out = run(dnntrace, cmd, t)
        check("statically" not in out,
              "%s: nothing said of a cuBLAS that was loaded" % cmd)


if __name__ == "__main__":
    sys.exit(main())
