"""Shared plumbing for the GPU workloads (wl_*.py): options, skipping, timing, the RESULT line.

Every workload prints exactly one line on stdout, last:

    RESULT <name> ms_per_iter=<float> checksum=<float>

ms_per_iter is the wall time of the timed iterations (after --warmup ones), measured between two
device synchronizations. checksum is a deterministic function of the losses/outputs of all
iterations (warmup included), so runs with and without the tracer can be compared. Everything
else goes to stderr. A workload that finds no usable GPU exits 77 ("skipped").

This module imports neither torch nor jax: the JAX workload must not load PyTorch's cuDNN.
"""

import argparse
import os
import sys
import time

SKIP = 77


def parse_args(description, iters=20, warmup=3, extra=None):
    """Parse --iters/--warmup (and whatever `extra(parser)` adds); return the namespace."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--iters", type=int, default=iters, help="timed iterations (default %(default)s)")
    parser.add_argument("--warmup", type=int, default=warmup, help="untimed iterations first (default %(default)s)")
    if extra:
        extra(parser)
    args = parser.parse_args()
    if args.iters < 1 or args.warmup < 0:
        parser.error("--iters must be >= 1 and --warmup >= 0")
    return args


def skip(message):
    """Say why the workload cannot run here and exit 77 (skipped)."""
    print("SKIP: " + message, file=sys.stderr)
    sys.exit(SKIP)


def log(message):
    """Progress and diagnostics go to stderr; stdout is reserved for the RESULT line."""
    print(message, file=sys.stderr, flush=True)


def print_result(name, ms_per_iter, checksum):
    """Print the one RESULT line that run-oracle.sh parses."""
    print("RESULT %s ms_per_iter=%.4f checksum=%r" % (name, ms_per_iter, float(checksum)), flush=True)


def cudnn_marker():
    """Make one cuDNN call that no framework makes (a 7x7x7x7 tensor descriptor), so that a
    trace and cuDNN's log can be cut at the timed iterations. Goes through dlopen + dlsym on
    the libcudnn.so.9 the process already loaded."""
    import ctypes
    lib = ctypes.CDLL("libcudnn.so.9")
    desc = ctypes.c_void_p()
    lib.cudnnCreateTensorDescriptor(ctypes.byref(desc))
    lib.cudnnSetTensor4dDescriptor(desc, 0, 0, 7, 7, 7, 7)
    lib.cudnnDestroyTensorDescriptor(desc)


def run_timed(step, iters, warmup, sync):
    """Run step() warmup+iters times; return (ms per timed iteration, list of step results).

    sync() must wait for all queued device work; it is called before the clock starts and
    before it stops, so asynchronous launches are fully accounted for.

    For kernels_vs_profiler.py: with DNNTRACE_WL_MARKER=1 a cudnn_marker() call brackets the
    timed iterations; with DNNTRACE_WL_PROFILE=FILE they run under torch.profiler (PyTorch
    workloads) or JAX's profiler (JAX workloads), whose trace is written to FILE (Chrome's JSON).
    """
    results = [step() for _ in range(warmup)]
    sync()
    marker = os.environ.get("DNNTRACE_WL_MARKER") == "1"
    profile = os.environ.get("DNNTRACE_WL_PROFILE")
    prof = None
    if profile and "torch" in sys.modules:
        tp = sys.modules["torch"].profiler
        prof = tp.profile(activities=[tp.ProfilerActivity.CPU, tp.ProfilerActivity.CUDA])
        prof.__enter__()
    elif profile and "jax" in sys.modules:
        prof = JaxProfile(sys.modules["jax"], profile)
        prof.__enter__()
    if marker:
        cudnn_marker()
    t0 = time.perf_counter()
    results += [step() for _ in range(iters)]
    sync()
    elapsed = time.perf_counter() - t0
    if marker:
        cudnn_marker()
    if prof is not None:
        prof.__exit__(None, None, None)
        prof.export_chrome_trace(profile)
        # one more step after a pause, for a tracer that resumes once the profiler is done
        time.sleep(1.0)
        step()
        sync()
    return elapsed * 1000.0 / iters, results


class JaxProfile:
    """JAX's profiler around the timed iterations, its trace copied to `path` (Chrome's JSON),
    with the interface of torch.profiler's that run_timed uses."""

    def __init__(self, jax, path):
        self.jax, self.path, self.dir = jax, path, path + ".d"

    def __enter__(self):
        import shutil
        shutil.rmtree(self.dir, ignore_errors=True)  # no earlier run's trace
        self.jax.profiler.start_trace(self.dir, create_perfetto_trace=True)

    def __exit__(self, *exc):
        self.jax.profiler.stop_trace()

    def export_chrome_trace(self, path):
        import glob
        import gzip
        import shutil
        found = sorted(glob.glob(os.path.join(self.dir, "**", "perfetto_trace.json.gz"),
                                 recursive=True))
        if not found:
            log("JAX's profiler wrote no perfetto_trace.json.gz under %s" % self.dir)
            return
        with gzip.open(found[-1], "rb") as src, open(path, "wb") as dst:
            shutil.copyfileobj(src, dst)


