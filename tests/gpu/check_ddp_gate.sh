#!/bin/sh
# The gate over a real 2-rank job: wl_ddp.py (ResNet-50, DistributedDataParallel
# over NCCL, one rank per GPU) recorded as it is three times, then with two
# changes that slow every step: bf16 autocast and channels_last taken out
# (--fp32 --no-channels-last: the GPU work of a step grows), and every rank
# sleeping in every step (--slow-rank all: the GPU work is the same, the
# steps are longer). `diff --fail-on regression` of the job folders must
# exit 0 for each pair of the three runs as they are, and 1 for each
# changed run against the first, naming cuDNN's GPU time (bf16 out) or
# the step time (the sleeps) slower; each job's own ms per step is
# printed beside the steps `report` found. Skips (77) with fewer than 2 GPUs or without torchrun.
# usage: check_ddp_gate.sh DNNTRACE OUTDIR [ITERS]
set -u
dnntrace=$1 out=$2 iters=${3:-24}
here=$(cd "$(dirname "$0")" && pwd)
n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "$n" -ge 2 ] || { echo "fewer than 2 GPUs ($n): skipped"; exit 77; }
command -v torchrun >/dev/null || { echo "no torchrun: skipped"; exit 77; }
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
rm -rf "$out" && mkdir -p "$out" || exit 2
fail=0
bad() { echo "FAIL: $*"; fail=1; }
job() { # job NAME ARGS...: the job recorded into OUT/NAME
	d=$out/$1
	shift
	mkdir -p "$d"
	"$dnntrace" record -q -o "$d/%q{RANK}.dnnt" -- torchrun --standalone \
		--nproc_per_node 2 "$here/wl_ddp.py" --batch 32 --iters "$iters" --warmup 3 "$@" \
		>"$d/out.txt" 2>&1 || bad "the job $d failed: $(tail -3 "$d/out.txt")"
	own=$(sed -n 's/^RESULT ddp_rank\([0-9]\) ms_per_iter=\([0-9.]*\).*/rank \1 \2 ms/p' "$d/out.txt" | sort | tr '\n' ' ')
	"$dnntrace" report --format json "$d" >"$d/report.json" 2>"$d/report.err" ||
		bad "report of $d: $(head -2 "$d/report.err")"
	found=$(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["steps"]
print("%d steady steps (%s), median %.3f ms" % (s["steps"], "found" if s["found"] else "none found",
                                                   s["time"]["median_ns"] / 1e6))
' "$d/report.json" 2>/dev/null)
	echo "$(basename "$d"): own ${own:-?}| report: ${found:-?}"
}
job a
job b
job c
job fp32 --fp32 --no-channels-last
job sleep --slow-rank all --sleep-ms 60
gate() { # gate BASE NEW WANT
	"$dnntrace" diff --fail-on regression "$out/$1" "$out/$2" >"$out/diff-$1-$2.txt" 2>&1
	rc=$?
	slower=$(grep -iE "slower" "$out/diff-$1-$2.txt" | head -4 | cut -c1-110 | tr '\n' ';')
	echo "diff $1 $2: exit $rc (want $3) $slower"
	[ "$rc" = "$3" ] || bad "diff $1 $2 exited $rc, not $3"
}
gate a b 0
gate a c 0
gate b c 0
gate a fp32 1
gate a sleep 1
# what each change slowed: bf16 taken out, cuDNN's kernels (the step may
# not be: a job waiting on its all-reduce hides them); the sleeps, the step
grep -qE "^library cuDNN .* slower$" "$out/diff-a-fp32.txt" ||
	bad "diff a fp32 does not name cuDNN slower"
grep -qE "^step time .* slower$" "$out/diff-a-sleep.txt" ||
	bad "diff a sleep does not name the step time slower"
[ $fail = 0 ] && echo "ddp gate: all checks passed"
exit $fail
