"""GPU workload: three cuBLAS GEMMs of known size, for FLOP rates checked against Nsight Compute.

    wl_gemm_sizes.py [--only bf16|fp16_batched|fp32] [--iters N] [--warmup N]

bf16: torch.mm of 4096x4096 by 4096x4096 (bf16, FP32 accumulation); fp16_batched: torch.bmm of
16 products 1024x512 by 512x1024 (fp16); fp32: torch.mm of 2048x2048 by 2048x2048 in FP32 with
TF32 off (a SIMT kernel, no tensor cores). Each timed iteration of each GEMM runs inside an NVTX
range named `gemm_<name>`, so that `ncu --nvtx --nvtx-include gemm_<name>/` profiles its kernels
alone. Prints `RESULT gemm_sizes ms_per_iter=... checksum=...`; exits 77 without a GPU.
"""

import wl_common

SHAPES = {
    "bf16": ("bfloat16", (4096, 4096), (4096, 4096), False),
    "fp16_batched": ("float16", (16, 1024, 512), (16, 512, 1024), True),
    "fp32": ("float32", (2048, 2048), (2048, 2048), False),
}


def main():
    def extra(p):
        p.add_argument("--only", choices=sorted(SHAPES), help="run one of the GEMMs")

    args = wl_common.parse_args(__doc__.splitlines()[0], iters=5, warmup=2, extra=extra)
    try:
        import torch
    except ImportError as e:
        wl_common.skip("PyTorch is not installed (%s)" % e)
    if not torch.cuda.is_available():
        wl_common.skip("PyTorch finds no GPU")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(1234)
    names = [args.only] if args.only else list(SHAPES)
    mats = {}
    for name in names:
        dtype, sa, sb, _ = SHAPES[name]
        t = getattr(torch, dtype)
        mats[name] = (torch.randn(sa, device="cuda").to(t), torch.randn(sb, device="cuda").to(t))
    outs = {}

    def step():
        for name in names:
            a, b = mats[name]
            torch.cuda.nvtx.range_push("gemm_" + name)
            outs[name] = torch.bmm(a, b) if SHAPES[name][3] else torch.mm(a, b)
            torch.cuda.nvtx.range_pop()

    ms, _ = wl_common.run_timed(step, args.iters, args.warmup, torch.cuda.synchronize)
    checksum = sum(float(o.float().abs().mean()) for o in outs.values())
    wl_common.print_result("gemm_sizes", ms, checksum)


if __name__ == "__main__":
    main()
