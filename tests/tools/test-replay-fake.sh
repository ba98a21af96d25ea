#!/bin/sh
# dnntrace replay end to end without a GPU: a stand-in for CUDA's driver
# and cuDNN (fake-gpu.c, where engine or algorithm FAKE_FAST runs in 5 us
# and every other in 10 us) under the names replay loads. On the bundled
# sample's trace: a GPU of another model refused (3) unless --any-gpu;
# both convolutions rebuilt and measured, and its softmax, activation and
# pooling (the recorded call, their one candidate),
# the fast engine and algorithm found best and the recorded ones' replays
# uncertain against the trace; report's two engine choices; a replay
# stopped half way continued; --op, --top, --cold-cache, --engines all
# (every engine, and each knob over its range: TILE_SIZE at 3 runs in
# 4 us).
# A batch normalization made again from a call as the decoder keeps it
# (test-replay-legacy-ops.c); a layer normalization built as a backend
# graph (synth-trace's norm scenario) rebuilt and measured.
# usage: test-replay-fake.sh DNNTRACE FAKE_GPU_LIBRARY SOURCE_ROOT
#                            LEGACY_OPS_TEST SYNTH_TRACE
set -u
abs() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
dnntrace=$(abs "$1") fake=$(abs "$2") root=$3 legacy_ops=$(abs "$4") synth=$(abs "$5")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/lib"
ln -s "$fake" "$dir/lib/libcuda.so.1" && ln -s "$fake" "$dir/lib/libcudnn.so.9" || exit 2
LD_LIBRARY_PATH=$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
FAKE_FAST=1
export LD_LIBRARY_PATH FAKE_FAST
cp "$root/tests/data/h200-sample.dnnt" "$dir/" || exit 2
t=$dir/h200-sample.dnnt
fail=0
failed() { echo "FAIL: $*"; fail=1; }
# check RESULTS PYTHON: the results file's lines as `lines`, the
# convolutions measured as `m` (the legacy one, then the backend one), the
# other legacy calls measured as `o`
check() {
	python3 - "$1" "$2" <<'PY' || failed "$1: $2"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
conv = lambda p: "Convolution" in p["api"] or not p["legacy"]
m = sorted((p for p in lines[1:] if p["status"] == "measured" and conv(p)), key=lambda p: not p["legacy"])
o = sorted((p["api"] for p in lines[1:] if p["status"] == "measured" and not conv(p)))
assert eval(sys.argv[2]), [(p["problem"][:40], p["status"], p.get("best")) for p in lines[1:]]
PY
}

FAKE_GPU_NAME="NVIDIA H100 80GB HBM3" "$dnntrace" replay -q "$t" 2>"$dir/err"
[ $? = 3 ] || failed "another GPU model: exit status $?, not 3"
grep -q "recorded on an NVIDIA H200, this GPU is an NVIDIA H100" "$dir/err" ||
	failed "another GPU model said: $(cat "$dir/err")"
FAKE_GPU_NAME="NVIDIA H100 80GB HBM3" "$dnntrace" replay -q --any-gpu -o "$dir/any.jsonl" "$t" ||
	failed "--any-gpu: exit status $?"
check "$dir/any.jsonl" 'lines[0]["any_gpu"] and lines[0]["gpu"].startswith("NVIDIA H100")'

"$dnntrace" replay --budget 30 "$t" 2>"$dir/err" || failed "replay: exit status $?: $(cat "$dir/err")"
r=$dir/h200-sample.replay.jsonl
check "$r" 'len(lines) == 6 and len(m) == 2 and all(p.get("reason") for p in lines[1:] if p["status"] != "measured")'
# the recorded engine first; the fast one best; 10 us against 9.8 and 6.6
check "$r" '[p["candidates"][0]["source"] for p in m] == ["recorded"] * 2 and [p["candidates"][p["best"]]["engine"] for p in m] == [1, 1]'
check "$r" '[p["replayed_ns"] for p in m] == [10000, 10000] and [p["uncertain"] for p in m] == [False, True]'
check "$r" 'all(c["agrees"] for p in m for c in p["candidates"][1:]) and m[1]["candidates"][m[1]["best"]]["workspace"] == 256'
# softmax, activation and pooling made again: the recorded call, timed
check "$r" 'o == ["cudnnActivationForward", "cudnnPoolingForward", "cudnnSoftmaxForward"]'
check "$r" 'all(len(p["candidates"]) == 1 and p["replayed_ns"] == 10000 and p["best"] == 0 for p in lines[1:] if p["api"] in o)'
grep -q '^replay: \[2/5\]' "$dir/err" || failed "no progress on stderr"
"$dnntrace" report "$t" >"$dir/report" || failed "report: exit status $?"
[ "$(grep -c 'engine choice' "$dir/report")" = 2 ] || failed "report has not 2 engine choices"

