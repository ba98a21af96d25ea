#!/usr/bin/env bash
# overhead.sh BUILD_DIR WORKLOAD [REPEATS]: ms/iter of a workload plain, with the shim only
# forwarding (DNNTRACE_DISABLE=1), recording calls without CUPTI (DNNTRACE_CUPTI=0), and
# recording calls and GPU activity (the default), REPEATS runs each (best kept).
set -u
build=$1 wl=$2 reps=${3:-2}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
best() {
	local b=
	for _ in $(seq "$reps"); do
		v=$("$@" 2>/dev/null | sed -n 's/^RESULT .* ms_per_iter=\([0-9.]*\).*/\1/p')
		[ -n "$v" ] && { [ -z "$b" ] || awk "BEGIN{exit !($v < $b)}"; } && b=$v
	done
	echo "${b:--}"
}
cmd=(python3 "$here/wl_$wl.py")
rec=("$build/tools/dnntrace" record -q -o "$tmp/%p.dnnt" --)
plain=$(best "${cmd[@]}")
noop=$(DNNTRACE_DISABLE=1 best "${rec[@]}" "${cmd[@]}")
calls=$(DNNTRACE_CUPTI=0 best "${rec[@]}" "${cmd[@]}")
full=$(best "${rec[@]}" "${cmd[@]}")
printf '%-10s plain %8s  shim-noop %8s  calls %8s  calls+gpu %8s  ms/iter\n' "$wl" "$plain" "$noop" "$calls" "$full"
