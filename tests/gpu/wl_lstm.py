"""GPU workload: training steps of a 2-layer nn.LSTM, fp32 (PyTorch's cuDNN RNN path).

PyTorch drives cuDNN's legacy RNN API for this (cudnnRNNForward, cudnnRNNBackwardData_v8,
cudnnRNNBackwardWeights_v8, cudnnGetRNNWeightParams called many times per step, ...), so the
workload is host-heavy in cuDNN calls. Input is one synthetic (seq, batch, feature) batch from a
fixed seed; a linear head on the last time step gives class logits. Prints
`RESULT lstm ms_per_iter=... checksum=...` (checksum: sum of the training losses); exits 77
without a GPU.
"""

import wl_common

torch = wl_common.import_torch()
nn = torch.nn


class LSTMClassifier(nn.Module):
    def __init__(self, features, hidden, layers, classes):
        super().__init__()
        self.lstm = nn.LSTM(features, hidden, num_layers=layers)
        self.fc = nn.Linear(hidden, classes)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.fc(out[-1])


def main():
    def extra(p):
        p.add_argument("--seq", type=int, default=64, help="sequence length (default %(default)s)")
        p.add_argument("--batch", type=int, default=32, help="sequences per step (default %(default)s)")
        p.add_argument("--hidden", type=int, default=512, help="hidden size (default %(default)s)")

    args = wl_common.parse_args(__doc__.splitlines()[0], extra=extra)
    wl_common.torch_setup(torch, deterministic=True)

    model = LSTMClassifier(256, args.hidden, 2, 10).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    seqs = torch.randn(args.seq, args.batch, 256, device="cuda")
    labels = torch.randint(0, 10, (args.batch,), device="cuda")

    ms, checksum = wl_common.torch_train_loop(
        torch, model, optimizer,
        lambda: wl_common.one_hot_cross_entropy(torch, model(seqs), labels),
        args.iters, args.warmup)
    wl_common.print_result("lstm", ms, checksum)


if __name__ == "__main__":
    main()
