#!/bin/sh
# test-cublaslt-mode.sh - the shim follows a cuBLASLt descriptor's pointer
# mode from the calls that create (or initialize in the program's
# memory), set and destroy it, rather than asking cuBLASLt on every
# matmul: host scalars are read in the host mode, device ones never
# (reading one would kill the program); after a setter that fails, the
# descriptor is asked of cuBLASLt. On the CPU, through fake-cublaslt.c.
#
# usage: test-cublaslt-mode.sh DNNTRACE LIBDNNTRACE CUBLASLT-MODE-PROG
set -u
dnntrace=$1 shim=$2 prog=$3
. "$(dirname "$0")/test-lib.sh"

# asked for the two matmuls after the refused setter (the descriptor is
# not followed again: its mode was not known when it was next set); never
# for the program's own descriptor, followed from its initialization
want='^0 calls failed, mode asked 2 times$'
record_prog
has "$tmp/out" "$want" "recording: the program's output"
# not recording: the calls are passed on as they are, nothing is asked
LD_PRELOAD=$shim DNNTRACE_DISABLE=1 "$prog" >"$tmp/off" 2>&1 || bad "not recording: failed"
has "$tmp/off" '^0 calls failed, mode asked 0 times$' "not recording: the program's output"

"$dnntrace" dump "$tmp/t.dnnt" | grep '^API_CALL.*cublasLtMatmul(' |
	sed 's/.*alpha=\([^,]*\), .*beta=\([^,]*\), .*/\1 \2/' >"$tmp/scalars"
dev='0x10 (mode 1) 0x10 (mode 1)'
printf '%s\n' '2 0.5' "$dev" '2 0.5' '2 0.5' "$dev" '2 0.5' \
	'2 0.5' "$dev" "$dev" '2 0.5' >"$tmp/want"
cmp -s "$tmp/scalars" "$tmp/want" ||
	bad "alpha and beta of the matmuls: $(cat "$tmp/scalars"), want $(cat "$tmp/want")"
exit $fail
