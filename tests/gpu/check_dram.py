#!/usr/bin/env python3
"""DRAM traffic from `dnntrace record --gpu-metrics` against Nsight Compute, kernel family by family.

    check_dram.py BUILD_DIR OUTDIR

Runs wl_memory.py twice: under `dnntrace record --gpu-metrics=20` (device-wide DRAM counters
sampled every 20 us, given to the work that ran during each sample), and under Nsight Compute
(`--cache-control none --clock-control none`, so that caches and clocks are as in a normal run)
counting dram__bytes_read.sum and dram__bytes_write.sum for each kernel. For the families whose
traffic is one kernel's (the batch norm, the add, the sum), the bytes per launch, read and
written together, must agree within 15 %: the sampled counters give a kernel the traffic of the
windows it ran in, and traffic that drains after a kernel ends (dirty lines leaving L2) falls
between kernels, where it is counted as moved while no recorded work ran (printed). The fill
family holds fills of other sizes too: printed, not checked. Exits 77 without a GPU or without
access to the counters.
"""

import csv
import io
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def main():
    build, out = sys.argv[1], sys.argv[2]
    dnntrace = os.path.join(build, "tools", "dnntrace")
    os.makedirs(out, exist_ok=True)
    if not shutil.which("nvidia-smi") or run(["nvidia-smi", "-L"]).returncode:
        print("no GPU: skipped")
        return SKIP
    # enough steps that the first few milliseconds, before sampling starts
    # (the recorder starts it once the program uses the GPU), do not count
    wl = [sys.executable, os.path.join(HERE, "wl_memory.py"), "--iters", "400", "--warmup", "1"]
    trace_dir = os.path.join(out, "memory")
    shutil.rmtree(trace_dir, ignore_errors=True)
    r = run([dnntrace, "record", "-q", "--gpu-metrics=20", "-o", trace_dir + "/%p.dnnt", "--"] + wl)
    if r.returncode == SKIP:
        return SKIP
    if r.returncode:
        print(r.stdout, r.stderr)
        return 1
    info = run([dnntrace, "info", trace_dir]).stdout
    if "GPU metrics: on:" not in info.replace("  ", " ").replace("metrics:  ", "metrics: "):
        print([l for l in info.splitlines() if "GPU metrics" in l] or "no GPU metrics line")
        print("the GPU's counters were not sampled: skipped")
        return SKIP
    report = json.loads(run([dnntrace, "report", "--format", "json", trace_dir]).stdout)
    dram = {(x["library"], x["family"]): x for x in report["dram"]["by_family"]}

    # kernel names and launches per family, from the trace's own kernels
    dump = run([dnntrace, "dump", trace_dir + "/" + os.listdir(trace_dir)[0]]).stdout
    names = {}
    for line in dump.splitlines():
        if line.startswith("KERNEL "):
            name = line.rsplit('"', 2)[-2]
            names[name] = names.get(name, 0) + 1

    ncu = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
    r = run([ncu, "--csv", "--cache-control", "none", "--clock-control", "none", "--metrics",
             "dram__bytes_read.sum,dram__bytes_write.sum", "-c", "60"] +
            wl[:2] + ["--iters", "2", "--warmup", "1"])
    with open(os.path.join(out, "ncu.csv"), "w") as f:
        f.write(r.stdout)
    rows = [l for l in r.stdout.splitlines() if l.startswith('"')]
    if not rows:
        print(r.stdout[-2000:], r.stderr[-2000:])
        print("Nsight Compute counted nothing: skipped")
        return SKIP
    per = {}
    for row in csv.DictReader(io.StringIO("\n".join(rows))):
        key = (row["ID"], row["Kernel Name"])
        per.setdefault(key, {})[row["Metric Name"]] = float(row["Metric Value"].replace(",", ""))
    ncu_by = {}
    for (_, kname), m in per.items():
        ncu_by.setdefault(kname, []).append(m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"])

    # the families of the workload's big kernels: library, family, a piece of the kernel's name
    # as Nsight Compute (demangled) and the trace (mangled) name it
    checks = [("cudnn", "normalization", "bn_fw_inf", True),
              ("aten", "elementwise", "CUDAFunctor_add", True),
              ("aten", "reduction", "reduce_kernel", True),
              ("aten", "fill", "FillFunctor", False)]
    failed = 0
    d = report["dram"]
    print("sampled: %.2f GB read, %.2f GB written; %.2f GB while no recorded work ran"
          % (d["read_bytes"] / 1e9, d["write_bytes"] / 1e9, d["unattributed_bytes"] / 1e9))
    for lib, fam, piece, checked in checks:
        launches = sum(n for k, n in names.items() if piece in k and ("Half" in k or "half" in k or lib == "cudnn"))
        ours = dram.get((lib, fam))
        theirs = [v for k, vs in ncu_by.items() if piece in k.replace(" ", "") or piece in k for v in vs]
        if not ours or not launches or not theirs:
            print("FAIL %s %s: no data (dnntrace %s, launches %d, ncu %d)" %
                  (lib, fam, bool(ours), launches, len(theirs)))
            failed += 1
            continue
        got = (ours["read_bytes"] + ours["write_bytes"]) / launches
        want = max(theirs)  # the big launch of the family (small fills and sums ride along)
        ok = abs(got - want) <= 0.15 * want
        failed += checked and not ok
        print("%s %s %s: %.1f MB per launch by the sampled counters (%d launches), "
              "%.1f MB by Nsight Compute (%+.1f %%)" %
              ("ok  " if ok else "info" if not checked else "FAIL", lib, fam,
               got / 1e6, launches, want / 1e6, 100 * (got - want) / want))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
