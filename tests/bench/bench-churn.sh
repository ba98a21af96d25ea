#!/bin/sh
# How fast the analyzer reads a trace where descriptors are created and
# destroyed all the time (tests/tools/synth-trace --scenario churn: 64
# threads, each building, finalizing and destroying backend graphs and
# legacy descriptors around its calls), against the floor of decompressing
# it (`zstd -dc`, when zstd is installed). `report` and `dump` best of 3.
# usage: bench-churn.sh DNNTRACE SYNTH_TRACE API_LISTING [STEPS]
set -eu
dnntrace=$1 synth=$2 listing=$3 steps=${4:-18182}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$synth" "$listing" "$tmp" --scenario churn --threads 64 --steps "$steps" >/dev/null
t=$(ls "$tmp"/*.dnnt | head -1)
records=$("$dnntrace" info "$t" | sed -n 's/^records: *\([0-9]*\) .*/\1/p')
cpu=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo 2>/dev/null | head -1)
echo "a trace of churning descriptors: $records records, $(wc -c <"$t") bytes"
echo "  on $(nproc) CPUs${cpu:+ ($cpu)}"

best_of_3() {
	best=
	for i in 1 2 3; do
		s=$(date +%s.%N)
		"$@" >/dev/null
		e=$(date +%s.%N)
		best=$(echo "$s $e ${best:-1e9}" | awk '{ d = $2 - $1; print d < $3 ? d : $3 }')
	done
	echo "$best"
}

if command -v zstd >/dev/null; then
	d=$(best_of_3 zstd -qdc "$t")
	echo "$records $d" | awk '{ printf "  %-8s best of 3: %.2f s, %.1f M records/s (the floor)\n", "zstd -dc", $2, $1 / $2 / 1e6 }'
fi
for cmd in report dump; do
	d=$(best_of_3 "$dnntrace" $cmd "$t")
	echo "$cmd $records $d" | awk '{ printf "  %-8s best of 3: %.2f s, %.1f M records/s\n", $1, $3, $2 / $3 / 1e6 }'
done
