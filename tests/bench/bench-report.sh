#!/bin/sh
# How fast `dnntrace report` reads: a synthetic trace of a training job
# (tests/tools/synth-trace.c: legacy and backend calls, kernels, copies)
# of about 9.6 million records, reported 5 times; the best run counts.
# Twice: with the fusion section (the default) and without (--no-fusion),
# which reads ops without their device pointers.
# Given a second build (BASELINE: the same command before a change), the
# two also run in turn, 7 times each, and each one's median and range of
# wall and CPU time are printed: on a shared machine, runs minutes apart
# differ more than two builds do.
# usage: bench-report.sh DNNTRACE SYNTH_TRACE API_LISTING [STEPS [BASELINE]]
set -eu
dnntrace=$1 synth=$2 listing=$3 steps=${4:-400000} baseline=${5:-}
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

[ -n "$baseline" ] || exit 0
# One run's wall and CPU (user + system) seconds, appended to $1.
timed() {
	out=$1
	shift
	s=$(date +%s.%N)
	cpu=$( (/usr/bin/time -f '%U %S' "$@" >/dev/null) 2>&1 | tail -1)
	e=$(date +%s.%N)
	echo "$s $e $cpu" | awk '{ printf "%.3f %.3f\n", $2 - $1, $3 + $4 }' >>"$out"
}
# Median and range of a column of $1.
spread() {
	sort -n -k"$2" "$1" | awk -v k="$2" '{ v[NR] = $k }
		END { printf "median %.3f s (%.3f to %.3f)", v[int((NR + 1) / 2)], v[1], v[NR] }'
}
echo "interleaved with $baseline, 7 runs each (wall, then CPU of all threads):"
for opt in "" --no-fusion; do
	: >"$tmp/new"
	: >"$tmp/old"
	for i in 1 2 3 4 5 6 7; do
		timed "$tmp/old" "$baseline" report $opt "$t"
		timed "$tmp/new" "$dnntrace" report $opt "$t"
	done
	for b in old new; do
		printf '  %-12s %s: wall %s, CPU %s\n' "${opt:-with fusion}" \
			"$([ $b = old ] && echo baseline || echo this build)" \
			"$(spread "$tmp/$b" 1)" "$(spread "$tmp/$b" 2)"
	done
done
