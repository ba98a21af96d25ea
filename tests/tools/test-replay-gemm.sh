#!/bin/sh
# dnntrace replay of GEMMs without a GPU: the stand-in (fake-gpu.c) also
# linked as libcublasLt.so.13, where algorithm ID 1 runs in 5 us
# (FAKE_FAST) and the others in 10 us. On the PyTorch transformer's
# trace: its cuBLASLt matmuls (algorithm 66, its configuration recorded)
# rebuilt and measured, the recorded algorithm first, then the
# heuristics' (1 best, its outputs agreeing, its workspace said),
# calibrated by their kernels; its cuBLAS calls, whose cuBLASLt algorithm
# the trace lacks, not rebuilt, with why; the report's engine choice
# naming the algorithm and configuration to pass to cublasLtMatmul.
# On synth-trace's nested GEMMs: cuBLAS calls rebuilt from the algorithm
# of the cuBLASLt matmul they ran through, --engines all trying every
# algorithm ID over its tiles, gemv, trsm and syrk not rebuilt, and the
# report saying that cuBLAS's call has the faster one through cuBLASLt;
# diff naming GEMMs' engines as algorithms; sizes past cuBLAS's ints
# not rebuilt.
# An algorithm whose outputs disagree is not the best; where
# libcublasLt.so.13 does not load, GEMMs are listed not rebuilt and
# cuDNN's problems are measured.
# Epilogues, FP16 scalars and refusals no trace at hand has:
# test-replay-gemm-build.c.
# usage: test-replay-gemm.sh DNNTRACE FAKE_GPU_LIBRARY SOURCE_ROOT
#                            SYNTH_TRACE GEMM_BUILD_TEST
set -u
abs() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
dnntrace=$(abs "$1") fake=$(abs "$2") root=$3 synth=$(abs "$4") build_test=$(abs "$5")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. "$(dirname "$0")/fake-gpu-env.sh"
# the stand-in as cuBLASLt too; and in nolt, the same but a cuBLASLt
# that is not a library: the loader stops at it, whatever cuBLASLt the
# machine has
ln -s "$fake" "$dir/lib/libcublasLt.so.13" && mkdir "$dir/nolt" || exit 2
for l in libcuda.so.1 libcudnn.so.9 libcupti.so.13; do
	ln -s "$fake" "$dir/nolt/$l" || exit 2
done
: >"$dir/nolt/libcublasLt.so.13"
FAKE_GPU_NAME="NVIDIA H100 80GB HBM3"
export FAKE_GPU_NAME
fail=0
failed() { echo "FAIL: $*"; fail=1; }
# check RESULTS PYTHON: the results file's lines as `lines`, the GEMM
# problems as `g`, those measured as `m`, the other problems as `o`
check() {
	python3 - "$1" "$2" <<'PY' || failed "$1: $2"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
probs = [p for p in lines[1:] if "problem" in p]
g = [p for p in probs if "gemm" in p]
m = [p for p in g if p["status"] == "measured"]
o = [p for p in probs if "gemm" not in p]
assert eval(sys.argv[2]), [(p["problem"][:50], p["status"], p.get("reason"), p.get("best")) for p in probs]
PY
}
# has REPORT_JSON TEXT: an engine-choice finding's evidence holds TEXT
has() {
	python3 - "$1" "$2" <<'PY' || failed "report: no engine choice saying: $2"
import json, sys
r = json.load(open(sys.argv[1]))
ev = [e for f in r["findings"] if f["type"] == "engine_choice" for e in f.get("evidence", [])]
assert any(sys.argv[2] in e for e in ev), ev
PY
}

t=$dir/transformer-gemm.dnnt
cp "$root/tests/data/transformer-gemm.dnnt" "$t" || exit 2
"$dnntrace" replay --budget 20 "$t" 2>"$dir/err" || failed "replay: exit status $?: $(cat "$dir/err")"
r=$dir/transformer-gemm.replay.jsonl
check "$r" 'lines[0]["cublaslt"] == "130100" and len(m) == 3 and all(p["api"] == "cublasLtMatmul" and p["gemm"] == "cublaslt" for p in m)'
# the recorded algorithm first, with its recorded configuration
check "$r" 'all(p["candidates"][0]["source"] == "recorded" and p["candidates"][0]["engine"] == 66 == p["engine"] and p["candidates"][0]["knobs"] == p["knobs"] and p["knobs_recorded"] for p in m)'
check "$r" 'all(p["calibration_by"] == "kernels" and p["replayed_kernels_ns"] == 10000 and p["scalars_recorded"] for p in m)'
# the heuristics' algorithm 1 the best, agreeing, with the 1 KiB it needs
check "$r" 'all(p["candidates"][p["best"]]["engine"] == 1 and p["candidates"][p["best"]]["agrees"] and p["candidates"][p["best"]]["workspace"] == 1024 and p["candidates"][p["best"]]["source"] == "heuristic" for p in m)'
check "$r" 'all(p["status"] == "not_rebuilt" and "cuBLAS ran through" in p["reason"] for p in g if p["api"] != "cublasLtMatmul") and len(g) == 11'
grep -q '^replay:   \[2/[34]\] algo1 TILE_ID=20 SPLITK_NUM=1 STAGES_ID=35 (heuristic): 5.0 us' "$dir/err" ||
	failed "no GEMM candidate in the progress: $(cat "$dir/err")"