def import_torch():
    """Import and return torch, or exit 77 when it is not installed.

    Sets CUBLAS_WORKSPACE_CONFIG first (unless the caller did): deterministic cuBLAS needs it
    before CUDA initializes.
    """
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    try:
        import torch
    except ImportError as e:
        skip("PyTorch is not installed (%s)" % e)
    return torch


def torch_setup(torch, deterministic=True):
    """Check that CUDA and cuDNN work, seed, and pin cuDNN's choices.

    benchmark=False makes PyTorch take cuDNN's heuristics (one plan per shape, the same choice in
    every run). deterministic=True also turns on torch.use_deterministic_algorithms, warn_only so
    that ops without a deterministic kernel still run.
    """
    if not torch.cuda.is_available():
        skip("no CUDA GPU visible to PyTorch")
    if not torch.backends.cudnn.is_available():
        skip("PyTorch finds no usable cuDNN")
    torch.manual_seed(1234)
    torch.backends.cudnn.enabled = True
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = deterministic
    if deterministic:
        torch.use_deterministic_algorithms(True, warn_only=True)
    log("torch %s, cuDNN %s, %s" % (torch.__version__, torch.backends.cudnn.version(),
                                    torch.cuda.get_device_name(0)))


def one_hot_cross_entropy(torch, logits, labels):
    """Cross entropy through log_softmax and a one-hot mask: avoids the gather/scatter_add and
    nll_loss kernels whose CUDA versions are not deterministic."""
    logp = torch.nn.functional.log_softmax(logits.float(), dim=1)
    mask = torch.nn.functional.one_hot(labels, logits.shape[1]).to(logp.dtype)
    return -(logp * mask).sum(dim=1).mean()


def torch_train_loop(torch, model, optimizer, make_loss, iters, warmup):
    """Time training steps of `model`; return (ms_per_iter, checksum = sum of all step losses).

    make_loss() runs the forward pass and returns the scalar loss. Losses are accumulated on the
    device, so no step waits for the GPU.
    """
    total = torch.zeros((), dtype=torch.float64, device="cuda")

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = make_loss()
        loss.backward()
        optimizer.step()
        total.add_(loss.detach().double())

    model.train()
    ms, _ = run_timed(step, iters, warmup, torch.cuda.synchronize)
    return ms, total.item()


def jax_train_loop(jax, train_step, params, batch, iters, warmup):
    """Time train_step(params, batch) -> (params, loss), a jitted JAX step, each step's params
    the last one's; return (ms_per_iter, checksum = sum of all step losses)."""
    state = {"params": params}
    losses = []

    def step():
        state["params"], loss = train_step(state["params"], batch)
        losses.append(loss)

    ms, _ = run_timed(step, iters, warmup, lambda: jax.block_until_ready(state["params"]))
    return ms, sum(float(v) for v in losses)
