#!/bin/sh
# Recording overhead per NVTX range (a push and its pop): bench-nvtx with no
# NVTX tool (NVTX's calls return at once), and with the shim as the tool,
# recording; one name every time, and 64 names in turn. Each configuration
# runs 5 times; the best median is kept.
# usage: bench-nvtx.sh BENCH_NVTX LIBDNNTRACE
set -eu
bench=$1 shim=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset NVTX_INJECTION64_PATH

best() { # best median (and its p90) of 5 runs of: env... bench ARGS
	for i in 1 2 3 4 5; do env "$@"; done | sort -n | head -1
}
rec="LD_PRELOAD=$shim NVTX_INJECTION64_PATH=$shim DNNTRACE_OUTPUT=$tmp/b-%p.dnnt DNNTRACE_BUFFER_SIZE=64M"
echo "nvtxRangePushA + nvtxRangePop, ns per range (median / p90 of 1000-range batches):"
for names in same cycle; do
	set -- $(best DNNTRACE_X=1 "$bench" $names); p=$1 pp=$2
	set -- $(best $rec "$bench" $names); r=$1 rp=$2
	printf '  %-5s names, %-28s %7s / %s\n' "$names" "no tool" "$p" "$pp" \
		"$names" "shim recording" "$r" "$rp"
	awk -v r="$r" -v p="$p" 'BEGIN { printf "  recording adds %.1f ns per range: %.1f ns per record (two a range)\n", r - p, (r - p) / 2 }'
done
