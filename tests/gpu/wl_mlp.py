"""GPU workload: transformer MLP blocks, matmul + GELU, bf16, forward and backward (PyTorch).

Each block is Linear(d, 4d) -> GELU -> Linear(4d, d) with a residual add. PyTorch runs the
matmuls in cuBLAS and GELU in an elementwise kernel of its own: the matmul + activation chain that
one cuDNN matmul graph with a pointwise epilogue would run as one kernel. Prints
`RESULT mlp ms_per_iter=... checksum=...` (checksum: sum of the losses); exits 77 without a GPU.
"""

import wl_common

torch = wl_common.import_torch()
nn = torch.nn


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.up = nn.Linear(d, 4 * d)
        self.act = nn.GELU()
        self.down = nn.Linear(4 * d, d)

    def forward(self, x):
        return x + self.down(self.act(self.up(x)))


def main():
    def options(p):
        p.add_argument("--tokens", type=int, default=8192, help="batch x sequence (default %(default)s)")
        p.add_argument("--dim", type=int, default=1024, help="model width (default %(default)s)")
        p.add_argument("--blocks", type=int, default=2, help="MLP blocks (default %(default)s)")

    args = wl_common.parse_args(__doc__.splitlines()[0], extra=options)
    wl_common.torch_setup(torch)
    model = nn.Sequential(*[Block(args.dim) for _ in range(args.blocks)]).cuda().to(torch.bfloat16)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(args.tokens, args.dim, device="cuda", dtype=torch.bfloat16)

    def make_loss():
        return model(x).float().square().mean()

    ms, checksum = wl_common.torch_train_loop(torch, model, optimizer, make_loss, args.iters, args.warmup)
    wl_common.print_result("mlp", ms, checksum)


if __name__ == "__main__":
    main()
