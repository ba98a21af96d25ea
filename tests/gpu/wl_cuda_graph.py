"""GPU workload: a small conv net run from a CUDA graph (PyTorch), or eagerly for comparison.

Blocks of conv (bias=True) + ReLU + batch norm, inference. `--mode graph` captures one forward pass
with torch.cuda.graph after a warm-up and then replays the graph; `--mode compile` runs the model
through torch.compile(mode="reduce-overhead"), which captures CUDA graphs of its own; `--mode eager`
runs the same forward passes without a graph (the oracle the graph runs are compared with).
`--layout nhwc-bf16` (default) or `nchw-fp32`. Every replay launches the kernels of the cuDNN calls
made while capturing, with no cuDNN call. Prints `RESULT cuda_graph ms_per_iter=... checksum=...`
(checksum: sum of the outputs of every step); exits 77 without a GPU.
"""

import wl_common

torch = wl_common.import_torch()
nn = torch.nn


def main():
    def options(p):
        p.add_argument("--mode", choices=("graph", "compile", "eager"), default="graph",
                       help="how the forward pass runs (default %(default)s)")
        p.add_argument("--layout", choices=("nhwc-bf16", "nchw-fp32"), default="nhwc-bf16",
                       help="tensor layout and data type (default %(default)s)")
        p.add_argument("--batch", type=int, default=8, help="images per step (default %(default)s)")
        p.add_argument("--channels", type=int, default=64, help="channels (default %(default)s)")
        p.add_argument("--size", type=int, default=56, help="height and width (default %(default)s)")
        p.add_argument("--blocks", type=int, default=3, help="conv blocks (default %(default)s)")

    args = wl_common.parse_args(__doc__.splitlines()[0], iters=13, warmup=3, extra=options)
    wl_common.torch_setup(torch, deterministic=False)
    bf16 = args.layout == "nhwc-bf16"
    dtype = torch.bfloat16 if bf16 else torch.float32
    layout = torch.channels_last if bf16 else torch.contiguous_format
    layers = []
    for _ in range(args.blocks):
        layers += [nn.Conv2d(args.channels, args.channels, 3, padding=1, bias=True), nn.ReLU(),
                   nn.BatchNorm2d(args.channels)]
    model = nn.Sequential(*layers).cuda().to(dtype=dtype, memory_format=layout).eval()
    static_x = torch.randn(args.batch, args.channels, args.size, args.size, device="cuda",
                           dtype=dtype).to(memory_format=layout)
    total = torch.zeros((), dtype=torch.float64, device="cuda")

    if args.mode == "graph":
        # warm up on a side stream, as torch.cuda.graph's documentation asks, then capture once
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side), torch.no_grad():
            for _ in range(2):
                model(static_x)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph), torch.no_grad():
            static_y = model(static_x)
        wl_common.log("captured one forward pass")

        def step():
            graph.replay()
            total.add_(static_y.double().sum())
    elif args.mode == "compile":
        compiled = torch.compile(model, mode="reduce-overhead")

        def step():
            with torch.no_grad():
                total.add_(compiled(static_x).double().sum())
    else:
        def step():
            with torch.no_grad():
                total.add_(model(static_x).double().sum())

    ms, _ = wl_common.run_timed(step, args.iters, args.warmup, torch.cuda.synchronize)
    wl_common.print_result("cuda_graph", ms, total.item())


if __name__ == "__main__":
    main()
