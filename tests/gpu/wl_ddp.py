"""GPU workload: ResNet-50 training steps under DistributedDataParallel, one rank per GPU (NCCL).

Start it with torchrun (`torchrun --standalone --nproc_per_node 2 wl_ddp.py`): each rank trains
the ResNet-50 of wl_resnet50.py (bf16 autocast, channels_last, SGD) on its own synthetic batch,
and the gradients are all-reduced by NCCL every step. --slow-rank R --sleep-ms S makes rank R
sleep S ms in every step before its backward pass: a straggler, which the other ranks wait for in
the all-reduce (--slow-rank all: every rank sleeps). --fp32 and --no-channels-last are deliberate
regressions of every step (no bf16 autocast; NCHW tensors), for checking `diff`. NVLink multicast stays off (NCCL_NVLS_ENABLE=0, ...), as on shared machines.
Each rank prints `RESULT ddp_rankN ms_per_iter=... checksum=...`; exits 77 without two GPUs.
"""

import os
import time

for k, v in (("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"),
             ("NVSHMEM_DISABLE_NVLS", "1")):
    os.environ.setdefault(k, v)

import wl_common  # noqa: E402
from wl_resnet50 import ResNet50, torch  # noqa: E402


def main():
    def options(p):
        p.add_argument("--batch", type=int, default=64, help="images per step and rank (default %(default)s)")
        p.add_argument("--slow-rank", default="none", help="the rank that sleeps in every step, or all")
        p.add_argument("--sleep-ms", type=float, default=0.0, help="how long it sleeps (ms)")
        p.add_argument("--fp32", action="store_true", help="no bf16 autocast")
        p.add_argument("--no-channels-last", action="store_true", help="keep NCHW tensors")

    args = wl_common.parse_args(__doc__.splitlines()[0], extra=options)
    if "RANK" not in os.environ or "LOCAL_RANK" not in os.environ:
        wl_common.skip("start it with torchrun (RANK and LOCAL_RANK are not set)")
    rank, local = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"])
    if torch.cuda.device_count() <= local:
        wl_common.skip("rank %d needs GPU %d; %d visible" % (rank, local, torch.cuda.device_count()))
    torch.cuda.set_device(local)
    wl_common.torch_setup(torch)
    torch.distributed.init_process_group("nccl", device_id=torch.device("cuda", local))
    torch.manual_seed(1234 + rank)

    layout = torch.contiguous_format if args.no_channels_last else torch.channels_last
    model = ResNet50().cuda().to(memory_format=layout)
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local])
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.01, momentum=0.9)
    images = torch.randn(args.batch, 3, 224, 224, device="cuda").to(memory_format=layout)
    labels = torch.randint(0, 1000, (args.batch,), device="cuda")
    slow = args.slow_rank in ("all", str(rank)) and args.sleep_ms > 0

    def make_loss():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=not args.fp32):
            logits = ddp(images)
        if slow:
            torch.cuda.synchronize()
            time.sleep(args.sleep_ms / 1000.0)
        return wl_common.one_hot_cross_entropy(torch, logits, labels)

    ms, checksum = wl_common.torch_train_loop(torch, ddp, optimizer, make_loss, args.iters, args.warmup)
    wl_common.print_result("ddp_rank%d" % rank, ms, checksum)
    torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
