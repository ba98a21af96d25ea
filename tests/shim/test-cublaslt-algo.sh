#!/bin/sh
# test-cublaslt-algo.sh - after a cublasLtMatmul given an algorithm, the
# shim asks cuBLASLt once per distinct algorithm what it is: nine
# cublasLtMatmulAlgoConfigGetAttribute calls, each with the attribute's
# own size, recorded as dnntrace's own and holding the algorithm's bytes
# and the value; none for an algorithm seen already, a matmul given none,
# or one that failed; none with DNNTRACE_PLAN_QUERY=0. A typed matmul
# (cublasLtTSTMatmul: not in the header, cublasLtMatmul's parameters) is
# recorded with its arguments and asked of alike. On the CPU, through
# a stand-in for cuBLASLt whose matmuls succeed (fake-cublaslt.c).
#
# usage: test-cublaslt-algo.sh DNNTRACE LIBDNNTRACE CUBLASLT-ALGO-PROG
set -u
dnntrace=$1 shim=$2 prog=$3
. "$(dirname "$0")/test-lib.sh"

record_prog
grep -q '^1 matmuls failed$' "$tmp/out" || bad "the program's output: $(cat "$tmp/out")"
"$dnntrace" dump "$tmp/t.dnnt" | grep '^API_CALL' | sed 's/^API_CALL seq=[0-9]* tid=[0-9]* t=[0-9.]* dur=[0-9]*ns //' >"$tmp/calls"

# the calls in order, the algorithms by their first byte
awk '
/^cublasLt(TST)?Matmul\(/ { match($0, /algo=<[0-9]+ bytes(: ..)?/); print "matmul " substr($0, RSTART + 6, RLENGTH - 6); next }
/^cublasLtMatmulAlgoConfigGetAttribute\(/ {
	match($0, /algo=<64 bytes: ../); a = substr($0, RSTART + 16, 2)
	match($0, /attr=[0-9]+/); n = substr($0, RSTART + 5, RLENGTH - 5)
	match($0, /buf=><[0-9]+ bytes: [0-9a-f]+>/); b = substr($0, RSTART + 5, RLENGTH - 5)
	match($0, / = [0-9]+ .*$/); s = substr($0, RSTART, RLENGTH)
	print "query " a " " n " " b s
}' "$tmp/calls" >"$tmp/seq"
# algorithm A's attribute N is N * 100 + A, in 4 bytes (2 for 7 and 8)
queries() {
	for n in 0 1 2 3 4 5 6 7 8; do
		v=$((n * 100 + $1))
		if [ $n -ge 7 ]; then
			printf 'query 0%d %d <2 bytes: %02x%02x> = 0 [dnntrace]\n' $1 $n $((v & 255)) $((v >> 8))
		else
			printf 'query 0%d %d <4 bytes: %02x%02x0000> = 0 [dnntrace]\n' $1 $n $((v & 255)) $((v >> 8))
		fi
	done
}
{
	echo "matmul 64 bytes: 01"
	queries 1
	echo "matmul 64 bytes: 01"
	echo "matmul 64 bytes: 02"
	queries 2
	echo "matmul 64 bytes: 01"
	echo "matmul 0 bytes"
	echo "matmul 64 bytes: 03"
	echo "matmul 64 bytes: 04"
	queries 4
} >"$tmp/want"
diff "$tmp/want" "$tmp/seq" >"$tmp/diff" || { bad "the matmuls and the queries after them (- expected, + recorded):"; cat "$tmp/diff"; }
grep -q 'cublasLtMatmul(.*alpha=2, .*beta=0, ' "$tmp/calls" || bad "host scalars not read: $(grep 'cublasLtMatmul(' "$tmp/calls" | head -1)"
grep -q '^cublasLtTSTMatmul(lightHandle=0x1, computeDesc=0xd0, alpha=1, A=0xa000, Adesc=0xa0, .*workspace=NULL, workspaceSizeInBytes=0, stream=NULL, scaleType=0) = 0$' "$tmp/calls" ||
	bad "the typed matmul's arguments: $(grep 'TSTMatmul(' "$tmp/calls")"

DNNTRACE_PLAN_QUERY=0 DNNTRACE_LIB=$shim "$dnntrace" record -q -o "$tmp/off.dnnt" -- "$prog" >/dev/null 2>&1 ||
	bad "record with DNNTRACE_PLAN_QUERY=0 failed"
n=$("$dnntrace" dump "$tmp/off.dnnt" | grep -c 'ConfigGetAttribute')
[ "$n" = 0 ] || bad "DNNTRACE_PLAN_QUERY=0: $n queries"
exit $fail
