#!/bin/sh
# A CUDA program that makes no cuDNN call still gets a trace: its kernels,
# and its cuBLAS calls (no cuDNN one), each SGEMM's kernels tied to its
# call; also when it dies of SIGTERM. Skips (77) without a GPU.
# usage: test-no-cudnn.sh DNNTRACE GPU_CUBLAS
set -u
dnntrace=$1 prog=$2
. "$(dirname "$0")/gpu-test-lib.sh"
for mode in normal sigterm; do
	"$dnntrace" record -q -o "$tmp/$mode-%p.dnnt" -- "$prog" $mode >/dev/null 2>&1
	f=$(ls "$tmp"/$mode-*.dnnt 2>/dev/null | head -1)
	[ -f "$f" ] || { echo "FAIL: $mode: no trace"; fail=1; continue; }
	"$dnntrace" info "$f" >"$tmp/info"
	"$dnntrace" dump "$f" >"$tmp/dump"
	calls=$(grep -c '^API_CALL.* cudnn' "$tmp/dump")
	sgemms=$(grep -c '^API_CALL.* cublasSgemm_v2(' "$tmp/dump")
	kernels=$(grep -c '^KERNEL' "$tmp/dump")
	echo "$mode: $calls cuDNN calls, $sgemms SGEMM calls, $kernels kernels; $(grep '^ended' "$tmp/info")"
	[ "$calls" = 0 ] || { echo "FAIL: $mode: $calls cuDNN calls recorded"; fail=1; }
	[ "$sgemms" = 10 ] || { echo "FAIL: $mode: $sgemms cublasSgemm_v2 calls, expected 10"; fail=1; }
	[ "$kernels" -ge 10 ] || { echo "FAIL: $mode: $kernels kernels, expected at least 10 SGEMMs"; fail=1; }
	tied=$(grep -c '^KERNEL.* call=[1-9]' "$tmp/dump")
	[ "$tied" -ge 10 ] || { echo "FAIL: $mode: $tied kernels tied to a call, expected the 10 SGEMMs'"; fail=1; }
	grep -q '^ended: *clean' "$tmp/info" || { echo "FAIL: $mode: not a clean end"; fail=1; }
done
exit $fail
