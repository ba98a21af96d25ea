"""GPU workload: convolutions PyTorch autotunes (torch.backends.cudnn.benchmark = True).

Four 3x3 and 1x1 convolutions of a ResNet stage, fp16 channels-last, batch 16, inference. With
benchmark on, PyTorch times every plan cudnn-frontend offers for each shape on first use
(time_sorted_plan, aten/src/ATen/native/cudnn/Conv_v8.cpp) and runs the fastest from then on:
the engine a trace records for each convolution is autotune's choice, what check_autotune.py
holds against replay's. Prints `RESULT autotune ms_per_iter=... checksum=...`; exits 77
without a GPU.
"""

import wl_common

torch = wl_common.import_torch()
nn = torch.nn


def main():
    args = wl_common.parse_args(__doc__.splitlines()[0], iters=20, warmup=3)
    wl_common.torch_setup(torch, deterministic=False)
    torch.backends.cudnn.benchmark = True  # autotune: what this workload is about
    model = nn.Sequential(
        nn.Conv2d(64, 64, 1, bias=False), nn.ReLU(),
        nn.Conv2d(64, 64, 3, padding=1, bias=False), nn.ReLU(),
        nn.Conv2d(64, 256, 1, bias=False), nn.ReLU(),
        nn.Conv2d(256, 128, 3, stride=2, padding=1, bias=False),
    ).cuda().half().to(memory_format=torch.channels_last).eval()
    image = torch.randn(16, 64, 56, 56, device="cuda").half().to(memory_format=torch.channels_last)
    total = torch.zeros((), dtype=torch.float64, device="cuda")

    def step():
        total.add_(model(image).double().sum())

    with torch.no_grad():
        ms, _ = wl_common.run_timed(step, args.iters, args.warmup, torch.cuda.synchronize)
    wl_common.print_result("autotune", ms, total.item())


if __name__ == "__main__":
    main()
