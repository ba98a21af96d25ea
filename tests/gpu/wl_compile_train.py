"""GPU workload: the small CNN of wl_small_cnn.py trained through torch.compile (PyTorch).

The model is compiled (TorchInductor: Triton kernels, cuDNN convolutions) before the first
step, so the first steps of a trace are compilation and autotuning and the rest the steady
state. Prints `RESULT compile_train ms_per_iter=... checksum=...` (checksum: sum of the training
losses); exits 77 without a GPU.
"""

import wl_common
import wl_small_cnn

torch = wl_small_cnn.torch


def main():
    args = wl_common.parse_args(__doc__.splitlines()[0], iters=50, warmup=3, extra=lambda p: p.add_argument(
        "--batch", type=int, default=32, help="images per step (default %(default)s)"))
    wl_common.torch_setup(torch, deterministic=False)

    model = wl_small_cnn.SmallCNN().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    compiled = torch.compile(model)
    image = torch.randn(args.batch, 3, 64, 64, device="cuda")
    label = torch.randint(0, 10, (args.batch,), device="cuda")
    ms, checksum = wl_common.torch_train_loop(
        torch, compiled, optimizer,
        lambda: wl_common.one_hot_cross_entropy(torch, compiled(image), label),
        args.iters, args.warmup)
    wl_common.print_result("compile_train", ms, checksum)


if __name__ == "__main__":
    main()
