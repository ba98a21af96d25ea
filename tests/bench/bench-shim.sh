#!/bin/sh
# Recording overhead per call: bench-shim without the shim, with the shim
# only forwarding (DNNTRACE_DISABLE=1, the no-op baseline), and recording.
# Each configuration runs 5 times; the best median is kept.
# usage: bench-shim.sh BENCH_SHIM LIBDNNTRACE
set -eu
bench=$1 shim=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

best() { # best median (and its p90) of 5 runs of: env... bench
	for i in 1 2 3 4 5; do env "$@" "$bench"; done | sort -n | head -1
}
plain=$(best DNNTRACE_X=1)
noop=$(best LD_PRELOAD="$shim" DNNTRACE_DISABLE=1)
rec=$(best LD_PRELOAD="$shim" DNNTRACE_OUTPUT="$tmp/b-%p.dnnt" DNNTRACE_BUFFER_SIZE=64M)
set -- $plain; p=$1 pp=$2
set -- $noop; n=$1 np=$2
set -- $rec; r=$1 rp=$2
echo "cudnnBackendSetAttribute(tensor, UNIQUE_ID, INT64, 1), ns per call (median / p90 of 1000-call batches):"
printf '  %-34s %7s / %s\n' "no shim" "$p" "$pp" \
	"shim, recording off (no-op)" "$n" "$np" \
	"shim, recording" "$r" "$rp"
awk -v n="$n" -v r="$r" -v p="$p" 'BEGIN { printf "  recording adds %.1f ns over the no-op shim, %.1f ns over no shim\n", r - n, r - p }'
