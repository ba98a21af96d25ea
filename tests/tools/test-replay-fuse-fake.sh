#!/bin/sh
# Fusion what-ifs of other heads than a backend graph, end to end on the
# stand-in for CUDA's driver and cuDNN (fake-gpu.c, as
# test-replay-fake.sh uses it): a legacy convolution's chain, GEMMs'
# (cuBLAS, cuBLASLt) epilogues and prologues, measured; the fused output
# held against the unfused chain's, and one that disagrees shown as such.
# usage: test-replay-fuse-fake.sh DNNTRACE FAKE_GPU_LIBRARY SOURCE_ROOT
#                                 SYNTH_TRACE
set -u
abs() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
dnntrace=$(abs "$1") fake=$(abs "$2") root=$3 synth=$(abs "$4")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. "$(dirname "$0")/fake-gpu-env.sh"
h100="NVIDIA H100 80GB HBM3"
fail=0
failed() { echo "FAIL: $*"; fail=1; }
# check RESULTS PYTHON: the results file's fusion what-ifs as `f`
check() {
	python3 - "$1" "$2" <<'PY' || failed "$1: $2"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
f = [p for p in lines[1:] if "fusion" in p]
assert eval(sys.argv[2]), [(p["fusion"][:40], p["status"], p.get("reason")) for p in f]
PY
}

# A legacy convolution's chain (synth-trace's fusion scenario: NHWC BF16
# on sm_90, cudnnConvolutionForward, then PyTorch's bias add and ReLU):
# the fused graph built of the call's descriptors, the head replayed
# with its recorded algorithm (1, FAKE_FAST: 5 us), the legacy API's own
# fused call named; the fused output held against the unfused chain's
# (the fake's convolutions write zeros, its pointwise graphs copy):
# they agree, and with FAKE_FUSED_OFF (the fused graph writes a 4) they
# do not, which `fusion` says instead of a saving
"$synth" "$root/shim/libs/cudnn-api.txt" "$dir" --scenario fusion --steps 4 >/dev/null || exit 2
lg=$dir/fusion-h100.dnnt
"$dnntrace" replay -q --any-gpu --top 1 -o "$dir/legacy.jsonl" "$lg" || failed "replay of a legacy head: exit status $?"
lf='[x for x in f if x["status"] == "measured"]'
check "$dir/legacy.jsonl" "len($lf) == 1 and $lf[0]['head_from'] == 'legacy call' and $lf[0]['legacy_fused_call'] == 'cudnnConvolutionBiasActivationForward'"
check "$dir/legacy.jsonl" "[(s['what'], s['source'], s['ns']) for s in $lf[0]['steps']] == [('convolution forward', 'replayed', 5000), ('bias add', 'recorded', 31000), ('ReLU', 'recorded', 11000)] and $lf[0]['fused_ns'] == 7000"
check "$dir/legacy.jsonl" "$lf[0]['outputs_agree'] is True and $lf[0]['outputs_error'] == 0 and 'outputs_not_compared' not in $lf[0]"
FAKE_FUSED_OFF=1 "$dnntrace" replay -q --any-gpu --top 1 -o "$dir/off.jsonl" "$lg" || failed "replay, fused output off: exit status $?"
check "$dir/off.jsonl" "$lf[0]['outputs_agree'] is False and $lf[0]['outputs_error'] == 4 and $lf[0]['saving_ns'] == 40000"
cp "$dir/off.jsonl" "$dir/fusion-h100.replay.jsonl"
"$dnntrace" fusion --with-warmup "$lg" >"$dir/fusion" || failed "fusion of a legacy head: exit status $?"
grep -q "^   measured:   no saving: the fused graph's output is not the unfused chain's (4 of its largest value apart), though 40.0 us faster per time" "$dir/fusion" ||
	failed "fusion shows outputs that disagree as: $(grep measured: "$dir/fusion")"
grep -q "^   note:       the fused graph was built of the legacy call's descriptors; cudnnConvolutionBiasActivationForward would run the chain too" "$dir/fusion" ||
	failed "fusion does not name the legacy fused call: $(grep -A4 measured: "$dir/fusion")"
# plans that take 200 ms to build and a budget of 3 s: the outputs are
# compared before the steps' own graphs are timed, which are kept for the
# reader and must not crowd the comparison out
FAKE_PLAN_US=200000 "$dnntrace" replay -q --any-gpu --top 1 --budget 3 -o "$dir/slow.jsonl" "$lg" || failed "replay, slow plans: exit status $?"
check "$dir/slow.jsonl" "$lf[0]['outputs_agree'] is True and 'outputs_not_compared' not in $lf[0]"
# GEMM heads (synth-trace's gemm scenario, on an H100): a GemmEx with
# PyTorch's bias add and GELU after it, an Sgemm with SiLU, a cuBLASLt
# matmul whose own epilogue adds its bias, with GELU after it; each a
# cuDNN matmul graph (its epilogue's bias a pointwise node of it, 1 us
# more), timed beside the GEMM's time in the trace
"$synth" "$root/shim/libs/cudnn-api.txt" "$dir" --scenario gemm --steps 4 >/dev/null || exit 2
FAKE_GPU_NAME=$h100 "$dnntrace" replay -q -o "$dir/gemm.jsonl" "$dir/gemm.dnnt" || failed "replay of GEMM heads: exit status $?"
check "$dir/gemm.jsonl" "len(f) == 3 and all(x['status'] == 'measured' and x['head_from'] == 'GEMM' and x['outputs_agree'] for x in f)"
check "$dir/gemm.jsonl" "sorted((x['steps'][0]['source'], x['steps'][0]['ns'], x['steps'][0]['graph_ns'], x['fused_ns']) for x in f) == [('recorded', 22000, 6000, 7000), ('recorded', 40000, 5000, 6000), ('recorded', 250000, 5000, 7000)]"
check "$dir/gemm.jsonl" "[s['what'] for x in f for s in x['steps'] if x['steps'][0]['ns'] == 250000] == ['matrix multiply', 'bias add', 'GELU']"
# prologues (the variant `prologue`): SiLU and a multiply written into an
# Sgemm's B, a cast into a GemmEx's B, each a pointwise node on the
# matmul's input in one graph; the head the chain's last step
mkdir "$dir/pro" && "$synth" "$root/shim/libs/cudnn-api.txt" "$dir/pro" --scenario gemm --steps 4 --variant prologue >/dev/null || exit 2
FAKE_GPU_NAME=$h100 "$dnntrace" replay -q -o "$dir/pro.jsonl" "$dir/pro/gemm.dnnt" || failed "replay of prologues: exit status $?"
check "$dir/pro.jsonl" "len(f) == 2 and all(x['status'] == 'measured' and x['pattern'] == 'pointwise prologue + matmul' and x['outputs_agree'] and x['head'] for x in f)"
check "$dir/pro.jsonl" "sorted([(s['what'], s['source'], s['ns'], s.get('graph_ns'), s.get('head', False)) for s in x['steps']] for x in f) == [[('SiLU', 'recorded', 24000, 2000, False), ('multiply', 'recorded', 36000, 2000, False), ('matrix multiply', 'recorded', 150000, 5000, True)], [('copy/cast', 'recorded', 3000, 2000, False), ('matrix multiply', 'recorded', 60000, 5000, True)]]"
check "$dir/pro.jsonl" "sorted(x['fused_ns'] for x in f) == [6000, 7000]"
exit $fail
