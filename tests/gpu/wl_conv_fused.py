"""GPU workload: convolution + bias + ReLU, unfused and fused for real, bf16 NHWC (PyTorch).

Two chains on one input: conv -> + bias -> ReLU, and conv -> + z (a residual) -> + bias -> ReLU.
Unfused, PyTorch eager runs each step as its own kernel (cuDNN's convolution, then elementwise
kernels); fused, torch.cudnn_convolution_relu and torch.cudnn_convolution_add_relu run each
chain as one cuDNN graph. `--mode unfused` runs the unfused chains only (the program to record);
`--mode both` also times each way per iteration with CUDA events, alternating rounds, and prints
`TIME <chain> unfused_us=... fused_us=...` (medians over the rounds) before the RESULT line
(checksum: sum of the outputs of every step); exits 77 without a GPU.
"""

import statistics

import wl_common

torch = wl_common.import_torch()
F = torch.nn.functional


def main():
    def options(p):
        p.add_argument("--mode", choices=("unfused", "both"), default="both",
                       help="what runs (default %(default)s)")
        p.add_argument("--batch", type=int, default=32, help="images (default %(default)s)")
        p.add_argument("--channels", type=int, default=128, help="channels (default %(default)s)")
        p.add_argument("--size", type=int, default=56, help="height and width (default %(default)s)")
        p.add_argument("--rounds", type=int, default=9, help="timed rounds of each way (default %(default)s)")

    args = wl_common.parse_args(__doc__.splitlines()[0], iters=30, warmup=5, extra=options)
    wl_common.torch_setup(torch, deterministic=False)
    # both ways take the engine autotuning finds, as replay's fastest
    torch.backends.cudnn.benchmark = True
    cl, bf = torch.channels_last, torch.bfloat16
    c, n, s = args.channels, args.batch, args.size
    x = torch.randn(n, c, s, s, device="cuda", dtype=bf).to(memory_format=cl)
    z = torch.randn(n, c, s, s, device="cuda", dtype=bf).to(memory_format=cl)
    w = (torch.randn(c, c, 3, 3, device="cuda", dtype=bf) * 0.05).to(memory_format=cl)
    b = torch.randn(c, device="cuda", dtype=bf)
    bias = b.view(1, c, 1, 1)
    total = torch.zeros((), dtype=torch.float64, device="cuda")
    geo = ([1, 1], [1, 1], [1, 1], 1)  # stride, padding, dilation, groups

    def relu_unfused():
        return torch.relu(F.conv2d(x, w, None, 1, 1) + bias)

    def add_relu_unfused():
        return torch.relu(F.conv2d(x, w, None, 1, 1) + z + bias)

    def relu_fused():
        return torch.cudnn_convolution_relu(x, w, b, *geo)

    def add_relu_fused():
        return torch.cudnn_convolution_add_relu(x, w, z, 1.0, b, *geo)

    def step():
        with torch.no_grad():
            total.add_(relu_unfused().double().sum())
            total.add_(add_relu_unfused().double().sum())

    if args.mode == "both":
        with torch.no_grad():
            for name, unfused, fused in (("relu", relu_unfused, relu_fused),
                                         ("add_relu", add_relu_unfused, add_relu_fused)):
                err = (unfused().float() - fused().float()).abs().max().item()
                times = {"unfused": [], "fused": []}
                for _ in range(args.rounds):
                    for way, f in (("unfused", unfused), ("fused", fused)):
                        for _ in range(args.warmup):
                            f()
                        t0 = torch.cuda.Event(enable_timing=True)
                        t1 = torch.cuda.Event(enable_timing=True)
                        t0.record()
                        for _ in range(args.iters):
                            f()
                        t1.record()
                        torch.cuda.synchronize()
                        times[way].append(t0.elapsed_time(t1) * 1e3 / args.iters)
                print("TIME %s unfused_us=%.2f fused_us=%.2f max_diff=%.3g" % (
                    name, statistics.median(times["unfused"]), statistics.median(times["fused"]), err),
                    flush=True)
    ms, _ = wl_common.run_timed(step, args.iters, args.warmup, torch.cuda.synchronize)
    wl_common.print_result("conv_fused", ms, total.item())


if __name__ == "__main__":
    main()
