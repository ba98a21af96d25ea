"""GPU workload: scaled_dot_product_attention forced onto cuDNN, bf16, forward + backward (PyTorch).

torch.nn.attention.sdpa_kernel(SDPBackend.CUDNN_ATTENTION) leaves PyTorch no other backend, so
every call goes through cuDNN's graph API via cudnn-frontend (MHA.cpp): graphs built once per
shape, then SetStream/GetStream + variant pack + execute per forward and per backward. q, k, v are
fixed leaf tensors from a seed; the loss is the mean square of the output. `--inference` runs the
forward pass alone under torch.inference_mode (no softmax statistics kept for a backward pass),
`--dtype fp16` in half precision; `--q-seq 1 --no-causal` is a decoding step (one query against
the whole sequence), which cuDNN 9.19 runs as its unified SDPA forward operation
(CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR) rather than a graph of matmuls and softmax. Prints
`RESULT sdpa ms_per_iter=... checksum=...` (checksum: sum of the losses and of the gradients of
every step, or of the outputs); exits 77 without a GPU or on a GPU older than sm80, where cuDNN attention does not run.
"""

import wl_common

torch = wl_common.import_torch()


def main():
    def extra(p):
        p.add_argument("--batch", type=int, default=4, help="batch (default %(default)s)")
        p.add_argument("--heads", type=int, default=16, help="heads (default %(default)s)")
        p.add_argument("--seq", type=int, default=1024, help="sequence length (default %(default)s)")
        p.add_argument("--q-seq", type=int, help="query length (default: --seq)")
        p.add_argument("--head-dim", type=int, default=64, help="head dimension (default %(default)s)")
        p.add_argument("--no-causal", action="store_true", help="full instead of causal attention")
        p.add_argument("--dropout", type=float, default=0.0,
                       help="attention dropout probability (default %(default)s); with dropout cuDNN's "
                            "graph takes a seed and an offset tensor, and the checksum varies")
        p.add_argument("--dtype", choices=("bf16", "fp16"), default="bf16",
                       help="q, k and v's type (default %(default)s)")
        p.add_argument("--inference", action="store_true",
                       help="forward passes alone, under torch.inference_mode")

    args = wl_common.parse_args(__doc__.splitlines()[0], extra=extra)
    # Not deterministic mode: PyTorch may refuse the cuDNN backend under it.
    wl_common.torch_setup(torch, deterministic=False)
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError as e:
        wl_common.skip("this PyTorch has no torch.nn.attention.sdpa_kernel (%s)" % e)
    if torch.cuda.get_device_capability(0) < (8, 0):
        wl_common.skip("cuDNN attention needs sm80 or newer")

    shape = (args.batch, args.heads, args.seq, args.head_dim)
    q_shape = (args.batch, args.heads, args.q_seq or args.seq, args.head_dim)
    dtype = torch.float16 if args.dtype == "fp16" else torch.bfloat16
    q, k, v = (torch.randn(s, device="cuda", dtype=dtype).requires_grad_(not args.inference)
               for s in (q_shape, shape, shape))
    total = torch.zeros((), dtype=torch.float64, device="cuda")
    sdpa = torch.nn.functional.scaled_dot_product_attention

    def forward():
        with torch.inference_mode(), sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            out = sdpa(q, k, v, is_causal=not args.no_causal)
        total.add_(out.double().sum())

    def step():
        for t in (q, k, v):
            t.grad = None
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            out = sdpa(q, k, v, is_causal=not args.no_causal, dropout_p=args.dropout)
        loss = out.float().square().mean()
        loss.backward()
        total.add_(loss.detach().double())
        for t in (q, k, v):
            total.add_(t.grad.double().sum())

    ms, _ = wl_common.run_timed(forward if args.inference else step, args.iters, args.warmup,
                                torch.cuda.synchronize)
    wl_common.print_result("sdpa", ms, total.item())


if __name__ == "__main__":
    main()
