#!/bin/sh
# test-cublas-nested.sh - a cuBLASLt call made from inside a cuBLAS call
# (cuBLAS's typed matmuls) is given cuBLAS's own descriptor, made and set
# where no wrapper sees it, perhaps where the program once initialized
# one: the shim asks its pointer mode, whatever it learned for that
# address, and never reads device-mode scalars (reading one would kill
# the program). On the CPU, through fake-cublas.c and fake-cublaslt.c.
#
# usage: test-cublas-nested.sh DNNTRACE LIBDNNTRACE CUBLAS-NESTED-PROG
set -u
dnntrace=$1 shim=$2 prog=$3
. "$(dirname "$0")/test-lib.sh"

record_prog
has "$tmp/out" '^0 calls failed, mode asked 2 times$' "the program's output"
"$dnntrace" dump "$tmp/t.dnnt" | grep '^API_CALL.*cublasLtTSTMatmul(' |
	sed 's/.*alpha=\([^,]*\), .*beta=\([^,]*\), .*/\1 \2/' >"$tmp/scalars"
printf '%s\n' '2 0.5' '0x10 (mode 1) 0x10 (mode 1)' >"$tmp/want"
cmp -s "$tmp/scalars" "$tmp/want" ||
	bad "alpha and beta of the nested matmuls: $(cat "$tmp/scalars"), want $(cat "$tmp/want")"
exit $fail
