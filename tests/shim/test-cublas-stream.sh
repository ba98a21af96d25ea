#!/bin/sh
# test-cublas-stream.sh - the shim follows a cuBLAS handle's stream from
# the calls that create it and set its stream, rather than asking cuBLAS
# (cublasGetStream_v2) on every GEMM to follow CUDA graph capture: GEMMs
# on a stream being captured are still seen captured, their nodes tied to
# them; a handle it did not see created is asked once. On the CPU,
# through fake-cublas.c and fake-capture.c (the CUDA driver and CUPTI).
#
# usage: test-cublas-stream.sh DNNTRACE LIBDNNTRACE CUBLAS-STREAM-PROG FAKE-CAPTURE
set -u
dnntrace=$1 shim=$2 prog=$3 fake=$4
. "$(dirname "$0")/test-lib.sh"

DNNTRACE_CUPTI_PATH=$fake DNNTRACE_LIB=$shim "$dnntrace" record -q \
	-o "$tmp/t.dnnt" -- "$prog" "$fake" >"$tmp/out" 2>&1 ||
	{ bad "record failed"; cat "$tmp/out"; exit 1; }
cat >"$tmp/want" <<'OUT'
created: 0 calls failed, stream asked 0 times, 0 nodes
set to the captured stream: 0 calls failed, stream asked 0 times, 8 nodes
not seen created: 0 calls failed, stream asked 1 times, 16 nodes
set to another stream: 0 calls failed, stream asked 1 times, 16 nodes
OUT
cmp -s "$tmp/out" "$tmp/want" ||
	bad "the program's output: $(cat "$tmp/out"), want $(cat "$tmp/want")"

# each node the graph holds was made by one GEMM of the capture
"$dnntrace" dump "$tmp/t.dnnt" >"$tmp/dump"
grep '^API_CALL.*cublasGemmEx(' "$tmp/dump" |
	sed -n 's/^API_CALL .*seq=\([0-9]*\).*/\1/p' >"$tmp/gemms"
sed -n 's/^GRAPH_NODE .*call=\([0-9]*\).*/\1/p' "$tmp/dump" >"$tmp/nodes"
sed -n '2,17p' "$tmp/gemms" | cmp -s - "$tmp/nodes" ||
	bad "graph nodes' calls: $(echo $(cat "$tmp/nodes")), want GEMMs 2 to 17 of: $(echo $(cat "$tmp/gemms"))"
exit $fail