# stopped while writing the third line: continued from the second
head -n 2 "$r" >"$dir/cut" && sed -n 3p "$r" | head -c 50 >>"$dir/cut" && mv "$dir/cut" "$r"
"$dnntrace" replay --budget 30 "$t" 2>"$dir/err" || failed "continuing: exit status $?"
grep -q "continuing .*: 1 problems measured before" "$dir/err" || failed "continuing said: $(cat "$dir/err")"
check "$r" 'len(lines) == 6 and len(m) == 2'

"$dnntrace" replay -q --op 120 -o "$dir/op.jsonl" "$t" || failed "--op: exit status $?"
check "$dir/op.jsonl" 'len(lines) == 2 and m[0]["engine"] == 70'
"$dnntrace" replay -q --top 2 --cold-cache -o "$dir/cold.jsonl" "$t" || failed "--cold-cache: exit status $?"
check "$dir/cold.jsonl" 'lines[0]["cold_cache"] and len(lines) == 3 and [p["replayed_ns"] for p in m] == [10000, 10000]'
"$dnntrace" replay -q --op 120 --engines all -o "$dir/all.jsonl" "$t" || failed "--engines all: exit status $?"
# every engine, and each one's knob over its range: TILE_SIZE=3 best
check "$dir/all.jsonl" 'lines[0]["engines"] == "all" and sum(c["source"] == "all" for c in m[0]["candidates"]) > 50'
check "$dir/all.jsonl" 'm[0]["candidates"][m[0]["best"]].get("knobs") == "TILE_SIZE=3" and m[0]["candidates"][m[0]["best"]]["median_ns"] == 4000'
# plans that take 50 ms each to build: --engines all stops building them
# when the problem's budget (1 s) is spent, and says so
start=$(date +%s)
FAKE_PLAN_US=50000 "$dnntrace" replay -q --op 120 --engines all --budget 1 -o "$dir/slow.jsonl" "$t" ||
	failed "--engines all with slow plans: exit status $?"
[ $(($(date +%s) - start)) -le 5 ] || failed "--engines all with slow plans took $(($(date +%s) - start)) s for a 1 s budget"
check "$dir/slow.jsonl" 'm[0]["candidates"][0]["status"] == "ok" and any(c["status"] == "not timed: the problem\x27s budget was spent" for c in m[0]["candidates"])'
# engines that take 20 ms each to finalize (72 of them, a config per knob
# value): listing every engine's configs stops at half the budget
start=$(date +%s)
FAKE_ENGINE_US=20000 "$dnntrace" replay -q --op 120 --engines all --budget 1 -o "$dir/engines.jsonl" "$t" ||
	failed "--engines all with slow engines: exit status $?"
[ $(($(date +%s) - start)) -le 3 ] || failed "--engines all with slow engines took $(($(date +%s) - start)) s for a 1 s budget"
check "$dir/engines.jsonl" 'm[0]["candidates"][0]["status"] == "ok" and 1 < len(m[0]["candidates"]) < 100'
"$legacy_ops" || failed "a batch normalization was not made again"
# a backend normalization graph (recorded on an H100): rebuilt, its
# engine and the heuristics' timed, the fast one (1) best
"$synth" "$root/shim/libs/cudnn-api.txt" "$dir" --scenario norm --steps 4 || exit 2
"$dnntrace" replay -q --any-gpu "$dir/norm.dnnt" || failed "replay of a normalization graph: exit status $?"
check "$dir/norm.replay.jsonl" 'len(lines) == 2 and len(m) == 1 and m[0]["candidates"][0]["status"] == "ok" and m[0]["candidates"][m[0]["best"]]["engine"] == 1 and "NORM_FORWARD" in m[0]["problem"]'
exit $fail
