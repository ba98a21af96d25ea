"""GPU workload: memory-bound kernels of several families on tensors far larger than L2.

Each step runs, on half tensors of 96 Mi elements (192 MiB each; an H100's L2 holds 50 MiB):
cuDNN's batch norm at inference (normalization), an elementwise add of two tensors, a sum
(reduction) and a fill, each kernel long enough (tens of microseconds) for DRAM counters sampled
every 20 us to be given to it. check_dram.py compares the DRAM bytes `dnntrace record
--gpu-metrics` attributes to each family with what Nsight Compute counts for the same kernels.
Prints `RESULT memory ms_per_iter=... checksum=...`; exits 77 without a GPU.
"""

import wl_common

torch = wl_common.import_torch()


def main():
    args = wl_common.parse_args(__doc__.splitlines()[0], iters=20, warmup=2)
    wl_common.torch_setup(torch)
    x = torch.randn(32, 256, 112, 112, device="cuda", dtype=torch.float16)
    y = torch.randn_like(x)
    z = torch.empty_like(x)
    bn = torch.nn.BatchNorm2d(256).cuda().eval()
    total = torch.zeros((), dtype=torch.float64, device="cuda")

    def step():
        with torch.no_grad():
            b = bn(x)
            torch.add(x, y, out=z)
            total.add_(z.sum(dtype=torch.float32).double() * 1e-9)
            z.fill_(0.5)
            total.add_(b[0, 0, 0, 0].double())

    ms, _ = wl_common.run_timed(step, args.iters, args.warmup, torch.cuda.synchronize)
    wl_common.print_result("memory", ms, total.item())


if __name__ == "__main__":
    main()