"$dnntrace" report --format json "$t" >"$dir/report.json" 2>"$dir/err" || failed "report: exit status $?"
has "$dir/report.json" "to choose it: pass cublasLtMatmul algorithm ID 1 with TILE_ID=20 SPLITK_NUM=1 STAGES_ID=35 (cublasLtMatmulAlgoInit, then cublasLtMatmulAlgoConfigSetAttribute)"
"$dnntrace" report "$t" >"$dir/report" 2>&1 || failed "report: exit status $?"
grep -q "engine choice (uncertain): matmul gemm T,N m=512 n=1024 k=2048 .* ran algo66 (TILE_ID=15 SPLITK_NUM=1 CUSTOM_OPTION=1 STAGES_ID=35 CLUSTER_SHAPE_ID=3) in 10.0 us; algo1 (TILE_ID=20 SPLITK_NUM=1 STAGES_ID=35) took 5000 ns" "$dir/report" ||
	failed "report: $(grep 'engine choice' "$dir/report")"

# diff names a GEMM's engines as its algorithms
mkdir "$dir/a" "$dir/b" && cp "$t" "$dir/transformer-gemm.replay.jsonl" "$dir/a/" &&
	cp "$t" "$dir/transformer-gemm.replay.jsonl" "$dir/b/" || exit 2
"$dnntrace" diff "$dir/a/transformer-gemm.dnnt" "$dir/b/transformer-gemm.dnnt" >"$dir/diff" 2>&1
grep -q "^algo66 {TILE_ID=15 SPLITK_NUM=1 CUSTOM_OPTION=1 STAGES_ID=35 CLUSTER_SHAPE_ID=3} 10.0 us  algo1 {TILE_ID=20 SPLITK_NUM=1 STAGES_ID=35} 5000 ns" "$dir/diff" ||
	failed "diff: $(grep -A6 '^Replays' "$dir/diff")"

# an algorithm whose outputs disagree is not the best
FAKE_GEMM_WRONG=1 "$dnntrace" replay -q --budget 10 -o "$dir/wrong.jsonl" "$t" || failed "replay with a wrong algorithm: exit status $?"
check "$dir/wrong.jsonl" 'len(m) == 3 and all(c["agrees"] is False for p in m for c in p["candidates"] if c["engine"] == 1) and all(p["candidates"][p["best"]]["engine"] != 1 for p in m)'

# cuBLAS calls through their nested matmul's algorithm; every algorithm
mkdir "$dir/nested" &&
	"$synth" "$root/shim/libs/cudnn-api.txt" "$dir/nested" --scenario gemm --variant nested >/dev/null || exit 2
n=$dir/nested/gemm.dnnt
"$dnntrace" replay -q --budget 20 --engines all "$n" || failed "replay --engines all: exit status $?"
r=$dir/nested/gemm.replay.jsonl
check "$r" 'sorted(p["candidates"][0]["knobs"] for p in m if p["gemm"] == "cublas") == ["TILE_ID=18 STAGES_ID=24 CLUSTER_SHAPE_ID=2", "TILE_ID=20 SPLITK_NUM=1 CUSTOM_OPTION=1 STAGES_ID=35 CLUSTER_SHAPE_ID=3"]'
# IDs 1, 6, 21 and 66 over tiles 15 and 20, those the heuristics gave not twice
check "$r" 'all(sorted((c["engine"], c["knobs"]) for c in p["candidates"] if c["source"] == "all") == [(i, "TILE_ID=%d SPLITK_NUM=1" % t) for i in (1, 6, 21, 66) for t in (15, 20) if (i, t) != (21, 20)] for p in m)'
check "$r" 'sorted(p["problem"][:4] for p in probs if p["status"] == "not_rebuilt" and p["reason"].startswith("not a GEMM")) == ["gemv", "syrk", "trsm"]'
"$dnntrace" report --format json "$n" >"$dir/report.json" 2>"$dir/err" || failed "report: exit status $?"
has "$dir/report.json" "to choose it: call cublasLtMatmul algorithm ID 1 with TILE_ID=20 SPLITK_NUM=1 STAGES_ID=35 (cuBLAS takes none since CUDA 11; cublasLtMatmulAlgoInit"
has "$dir/report.json" "PyTorch: TunableOp (PYTORCH_TUNABLEOP_ENABLED=1)"

"$build_test" || failed "GEMMs made from struct dt_gemm_build"

# sizes past cuBLAS's ints (a hostile trace's) are not sized in memory
mkdir "$dir/huge" &&
	"$synth" "$root/shim/libs/cudnn-api.txt" "$dir/huge" --scenario gemm --variant huge >/dev/null || exit 2
"$dnntrace" replay --list "$dir/huge/gemm.dnnt" >"$dir/list" 2>&1 || failed "replay --list: exit status $?"
grep -q "a dimension, leading dimension, batch or stride outside 1 to 2^31" "$dir/list" ||
	failed "replay --list of huge sizes: $(cat "$dir/list")"

# no cuBLASLt: GEMMs not rebuilt, cuDNN's problems measured
LD_LIBRARY_PATH=$dir/nolt "$dnntrace" replay --budget 10 -o "$dir/nolt.jsonl" "$t" 2>"$dir/err" ||
	failed "replay without cuBLASLt: exit status $?: $(cat "$dir/err")"
check "$dir/nolt.jsonl" '"cublaslt" not in lines[0] and len(g) == 11 and not m and all(p["status"] == "not_rebuilt" for p in g) and sum("cuBLASLt cannot be loaded" in p["reason"] for p in g) == 3'
check "$dir/nolt.jsonl" 'len(o) == 2 and all(p["status"] == "measured" for p in o)'
grep -q "^replay: cuBLASLt cannot be loaded (libcublasLt.so.13 on the loader's path), through which GEMMs are built again: GEMMs are listed not rebuilt" "$dir/err" ||
	failed "no word of cuBLASLt on stderr: $(cat "$dir/err")"
exit $fail
