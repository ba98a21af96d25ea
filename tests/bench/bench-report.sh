#!/bin/sh
# How fast `dnntrace report` reads: a synthetic trace of a training job
# (tests/tools/synth-trace.c: legacy and backend calls, kernels, copies)
# of about 9.6 million records, reported 5 times; the best run counts.
# Twice: with the fusion section (the default) and without (--no-fusion),
# which reads ops without their device pointers.
# usage: bench-report.sh DNNTRACE SYNTH_TRACE API_LISTING [STEPS]
set -eu
dnntrace=$1 synth=$2 listing=$3 steps=${4:-400000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$synth" "$listing" "$tmp" --ranks 1 --steps "$steps"
t="$tmp/rank0.dnnt"
records=$("$dnntrace" info "$t" | sed -n 's/^records: *\([0-9]*\) .*/\1/p')
size=$(wc -c <"$t")
cpu=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo 2>/dev/null | head -1)
echo "dnntrace report on a synthetic trace: $records records, $size bytes"
echo "  on $(nproc) CPUs${cpu:+ ($cpu)}"
for opt in "" --no-fusion; do
	best=
	for i in 1 2 3 4 5; do
		s=$(date +%s.%N)
		"$dnntrace" report $opt "$t" >/dev/null
		e=$(date +%s.%N)
		best=$(echo "$s $e ${best:-1e9}" | awk '{ d = $2 - $1; print d < $3 ? d : $3 }')
	done
	rss=$( (command -v /usr/bin/time >/dev/null && /usr/bin/time -f %M "$dnntrace" report $opt "$t" 2>&1 >/dev/null) || echo "?")
	echo "${opt:-with fusion} $records $best $rss" | awk '{ printf "  %-12s best of 5: %.2f s, %.1f M records/s (budget: 10 M records/s); peak memory %s KB\n", $1 == "with" ? "with fusion" : $1, $(NF-1), $(NF-2) / $(NF-1) / 1e6, $NF }'
done
