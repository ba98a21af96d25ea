"""GPU workload: wl_small_cnn's network trained a few steps, each named with NVTX.

Each training step runs inside `torch.cuda.nvtx.range("step")`. --mode nvtx runs them under
`torch.autograd.profiler.emit_nvtx()`, which names every aten op with an NVTX range
("aten::cudnn_convolution, seq = 12, ..."), for `dnntrace record`; --mode profile runs the same
steps under torch.profiler with `record_function("step")` and writes, as JSON to --out, each
op's count, the GPU time of the kernels it launched (device_time_total) and of those of them
not PyTorch's own (no "at::" in the name: cuDNN's), the oracle check_nvtx.py compares the
trace's ranges with. Exits 77 without a GPU.
"""

import json

import wl_common

torch = wl_common.import_torch()

import wl_small_cnn  # noqa: E402 (after wl_common checked for torch and a GPU)


def main():
    args = wl_common.parse_args(__doc__.splitlines()[0], iters=5, warmup=3, extra=lambda p: (
        p.add_argument("--mode", choices=["nvtx", "profile"], required=True),
        p.add_argument("--out", help="--mode profile: where to write the ops' times")))
    wl_common.torch_setup(torch, deterministic=True)
    model = wl_small_cnn.SmallCNN().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    image = torch.randn(8, 3, 64, 64, device="cuda")
    label = torch.randint(0, 10, (8,), device="cuda")

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = wl_common.one_hot_cross_entropy(torch, model(image), label)
        loss.backward()
        optimizer.step()
        return loss.item()

    for _ in range(args.warmup):  # plans built, kernels loaded: outside what is compared
        step()
    torch.cuda.synchronize()
    losses = []
    if args.mode == "nvtx":
        with torch.autograd.profiler.emit_nvtx():
            for _ in range(args.iters):
                with torch.cuda.nvtx.range("step"):
                    losses.append(step())
                    torch.cuda.synchronize()
    else:
        tp = torch.profiler
        with tp.profile(activities=[tp.ProfilerActivity.CPU, tp.ProfilerActivity.CUDA]) as prof:
            for _ in range(args.iters):
                with tp.record_function("step"):
                    losses.append(step())
                    torch.cuda.synchronize()
        ops = {e.key: {"count": e.count, "gpu_ns": int(e.device_time_total * 1000)}
               for e in prof.key_averages()}
        # and each op's kernels launched through cuDNN (not PyTorch's own, which no cuDNN
        # call launches): its own and its children's
        def kernels(e):
            for k in e.kernels:
                yield k
            for c in e.cpu_children:
                yield from kernels(c)
        for e in prof.events():
            own = [k for k in kernels(e) if "at::" not in k.name]
            o = ops[e.key].setdefault("cudnn_gpu_ns", 0)
            ops[e.key]["cudnn_gpu_ns"] = o + int(sum(k.duration for k in own) * 1000)
            other = sorted({k.name[:80] for k in kernels(e) if "at::" in k.name})
            if other:
                ops[e.key]["other_kernels"] = other
        with open(args.out, "w") as f:
            json.dump(ops, f, indent=1)
    wl_common.print_result("nvtx", 0.0, sum(losses))


if __name__ == "__main__":
    main()
