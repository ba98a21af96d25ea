"""GPU workload: a small CNN trained at batch 1, fp32 NCHW (PyTorch); host-bound by design.

Three conv/batch-norm/ReLU blocks (the first two max-pooled), a global mean and a linear layer.
Each step is tiny, so the time goes to launching kernels and calling cuDNN: this is where a
tracer's per-call cost shows. In fp32 NCHW PyTorch runs batch norm through cuDNN's legacy API
(cudnnBatchNormalizationForwardTrainingEx / BackwardEx) and convolutions through the backend API.
Prints `RESULT small_cnn ms_per_iter=... checksum=...` (checksum: sum of the training losses);
exits 77 without a GPU. --eval times inference instead (checksum: sum of the logits).
"""

import wl_common

torch = wl_common.import_torch()
nn = torch.nn


def block(cin, cout, pool):
    """conv 3x3 -> batch norm -> ReLU, then an optional 2x2 max pool."""
    layers = [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]
    if pool:
        layers.append(nn.MaxPool2d(2))
    return nn.Sequential(*layers)


class SmallCNN(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(block(3, 32, True), block(32, 64, True), block(64, 128, False))
        self.fc = nn.Linear(128, num_classes)

    def forward(self, x):
        return self.fc(self.features(x).mean(dim=(2, 3)))


def time_inference(model, image, iters, warmup):
    """Forward passes under no_grad; checksum is the sum of all logits produced."""
    total = torch.zeros((), dtype=torch.float64, device="cuda")

    def step():
        total.add_(model(image).double().sum())

    model.eval()
    with torch.no_grad():
        ms, _ = wl_common.run_timed(step, iters, warmup, torch.cuda.synchronize)
    return ms, total.item()


def main():
    args = wl_common.parse_args(__doc__.splitlines()[0], extra=lambda p: p.add_argument(
        "--eval", action="store_true", help="time inference instead of training steps"))
    wl_common.torch_setup(torch, deterministic=True)

    model = SmallCNN().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    image = torch.randn(1, 3, 64, 64, device="cuda")
    label = torch.randint(0, 10, (1,), device="cuda")

    if args.eval:
        ms, checksum = time_inference(model, image, args.iters, args.warmup)
    else:
        ms, checksum = wl_common.torch_train_loop(
            torch, model, optimizer,
            lambda: wl_common.one_hot_cross_entropy(torch, model(image), label),
            args.iters, args.warmup)
    wl_common.print_result("small_cnn", ms, checksum)


if __name__ == "__main__":
    main()
