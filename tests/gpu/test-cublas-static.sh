#!/bin/sh
# test-cublas-static.sh - a program with cuBLAS linked into it
# (libcublas_static.a, libcublasLt_static.a, the static CUDA runtime): no
# call of it reaches the shim, yet its kernels are recorded, and info and
# report each say in one sentence that the program links cuBLAS statically.
# Skips (77) without a GPU.
# usage: test-cublas-static.sh DNNTRACE GPU_CUBLAS_STATIC
set -u
dnntrace=$1 prog=$2
. "$(dirname "$0")/gpu-test-lib.sh"
bad() { echo "FAIL: $*"; fail=1; }

"$dnntrace" record -q -o "$tmp/t.dnnt" -- "$prog" >"$tmp/out" 2>&1 ||
	{ bad "record failed"; cat "$tmp/out"; exit 1; }
grep -q '^10 SGEMMs done$' "$tmp/out" || bad "the program's output: $(cat "$tmp/out")"
"$dnntrace" dump "$tmp/t.dnnt" >"$tmp/dump" 2>&1 || bad "dump failed"
calls=$(grep -c '^API_CALL.* cublas' "$tmp/dump")
kernels=$(grep -c '^KERNEL ' "$tmp/dump")
echo "$calls cuBLAS calls, $kernels kernels recorded"
[ "$calls" = 0 ] || bad "$calls cuBLAS calls recorded: none reaches the shim"
[ "$kernels" -ge 10 ] || bad "$kernels kernels, expected the 10 SGEMMs' at least"
for cmd in info report; do
	"$dnntrace" $cmd "$tmp/t.dnnt" >"$tmp/$cmd" 2>&1 || bad "$cmd failed"
	grep 'statically' "$tmp/$cmd"
	n=$(grep -c 'links cuBLAS statically' "$tmp/$cmd")
	[ "$n" = 1 ] || bad "$cmd: $n lines say cuBLAS is linked statically, expected 1"
	# "(N of GPU time, K kernels)": the SGEMMs' kernels among them
	k=$(sed -n 's/.*of GPU time, \([0-9]*\) kernels\{0,1\}).*links cuBLAS statically.*/\1/p' "$tmp/$cmd")
	[ "${k:-0}" -ge 10 ] || bad "$cmd: the sentence counts ${k:-no} kernels, expected 10 or more"
done
exit $fail
