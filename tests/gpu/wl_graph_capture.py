"""GPU workload: a conv net captured once into a CUDA graph and replayed, as a serving loop does (PyTorch).

conv (bias) -> ReLU -> conv (bias), fp32 NCHW with TF32 on (PyTorch's default for convolutions):
each convolution is one cudnnBackendExecute, and its bias add another kernel of PyTorch's. After a
warm-up on a side stream (as torch.cuda.graph's documentation asks), one forward pass is captured
with torch.cuda.graph; the graph is then replayed --replays times and the process exits at once,
with no eager pass after the capture. Prints `RESULT graph_capture ms_per_iter=... checksum=...`
and `CAPTURED convs=N replays=R`: the cuDNN executions a trace must show replayed are N x R.
Exits 77 without a GPU.
"""

import wl_common

torch = wl_common.import_torch()
nn = torch.nn


def main():
    def options(p):
        p.add_argument("--replays", type=int, default=13, help="graph replays (default %(default)s)")
        p.add_argument("--batch", type=int, default=8, help="images per step (default %(default)s)")
        p.add_argument("--channels", type=int, default=64, help="channels (default %(default)s)")
        p.add_argument("--size", type=int, default=56, help="height and width (default %(default)s)")

    args = wl_common.parse_args(__doc__.splitlines()[0], iters=1, warmup=2, extra=options)
    wl_common.torch_setup(torch, deterministic=False)
    torch.backends.cudnn.allow_tf32 = True
    c = args.channels
    model = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.ReLU(),
                          nn.Conv2d(c, c, 3, padding=1)).cuda().eval()
    convs = sum(isinstance(m, nn.Conv2d) for m in model)
    static_x = torch.randn(args.batch, c, args.size, args.size, device="cuda")

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side), torch.no_grad():
        for _ in range(args.warmup):
            model(static_x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph), torch.no_grad():
        static_y = model(static_x)

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    total = 0.0
    start.record()
    for _ in range(args.replays):
        graph.replay()
    end.record()
    torch.cuda.synchronize()
    total = static_y.double().sum().item()
    print("CAPTURED convs=%d replays=%d" % (convs, args.replays), flush=True)
    wl_common.print_result("graph_capture", start.elapsed_time(end) / args.replays, total)


if __name__ == "__main__":
    main()
