"""GPU workload: a stack of conv + bias + activation blocks, inference, bf16, channels_last (PyTorch).

Each block is nn.Conv2d(bias=True) followed by ReLU (or SiLU with --act silu). PyTorch runs the
convolution through cuDNN and adds the bias and applies the activation in two separate
elementwise kernels: the chain that one cuDNN graph (convolution with a bias and activation
epilogue) would run as one kernel. Prints `RESULT convbias ms_per_iter=... checksum=...`
(checksum: sum of the outputs of every step); exits 77 without a GPU.
"""

import wl_common

torch = wl_common.import_torch()
nn = torch.nn


def main():
    def options(p):
        p.add_argument("--batch", type=int, default=32, help="images per step (default %(default)s)")
        p.add_argument("--channels", type=int, default=128, help="channels (default %(default)s)")
        p.add_argument("--size", type=int, default=56, help="height and width (default %(default)s)")
        p.add_argument("--blocks", type=int, default=4, help="conv blocks (default %(default)s)")
        p.add_argument("--act", choices=("relu", "silu"), default="relu", help="activation (default %(default)s)")
        p.add_argument("--no-channels-last", action="store_true", help="keep NCHW tensors")

    args = wl_common.parse_args(__doc__.splitlines()[0], extra=options)
    wl_common.torch_setup(torch)
    layout = torch.contiguous_format if args.no_channels_last else torch.channels_last
    act = nn.ReLU if args.act == "relu" else nn.SiLU
    layers = []
    for _ in range(args.blocks):
        layers += [nn.Conv2d(args.channels, args.channels, 3, padding=1, bias=True), act()]
    model = nn.Sequential(*layers).cuda().to(dtype=torch.bfloat16, memory_format=layout).eval()
    x = torch.randn(args.batch, args.channels, args.size, args.size, device="cuda",
                    dtype=torch.bfloat16).to(memory_format=layout)
    total = torch.zeros((), dtype=torch.float64, device="cuda")

    def step():
        with torch.no_grad():
            total.add_(model(x).double().sum())

    ms, _ = wl_common.run_timed(step, args.iters, args.warmup, torch.cuda.synchronize)
    wl_common.print_result("convbias", ms, total.item())


if __name__ == "__main__":
    main()
