#!/bin/sh
# Recording overhead per call: bench-shim (cuDNN calls: one that launches
# nothing, cudnn, and one that can, cudnn-exec) and, where built,
# bench-shim-gemm (cuBLASLt's cublasLtMatmul and cuBLAS's cublasGemmEx)
# without the shim, with the shim only forwarding (DNNTRACE_DISABLE=1, the
# no-op baseline), and recording; with BENCH_SHIM_BASE (another build's
# libdnntrace.so), recording with that one too, for a before and after.
# Five rounds, each running every call in every configuration in turn
# (interleaved, so that a busy minute weighs on all alike); per call and
# configuration, the median and the best of the five runs' medians.
# BENCH_SHIM_CALLS names the calls (default: cudnn cudnn-exec ltmatmul
# gemmex; also ltmatmul-init, its descriptor initialized in the program's
# memory; on a GPU, ltmatmul-gpu, gemmex-gpu and ltmatmul-init-gpu too:
# real handles).
#
# A batch of 1000 calls is timed after a pause of BENCH_PAUSE_US (default
# 1000 us, the thread busy) in which the writer thread drains the 4 MiB
# ring: the cost measured is a call's when the writer keeps up, as it does
# for a program that makes fewer than a million calls a second.
# BENCH_PAUSE_US=0 measures back-to-back calls, where the ring overflows
# (up to half the records lost, and the lost ones cost less): the
# figures swing with how many (BENCHMARKS.md's earlier ones were so).
# BENCH_SHIM_BATCHES: batches per run (1000).
# usage: bench-shim.sh BENCH_SHIM LIBDNNTRACE [BENCH_SHIM_GEMM]
set -eu
bench=$1 shim=$2 gemm=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

calls=cudnn
[ -n "$gemm" ] && calls=${BENCH_SHIM_CALLS:-cudnn cudnn-exec ltmatmul gemmex}
base=${BENCH_SHIM_BASE:-}
batches=${BENCH_SHIM_BATCHES:-1000}
export BENCH_PAUSE_US=${BENCH_PAUSE_US:-1000}
run() { # CALL ENV...: one run's "MEDIAN P90"
	call=$1
	shift
	case $call in
	cudnn) env "$@" "$bench" "$batches" ;;
	cudnn-exec) env "$@" "$bench" execute "$batches" ;;
	*) env "$@" "$gemm" "$call" "$batches" ;;
	esac
}
record() { # CALL SHIM
	run "$1" LD_PRELOAD="$2" DNNTRACE_OUTPUT="$tmp/b-%p.dnnt" DNNTRACE_BUFFER_SIZE=4M
	rm -f "$tmp"/b-*.dnnt
}
for round in 1 2 3 4 5; do
	for call in $calls; do
		echo "$call plain $(run "$call" DNNTRACE_X=1)"
		echo "$call noop $(run "$call" LD_PRELOAD="$shim" DNNTRACE_DISABLE=1)"
		echo "$call rec $(record "$call" "$shim")"
		[ -z "$base" ] || echo "$call base $(record "$call" "$base")"
	done
done >"$tmp/runs"

echo "ns per call: median (best) of 5 interleaved runs' medians of 1000-call batches" \
	"(${BENCH_PAUSE_US} us between batches)"
for call in $calls; do
	case $call in
	cudnn) what="cudnnBackendSetAttribute(tensor, UNIQUE_ID, INT64, 1)" ;;
	cudnn-exec) what="cudnnBackendExecute(handle, no plan: rejected)" ;;
	ltmatmul) what="cublasLtMatmul(no handle: rejected; host scalars, algo)" ;;
	gemmex) what="cublasGemmEx(no handle: rejected; host scalars)" ;;
	ltmatmul-gpu) what="cublasLtMatmul(real handle, empty matrices; host scalars, algo)" ;;
	ltmatmul-init) what="cublasLtMatmul(no handle: rejected; descriptor initialized in place)" ;;
	ltmatmul-init-gpu) what="cublasLtMatmul(real handle, empty; descriptor initialized in place)" ;;
	gemmex-gpu) what="cublasGemmEx(real handle, empty matrices; host scalars)" ;;
	esac
	echo "$what:"
	awk -v call="$call" '
	$1 == call { v[$2, ++n[$2]] = $3 }
	function med(c,   i, j, t, a) {
		for (i = 1; i <= n[c]; i++) a[i] = v[c, i]
		for (i = 1; i <= n[c]; i++) for (j = i + 1; j <= n[c]; j++)
			if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		best[c] = a[1]
		return a[int((n[c] + 1) / 2)]
	}
	END {
		p = med("plain"); o = med("noop"); r = med("rec")
		printf "  %-34s %7.1f (%.1f)\n", "no shim", p, best["plain"]
		printf "  %-34s %7.1f (%.1f)\n", "shim, recording off (no-op)", o, best["noop"]
		printf "  %-34s %7.1f (%.1f)\n", "shim, recording", r, best["rec"]
		printf "  recording adds %.1f ns over the no-op shim, %.1f ns over no shim\n", r - o, r - p
		if (n["base"]) {
			b = med("base")
			printf "  %-34s %7.1f (%.1f)\n", "BENCH_SHIM_BASE, recording", b, best["base"]
			printf "  which adds %.1f ns over the no-op shim\n", b - o
		}
	}' "$tmp/runs"
done
