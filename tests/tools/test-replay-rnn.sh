#!/bin/sh
# dnntrace replay of the legacy calls PyTorch's LSTM and small CNN make
# (synth-trace's rnn scenario: cudnnRNNForward, cudnnRNNBackwardData_v8,
# cudnnRNNBackwardWeights_v8, batch normalization's ForwardTrainingEx and
# BackwardEx). Without a GPU, `--list` says each can be rebuilt; on the
# stand-in for CUDA's driver and cuDNN (fake-gpu.c) each is made again
# and measured: the stand-in refuses a run unless the RNN's dropout
# descriptor has the recorded probability, seed and states, the sequence
# lengths on the device are the x descriptor's (32 of them), the spaces
# are as large as it said, and a backward finds in its reserve space what
# the pass before it wrote there.
# usage: test-replay-rnn.sh DNNTRACE FAKE_GPU_LIBRARY SYNTH_TRACE API_LISTING
set -u
abs() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
dnntrace=$(abs "$1") fake=$(abs "$2") synth=$(abs "$3") listing=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
failed() { echo "FAIL: $*"; fail=1; }

"$synth" "$listing" "$dir" --scenario rnn --steps 3 || exit 2
t=$dir/rnn.dnnt
"$dnntrace" replay --list "$t" >"$dir/list" 2>&1 || failed "replay --list exited $?"
[ "$(grep -c '^ *[0-9]' "$dir/list")" = 5 ] && [ "$(grep -c '^ *can be rebuilt$' "$dir/list")" = 5 ] ||
	failed "replay --list listed: $(cat "$dir/list")"

mkdir "$dir/lib"
ln -s "$fake" "$dir/lib/libcuda.so.1" && ln -s "$fake" "$dir/lib/libcudnn.so.9" &&
	ln -s "$fake" "$dir/lib/libcupti.so.13" || exit 2
LD_LIBRARY_PATH=$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} FAKE_GPU_NAME="NVIDIA H100 80GB HBM3" \
	"$dnntrace" replay -q --budget 10 "$t" 2>"$dir/err" || failed "replay: exit status $?: $(cat "$dir/err")"
python3 - "$dir/rnn.replay.jsonl" <<'PY' || failed "the results: $(cat "$dir/rnn.replay.jsonl")"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
apis = sorted(p["api"] for p in lines[1:])
assert apis == ["cudnnBatchNormalizationBackwardEx", "cudnnBatchNormalizationForwardTrainingEx",
                "cudnnRNNBackwardData_v8", "cudnnRNNBackwardWeights_v8", "cudnnRNNForward"], apis
for p in lines[1:]:
    c = p["candidates"]
    assert p["status"] == "measured" and len(c) == 1 and c[0]["status"] == "ok", p
    assert p["replayed_ns"] == 10000 and p["best"] == 0 and p["legacy"], p
ws = {p["api"]: p["candidates"][0]["workspace"] for p in lines[1:]}
assert ws == {"cudnnBatchNormalizationBackwardEx": 768, "cudnnBatchNormalizationForwardTrainingEx": 512,
              "cudnnRNNBackwardData_v8": 1024, "cudnnRNNBackwardWeights_v8": 1024, "cudnnRNNForward": 1024}, ws
PY
exit $fail
