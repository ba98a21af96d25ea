#!/usr/bin/env python3
"""`dnntrace diff --fail-on regression` over the whole program, on real traces
(tests/data) made slower by scale-trace: the gate fails each slowed copy and
names the quantity that changed; a copy, a copy rewritten at scale 1 and a
trace against itself pass. Also a synthetic 2-rank job, one kernel by name
2x slower, its collectives 12% longer (noise: they wait for the other
rank), both together, and every kernel 4.3x slower.

usage: check-gate.py DNNTRACE SCALE_TRACE DATA_DIR SYNTH_TRACE API_LISTING
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def gate(dnntrace, tmp, base, new):
    """The exit status, the JUnit cases that failed (classname, name) and
    the JSON's quantities."""
    xml = os.path.join(tmp, "junit.xml")
    res = subprocess.run([dnntrace, "diff", "--fail-on", "regression",
                          "--force", "--junit", xml, base, new],
                         capture_output=True)
    failed = {(c.get("classname"), c.get("name"))
              for c in ET.parse(xml).getroot().iter("testcase")
              if c.find("failure") is not None}
    js = json.loads(subprocess.run(
        [dnntrace, "diff", "--format", "json", base, new],
        capture_output=True, check=True).stdout)
    return res.returncode, failed, js


def expect(dnntrace, tmp, label, base, new, want):
    """want: the (classname, name) cases that must fail; none: must pass."""
    rc, failed, js = gate(dnntrace, tmp, base, new)
    if not want:
        if rc != 0 or failed:
            fail(f"{label}: exit {rc}, failed {sorted(failed)}; want a pass")
        else:
            print(f"{label}: passes ({len(js.get('quantities', []))} quantities)")
        return
    if rc != 1:
        fail(f"{label}: exit {rc}, want 1")
    missing = set(want) - failed
    if missing:
        fail(f"{label}: {sorted(missing)} did not fail; failed: "
             f"{sorted(failed)}")
    else:
        print(f"{label}: exit {rc}, fails on {sorted(want)}")


def main():
    if len(sys.argv) != 6:
        print(__doc__, file=sys.stderr)
        return 2
    dnntrace, scale, data, synth, api = sys.argv[1:6]
    tmp = tempfile.mkdtemp()
    try:
        def scaled(src, name, *args):
            out = os.path.join(tmp, name + ".dnnt")
            subprocess.run([scale, os.path.join(data, src), out, *args],
                           check=True)
            return out

        graph = os.path.join(data, "cuda-graph.dnnt")
        copy = os.path.join(tmp, "copy.dnnt")
        shutil.copyfile(graph, copy)
        expect(dnntrace, tmp, "cuda-graph against itself", graph, graph, [])
        expect(dnntrace, tmp, "cuda-graph against a copy", graph, copy, [])
        expect(dnntrace, tmp, "cuda-graph rewritten at scale 1", graph,
               scaled("cuda-graph.dnnt", "same", "--all", "--scale", "1"),
               [])
        # cuDNN's convolutions 1.8x slower: 10.6 -> 19.1 us an execution,
        # under a floor per execution, above one per step
        expect(dnntrace, tmp, "cuDNN kernels 1.8x", graph,
               scaled("cuda-graph.dnnt", "cudnn", "--lib", "cudnn",
                      "--scale", "1.8"),
               [("dnntrace.diff.library", "cuDNN"),
                ("dnntrace.diff.family", "convolution"),
                ("dnntrace.diff.step", "step time")])
        # PyTorch's own kernels 3x slower: no cuDNN operation changed
        expect(dnntrace, tmp, "PyTorch kernels 3x", graph,
               scaled("cuda-graph.dnnt", "aten", "--lib", "aten",
                      "--scale", "3"),
               [("dnntrace.diff.library", "PyTorch (ATen)"),
                ("dnntrace.diff.gpu", "GPU time per step")])
        # the whole program 4.3x slower
        expect(dnntrace, tmp, "everything 4.3x", graph,
               scaled("cuda-graph.dnnt", "all", "--all", "--scale", "4.3"),
               [("dnntrace.diff.step", "step time"),
                ("dnntrace.diff.gpu", "GPU time per step")])
        # llama.cpp: no cuDNN at all, ggml's kernels 1.3x slower
        llama = os.path.join(data, "llama.dnnt")
        expect(dnntrace, tmp, "llama against itself", llama, llama, [])
        expect(dnntrace, tmp, "ggml kernels 1.3x", llama,
               scaled("llama.dnnt", "ggml", "--lib", "ggml", "--scale",
                      "1.3"),
               [("dnntrace.diff.library", "ggml")])
        # a 2-rank job, every kernel of both ranks 4.3x slower
        base, new = os.path.join(tmp, "job"), os.path.join(tmp, "job-slow")
        os.makedirs(new)
        subprocess.run([synth, api, base, "--ranks", "2", "--steps", "200"],
                       check=True, capture_output=True)
        for r in (0, 1):
            subprocess.run([scale, os.path.join(base, f"rank{r}.dnnt"),
                            os.path.join(new, f"rank{r}.dnnt"), "--all",
                            "--scale", "4.3"], check=True)
        expect(dnntrace, tmp, "a job against itself", base, base, [])
        # one kernel by name, on both ranks
        one = os.path.join(tmp, "job-nvjet")
        os.makedirs(one)
        for r in (0, 1):
            subprocess.run([scale, os.path.join(base, f"rank{r}.dnnt"),
                            os.path.join(one, f"rank{r}.dnnt"), "--name",
                            "nvjet_tst", "--scale", "2"], check=True)
        expect(dnntrace, tmp, "a job's nvjet kernel 2x", base, one,
               [("dnntrace.diff.kernel",
                 "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTT")])
        # collectives 12% longer, as when the ranks arrive further apart:
        # within the step time's spread (6%, 80 us a step), noise; the
        # nvjet kernel 2x slower too still fails the gate
        comm, both = (os.path.join(tmp, d) for d in ("job-comm", "job-both"))
        os.makedirs(comm)
        os.makedirs(both)
        for r in (0, 1):
            subprocess.run([scale, os.path.join(base, f"rank{r}.dnnt"),
                            os.path.join(comm, f"rank{r}.dnnt"), "--name",
                            "ncclDevKernel", "--scale", "1.12"], check=True)
            subprocess.run([scale, os.path.join(comm, f"rank{r}.dnnt"),
                            os.path.join(both, f"rank{r}.dnnt"), "--name",
                            "nvjet_tst", "--scale", "2"], check=True)
        expect(dnntrace, tmp, "a job's collectives 1.12x", base, comm, [])
        expect(dnntrace, tmp, "a job's collectives 1.12x, nvjet 2x", base,
               both, [("dnntrace.diff.kernel",
                       "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTT"),
                      ("dnntrace.diff.gpu", "GPU time per step")])
        expect(dnntrace, tmp, "a job 4.3x slower", base, new,
               [("dnntrace.diff.step", "step time"),
                ("dnntrace.diff.library", "NCCL")])
    finally:
        shutil.rmtree(tmp)
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
