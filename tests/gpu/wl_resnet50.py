"""GPU workload: ResNet-50 training steps, bf16 autocast, channels_last, SGD (PyTorch).

The network is defined here (bottleneck blocks, layers 3-4-6-3), so neither torchvision nor any
download is needed. Input is one synthetic batch made from a fixed seed. cuDNN sees the backend
(graph) API for every convolution: forward, dgrad and wgrad plans built once per shape, then
SetStream + variant pack + execute per call. Prints `RESULT resnet50 ms_per_iter=... checksum=...`
(checksum: sum of the training losses); exits 77 without a GPU.
"""

import wl_common

torch = wl_common.import_torch()
nn = torch.nn


class Bottleneck(nn.Module):
    """1x1 reduce, 3x3 (carrying the stride), 1x1 expand by 4, with a projected shortcut when the
    shape changes."""

    expansion = 4

    def __init__(self, inplanes, planes, stride=1):
        super().__init__()
        out = planes * self.expansion
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, out, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(out)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if stride != 1 or inplanes != out:
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, out, 1, stride=stride, bias=False),
                                            nn.BatchNorm2d(out))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.relu(self.bn2(self.conv2(y)))
        y = self.bn3(self.conv3(y))
        return self.relu(y + identity)


class ResNet50(nn.Module):
    """Stem (7x7/2 conv, 3x3/2 max pool), four stages of bottlenecks, global mean, linear."""

    def __init__(self, num_classes=1000):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False),
                                  nn.BatchNorm2d(64), nn.ReLU(inplace=True),
                                  nn.MaxPool2d(3, stride=2, padding=1))
        stages, inplanes = [], 64
        for planes, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
            for i in range(blocks):
                stages.append(Bottleneck(inplanes, planes, stride if i == 0 else 1))
                inplanes = planes * Bottleneck.expansion
        self.stages = nn.Sequential(*stages)
        self.fc = nn.Linear(inplanes, num_classes)

    def forward(self, x):
        x = self.stages(self.stem(x))
        return self.fc(x.mean(dim=(2, 3)))  # mean, not AdaptiveAvgPool: deterministic backward


def main():
    def options(p):
        p.add_argument("--batch", type=int, default=64, help="images per step (default %(default)s)")
        # deliberate changes, for check_diff.py
        p.add_argument("--no-channels-last", action="store_true", help="keep NCHW tensors")
        p.add_argument("--fp32", action="store_true", help="no bf16 autocast")
        p.add_argument("--benchmark", action="store_true", help="torch.backends.cudnn.benchmark = True")

    args = wl_common.parse_args(__doc__.splitlines()[0], extra=options)
    wl_common.torch_setup(torch, deterministic=not args.benchmark)
    torch.backends.cudnn.benchmark = args.benchmark
    layout = torch.contiguous_format if args.no_channels_last else torch.channels_last

    model = ResNet50().cuda().to(memory_format=layout)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    images = torch.randn(args.batch, 3, 224, 224, device="cuda").to(memory_format=layout)
    labels = torch.randint(0, 1000, (args.batch,), device="cuda")

    def make_loss():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=not args.fp32):
            logits = model(images)
        return wl_common.one_hot_cross_entropy(torch, logits, labels)

    ms, checksum = wl_common.torch_train_loop(torch, model, optimizer, make_loss, args.iters, args.warmup)
    wl_common.print_result("resnet50", ms, checksum)


if __name__ == "__main__":
    main()
