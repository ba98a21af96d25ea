#!/bin/sh
# How fast `dnntrace report` reads: a synthetic trace of a training job
# (tests/tools/synth-trace.c: legacy and backend calls, kernels, copies)
# of about 9.6 million records, reported 5 times; the best run counts.
# Twice: with the fusion section (the default) and without (--no-fusion),
# which reads ops without their device pointers.
# Given other builds (BASELINE: the same command before a change, and
# more to set beside it), all run in turn, $RUNS times each (7 unless
# set), and each one's median and range of wall and CPU time are printed:
# on a shared machine, runs minutes apart differ more than two builds do.
# usage: bench-report.sh DNNTRACE SYNTH_TRACE API_LISTING [STEPS [BASELINE
#        [OTHER...]]]
set -eu
dnntrace=$1 synth=$2 listing=$3 steps=${4:-400000} baseline=${5:-}
shift $(($# < 5 ? $# : 5))
others="$*"
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
# One run's wall and CPU (user + system) seconds, appended to $1: the
# CPU time from getrusage, to the microsecond (time(1) prints 10 ms, as
# much as two builds differ by).
timed() {
	out=$1
	shift
	python3 - "$@" >>"$out" <<'PY'
import resource, subprocess, sys, time
t = time.monotonic()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=False)
wall = time.monotonic() - t
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.4f %.4f" % (wall, r.ru_utime + r.ru_stime))
PY
}
# Median and range of a column of $1.
spread() {
	sort -n -k"$2" "$1" | awk -v k="$2" '{ v[NR] = $k }
		END { printf "median %.4f s (%.4f to %.4f)", v[int((NR + 1) / 2)], v[1], v[NR] }'
}
runs=${RUNS:-7}
echo "interleaved with $baseline${others:+ and $others}, $runs runs each (wall, then CPU of all threads):"
for opt in "" --no-fusion; do
	n=0
	for b in "$baseline" $others "$dnntrace"; do
		: >"$tmp/run$n"
		n=$((n + 1))
	done
	for i in $(seq "$runs"); do
		n=0
		for b in "$baseline" $others "$dnntrace"; do
			timed "$tmp/run$n" "$b" report $opt "$t"
			n=$((n + 1))
		done
	done
	n=0
	for b in "$baseline" $others "$dnntrace"; do
		printf '  %-12s %s: wall %s, CPU %s\n' "${opt:-with fusion}" \
			"$([ "$b" = "$baseline" ] && echo baseline ||
				{ [ "$b" = "$dnntrace" ] && echo this build || echo "$b"; })" \
			"$(spread "$tmp/run$n" 1)" "$(spread "$tmp/run$n" 2)"
		n=$((n + 1))
	done
done
