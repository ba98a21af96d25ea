#!/bin/sh
# test-cublas-mode.sh - the shim follows a cuBLAS handle's pointer mode
# from the calls that create and set it, rather than asking cuBLAS on
# every call: host scalars are read in the host mode, device ones never
# (reading one would kill the program); and a `const void *` scalar is read
# with the size the call's types give it (4 bytes: a float beta of 0 is 0,
# not the double the next float would make of it). On the CPU, through
# fake-cublas.c.
#
# usage: test-cublas-mode.sh DNNTRACE LIBDNNTRACE CUBLAS-MODE-PROG
set -u
dnntrace=$1 shim=$2 prog=$3
. "$(dirname "$0")/test-lib.sh"

record_prog
has "$tmp/out" '^0 calls failed, mode asked 0 times$' "the program's output"

"$dnntrace" dump "$tmp/t.dnnt" | grep '^API_CALL.*cublasGemmEx(' |
	sed 's/.*alpha=\([^,]*\), .*beta=\([^,]*\), .*/\1 \2/' >"$tmp/scalars"
printf '%s\n' '2 0' '0x10 (mode 1) 0x10 (mode 1)' '2 0' '0.25 0.5' >"$tmp/want"
cmp -s "$tmp/scalars" "$tmp/want" ||
	bad "alpha and beta of the GEMMs: $(cat "$tmp/scalars"), want $(cat "$tmp/want")"
exit $fail
