"""GPU workload: CTC loss through cuDNN, forward + backward (PyTorch).

torch.nn.functional.ctc_loss takes cuDNN's path (cudnnCTCLoss) when blank is 0, the log
probabilities are fp32 on the GPU, the targets are one concatenated int32 tensor on the CPU, every
input length equals the sequence length and every target length is under 256 and no longer than
its input. Prints `RESULT ctc ms_per_iter=... checksum=...` (checksum: sum of the losses of all
steps); exits 77 without a GPU.
"""

import wl_common

torch = wl_common.import_torch()


def main():
    def extra(p):
        p.add_argument("--batch", type=int, default=16, help="sequences (default %(default)s)")
        p.add_argument("--time", type=int, default=100, help="input length (default %(default)s)")
        p.add_argument("--classes", type=int, default=32, help="classes, blank included (default %(default)s)")
        p.add_argument("--target", type=int, default=30, help="target length (default %(default)s)")

    args = wl_common.parse_args(__doc__.splitlines()[0], extra=extra)
    wl_common.torch_setup(torch, deterministic=False)
    gen = torch.Generator().manual_seed(1234)
    logits = torch.randn(args.time, args.batch, args.classes, device="cuda", requires_grad=True)
    targets = torch.randint(1, args.classes, (args.batch * args.target,), generator=gen, dtype=torch.int32)
    input_lengths = [args.time] * args.batch
    target_lengths = [args.target] * args.batch
    total = torch.zeros((), dtype=torch.float64, device="cuda")

    def step():
        logits.grad = None
        log_probs = logits.log_softmax(2)
        loss = torch.nn.functional.ctc_loss(log_probs, targets, input_lengths, target_lengths,
                                            blank=0, reduction="sum")
        loss.backward()
        total.add_(loss.detach().double())

    ms, _ = wl_common.run_timed(step, args.iters, args.warmup, torch.cuda.synchronize)
    wl_common.print_result("ctc", ms, total.item())


if __name__ == "__main__":
    main()
