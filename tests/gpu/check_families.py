#!/usr/bin/env python3
"""The operation family dnntrace gives each kernel, against the aten op that launched it.

    check_families.py BUILD_DIR OUTDIR [WORKLOAD...]   (default: resnet50 small_cnn mlp)

Runs each PyTorch workload (tests/gpu/wl_WORKLOAD.py) under `dnntrace record`, and again under
torch.profiler alone (DNNTRACE_WL_PROFILE). From the profiler's trace it takes, for every kernel,
the aten op on top of the stack when it was launched, and maps that op to the family it
computes (the table OPS below); from dnntrace's timeline export, the library and family its
classifier gives the same kernel (by name). Kernels dnntrace gives to cuDNN calls are left out
(their family comes from the cuDNN op, not from the name). It prints, per workload, the share
of the profiler's kernel time whose family agrees, and the kernels that disagree; fails below
95 %. Exits 77 without a GPU.
"""

import collections
import json
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from kernels_vs_profiler import demangle, run  # noqa: E402

SKIP = 77

# aten op (a prefix of its name after "aten::") -> the family it computes
OPS = [
    ("conv", r"(cudnn_)?convolution|_convolution|conv\d"),
    ("normalization", r"(native_|cudnn_)?(batch|layer|group)_norm|native_batch_norm"),
    ("matmul", r"mm$|addmm|bmm|matmul|linear|baddbmm"),
    ("attention", r"_scaled_dot_product|_flash_attention|_efficient_attention"),
    ("softmax", r"_?(log_)?softmax"),
    ("pooling", r"(max|avg|adaptive_avg|adaptive_max)_pool"),
    ("loss", r"nll_loss|cross_entropy|mse_loss|binary_cross_entropy"),
    ("optimizer", r"_foreach_|_fused_(sgd|adam|adamw)"),
    ("reduction", r"sum|mean|amax|amin|max$|min$|norm$|prod|argmax|argmin|var|std"),
    ("copy", r"copy_|_to_copy|to$|clone|contiguous|cat|stack"),
    ("fill", r"fill_|zero_|zeros|ones|full|normal_|uniform_|random_|randn|rand$"),
    ("gather", r"index|gather|scatter|embedding|take"),
    ("elementwise", r"add|sub|mul|div|relu|threshold|gelu|silu|sigmoid|tanh|clamp|where|"
                    r"neg|exp|log|pow|sqrt|rsqrt|abs|hardtanh|leaky_relu|dropout|masked_fill"),
]


def family_of(op):
    name = op.split("::", 1)[-1]
    for fam, pattern in OPS:
        if re.match(pattern, name):
            return fam
    return None


def norm(name):
    return re.sub(r"\s+", "", name)


def check(dnntrace, out, wl):
    script = os.path.join(HERE, "wl_%s.py" % wl)
    args = [sys.executable, script, "--iters", "3", "--warmup", "1"]
    tdir = os.path.join(out, wl)
    shutil.rmtree(tdir, ignore_errors=True)
    rc = run([dnntrace, "record", "-q", "-o", tdir + "/%p.dnnt", "--"] + args, {},
             os.path.join(out, wl + ".dnntrace.log"))
    if rc == SKIP:
        return None
    prof = os.path.join(out, wl + ".prof.json")
    rc2 = run(args, {"DNNTRACE_WL_PROFILE": prof}, os.path.join(out, wl + ".prof.log"))
    if rc or rc2:
        print("%s: a run failed (%d, %d)" % (wl, rc, rc2))
        return False
    exp = os.path.join(out, wl + ".timeline.json")
    if run([dnntrace, "export", "--format", "chrome", "-o", exp, tdir], {}, os.devnull):
        print("%s: export failed" % wl)
        return False
    ours = {}
    for e in json.load(open(exp))["traceEvents"]:
        a = e.get("args", {})
        if e.get("ph") == "X" and "kernel" in a and "cuDNN call" not in a:
            ours[a["kernel"]] = (a.get("library"), a.get("family"))
    dem = demangle(ours)
    ours = {norm(dem[k]): v for k, v in ours.items()}

    events = json.load(open(prof))["traceEvents"]
    op_of = {}
    for e in events:
        if e.get("cat") == "cpu_op":
            op_of[e.get("args", {}).get("External id")] = e["name"]
    agree = total = 0.0
    wrong = collections.Counter()
    unknown = 0.0
    for e in events:
        if e.get("cat") != "kernel":
            continue
        op = op_of.get(e.get("args", {}).get("External id"), "")
        want = family_of(op) if op.startswith("aten::") else None
        got = ours.get(norm(e["name"]))
        dur = float(e.get("dur", 0))
        if want in (None, "conv") or got is None or got[0] == "cudnn":
            unknown += dur
            continue
        total += dur
        if got[1] == want:
            agree += dur
        else:
            wrong[(op, want, got[0], got[1], e["name"][:90])] += dur
    share = 100 * agree / total if total else 0
    print("%s: %.1f%% of %.1f ms of kernel time in an agreeing family (%.1f ms not compared: "
          "cuDNN's, convolutions, ops without a family here)" %
          (wl, share, total / 1e3, unknown / 1e3))
    for (op, want, lib, fam, name), dur in wrong.most_common(8):
        print("  %7.1f us  %s -> %s, dnntrace: %s %s  %s" % (dur, op, want, lib, fam, name))
    return share >= 95


def main():
    build, out = sys.argv[1], sys.argv[2]
    wls = sys.argv[3:] or ["resnet50", "small_cnn", "mlp"]
    if not shutil.which("nvidia-smi") or run(["nvidia-smi", "-L"], {}, os.devnull):
        print("no GPU: skipped")
        return SKIP
    os.makedirs(out, exist_ok=True)
    results = [check(os.path.join(build, "tools", "dnntrace"), out, wl) for wl in wls]
    if all(r is None for r in results):
        return SKIP
    return 0 if all(r is not False for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
