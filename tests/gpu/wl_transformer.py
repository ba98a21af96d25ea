"""GPU workload: a transformer encoder layer's training step, bf16, forward and backward (PyTorch).

nn.TransformerEncoderLayer (attention and MLP) in bf16: PyTorch runs its projections' matmuls
with a bias through cuBLASLt (cublasLtMatmul with a bias epilogue), the attention's batched
products and the gradients through cuBLAS (cublasGemmEx, cublasGemmStridedBatchedEx): both of
the libraries' paths, for the check of dnntrace's calls against cuBLAS's and cuBLASLt's own logs
(check_cublas.py). Prints `RESULT transformer ms_per_iter=... checksum=...` (checksum: sum of
the losses); exits 77 without a GPU.
"""

import wl_common

torch = wl_common.import_torch()
nn = torch.nn


def main():
    def options(p):
        p.add_argument("--batch", type=int, default=8, help="sequences (default %(default)s)")
        p.add_argument("--seq", type=int, default=128, help="sequence length (default %(default)s)")
        p.add_argument("--dim", type=int, default=512, help="model width (default %(default)s)")

    args = wl_common.parse_args(__doc__.splitlines()[0], iters=3, warmup=1, extra=options)
    wl_common.torch_setup(torch)
    model = nn.TransformerEncoderLayer(args.dim, 8, 4 * args.dim, dropout=0.0, batch_first=True)
    model = model.cuda().to(torch.bfloat16)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(args.batch, args.seq, args.dim, device="cuda", dtype=torch.bfloat16)

    def make_loss():
        return model(x).float().square().mean()

    ms, checksum = wl_common.torch_train_loop(torch, model, optimizer, make_loss, args.iters, args.warmup)
    wl_common.print_result("transformer", ms, checksum)


if __name__ == "__main__":
    main()
