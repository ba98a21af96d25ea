#!/bin/sh
# llama.cpp (no cuDNN call; cuBLAS's GEMMs in prompt processing) under
# dnntrace: every kernel owned by a library,
# ggml's by far the largest, its token generation seen as such; ggml's
# kernels known as ggml's by the fact that libggml-cuda.so registered them
# (KERNEL_LIB records), not by their names. Skips (77)
# without a GPU or without the llama.cpp workload: $DNNTRACE_LLAMA, else
# ../shared/workloads/llama beside the source tree, holding run-llama.sh
# (tests/gpu/README.md).
# usage: test-llama.sh DNNTRACE SOURCE_ROOT
set -u
dnntrace=$1 root=$2
for d in "${DNNTRACE_LLAMA:-}" "$root/../shared/workloads/llama"; do
	[ -n "$d" ] && [ -f "$d/run-llama.sh" ] && { llama=$d; break; }
done
[ -n "${llama:-}" ] || { echo "no llama.cpp workload: skipped"; exit 77; }
nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
for graphs in on off; do
	[ $graphs = off ] && export GGML_CUDA_DISABLE_GRAPHS=1
	LLAMA_ARGS="-p 32 -n 8 -ngl 99 -r 1 -fa 0,1" \
		bash "$llama/run-llama.sh" "$tmp/llama" "$dnntrace" record -q \
		-o "$tmp/$graphs.dnnt" -- >"$tmp/$graphs.log" 2>&1 ||
		{ echo "FAIL: graphs $graphs: llama-bench failed"; cat "$tmp/$graphs.log"; fail=1; continue; }
	"$dnntrace" report --format json "$tmp/$graphs.dnnt" >"$tmp/$graphs.json" ||
		{ echo "FAIL: graphs $graphs: no report"; fail=1; continue; }
	python3 - "$tmp/$graphs.json" $graphs <<'PY' || fail=1
import json, sys
r = json.load(open(sys.argv[1])); g = r["gpu"]; graphs = sys.argv[2]
total = g["total_ns"]
lib = {l["library"]: l["ns"] for l in g["libraries"]}
fam = {f["family"]: f["ns"] for f in g["families"]}
ph = {p["phase"]: p for p in g["phases"]}
def check(ok, what):
    print(("ok  " if ok else "FAIL") + " graphs %s: %s" % (graphs, what))
    return ok
wrapped = {w["library"]: w["calls"] for w in r["wrapped"]}
ok = check(wrapped.get("cudnn", 0) == 0, "no cuDNN call")
ok &= check(wrapped.get("cublas", 0) > 0, "%d cuBLAS calls" % wrapped.get("cublas", 0))
ok &= check(lib.get("other", 0) < 0.05 * total,
            "unattributed %.1f%% of GPU time, under 5%%" % (100 * lib.get("other", 0) / total))
ok &= check(lib.get("ggml", 0) > 0.5 * total,
            "ggml %.0f%% of GPU time, over half" % (100 * lib.get("ggml", 0) / total))
by = g["attributed_by"]
ok &= check(by["module"] >= 0.95 * lib.get("ggml", 0),
            "%.0f%% of GPU time known by the library that registered it "
            "(ggml's: %.0f%%)" % (100 * by["module"] / total, 100 * lib.get("ggml", 0) / total))
for f in ("matmul", "normalization", "rope", "softmax", "attention", "elementwise", "copy"):
    ok &= check(fam.get(f, 0) > 0, "family %s seen" % f)
tok = ph.get("token")
# -n 8 twice (-fa 0,1) and llama-bench's warm-up token
ok &= check(tok is not None and tok["ns"] > 0, "token generation seen")
if graphs == "on" and tok:
    ok &= check(tok["graph_launches"] >= 16, "%d graph launches in token generation" % tok["graph_launches"])
sys.exit(0 if ok else 1)
PY
	"$dnntrace" dump "$tmp/$graphs.dnnt" | grep "^KERNEL_LIB" | grep -q "libggml-cuda.so" &&
		echo "ok   graphs $graphs: KERNEL_LIB records name libggml-cuda.so" ||
		{ echo "FAIL: graphs $graphs: no KERNEL_LIB record of libggml-cuda.so"; fail=1; }
done
exit $fail
