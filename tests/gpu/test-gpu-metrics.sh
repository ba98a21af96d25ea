#!/bin/sh
# record --gpu-metrics on the GPU: a memory-bound cuDNN batch norm at
# inference (wl_bandwidth.py: x and y of 205 MB each) sampled every 20 us.
# The DRAM bytes the report gives cuDNN's normalization, per execution, must
# be within 10% of what its descriptors say it reads (x: half its bytes).
# Skips (77) without a GPU, or where the GPU's counters cannot be read.
# usage: test-gpu-metrics.sh DNNTRACE SOURCE_ROOT
set -u
dnntrace=$1 root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 ||
	{ echo "no GPU: skipped"; exit 77; }
"$dnntrace" record -q --gpu-metrics=20 -o "$tmp/%p.dnnt" -- \
	python3 "$root/tests/gpu/wl_bandwidth.py" --iters 500 || exit 1
f=$(ls "$tmp"/*.dnnt | head -1)
"$dnntrace" info "$f" | grep "GPU metrics"
if ! "$dnntrace" info "$f" | grep -q "GPU metrics: *on:"; then
	echo "the GPU's counters were not sampled: skipped"
	exit 77
fi
"$dnntrace" report --format json "$f" >"$tmp/r.json" || exit 1
"$dnntrace" ops --format json --with-warmup "$f" >"$tmp/o.json" || exit 1
python3 - "$tmp/r.json" "$tmp/o.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ops = [o for o in json.load(open(sys.argv[2]))["ops"] if o["kind"] == "norm_fwd"]
bn = [x for x in r["dram"]["by_family"]
      if x["library"] == "cudnn" and x["family"] == "normalization"]
if not ops or not bn:
    sys.exit("FAIL: no batch norm executions (%d) or no DRAM bytes for them" % len(ops))
want = ops[0]["bytes"] / 2
got = bn[0]["read_bytes"] / len(ops)
print("batch norm: %d executions, %.1f MB read each by the counters, "
      "%.1f MB by its descriptors" % (len(ops), got / 1e6, want / 1e6))
if abs(got - want) > 0.10 * want:
    sys.exit("FAIL: more than 10% apart")
PY
