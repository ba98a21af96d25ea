#!/bin/sh
# test-cublaslt-scale.sh - cublasLtMatmul's alpha and beta are read at the
# size of their descriptor's scale type, which the shim follows from the
# calls that create (or initialize in the program's memory) and set the
# descriptor, never asking cuBLASLt, and `dnntrace dump` prints them in that type: a half,
# a double, a float without the bytes after it, a complex float; and
# cublasLtMatrixTransform's, of its own descriptor's. On the CPU, through
# fake-cublaslt.c.
#
# usage: test-cublaslt-scale.sh DNNTRACE LIBDNNTRACE CUBLASLT-SCALE-PROG
set -u
dnntrace=$1 shim=$2 prog=$3
. "$(dirname "$0")/test-lib.sh"

record_prog
has "$tmp/out" '^0 calls failed, scale type asked 0 times$' "the program's output"

"$dnntrace" dump "$tmp/t.dnnt" | grep -E '^API_CALL.*cublasLt(Matmul|MatrixTransform)\(' |
	sed 's/.*alpha=\([^,]*\), .*beta=\([^,]*\), .*scaleType=\([^)]*\)).*/\1 \2 \3/' >"$tmp/scalars"
printf '%s\n' '2 0.5 2' '2 0.5 1' '2 0 0' '2 0.5 1' '2+1i 0.5 4' '2 0.5 2' \
	'2 0.5 1' '2 0.5 2' >"$tmp/want"
cmp -s "$tmp/scalars" "$tmp/want" ||
	bad "alpha, beta and scale type of the matmuls and transforms: $(cat "$tmp/scalars"), want $(cat "$tmp/want")"
exit $fail
