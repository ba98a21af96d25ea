"""GPU workload: batch norm at inference on a tensor far larger than L2 (PyTorch, cuDNN).

One memory-bound cuDNN operation, cudnnBatchNormalizationForwardInference, on an fp16 NCHW
tensor of 32x256x112x112 (196 MiB in, 196 MiB out; an H200's L2 holds 60 MiB): each execution
must read x once and write y once, which is what `dnntrace report` counts and what Nsight
Compute's DRAM counters can confirm (check_report.py --ncu). Prints
`RESULT bandwidth ms_per_iter=... checksum=...`; exits 77 without a GPU.
"""

import wl_common

torch = wl_common.import_torch()


def main():
    args = wl_common.parse_args(__doc__.splitlines()[0], iters=10, warmup=2)
    wl_common.torch_setup(torch)
    x = torch.randn(32, 256, 112, 112, device="cuda", dtype=torch.float16)
    # float parameters: PyTorch hands half data to cuDNN's batch norm only
    # with them
    bn = torch.nn.BatchNorm2d(256).cuda().eval()
    total = torch.zeros((), dtype=torch.float64, device="cuda")

    def step():
        with torch.no_grad():
            y = bn(x)
            total.add_(y[0, 0, 0, 0].double())

    ms, _ = wl_common.run_timed(step, args.iters, args.warmup, torch.cuda.synchronize)
    wl_common.print_result("bandwidth", ms, total.item())


if __name__ == "__main__":
    main()
