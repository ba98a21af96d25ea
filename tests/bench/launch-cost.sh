#!/usr/bin/env bash
# launch-cost.sh LAUNCH_COST [ROUNDS [LAUNCHES]]: what CUPTI adds to a kernel
# launch, by the way launches are tied to calls (launch-cost.c): every
# mode, with the launches inside a call and outside one, interleaved for
# ROUNDS rounds (default 7); prints each run, then per mode the median
# host time per launch and the range. Needs a GPU (exit 77 without).
set -u
bin=$1 rounds=${2:-7} n=${3:-200000}
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 || {
	echo "no GPU: skipped" >&2; exit 77; }
runs=$(mktemp) && trap 'rm -f "$runs"' EXIT
for r in $(seq "$rounds"); do
	for m in none kernel records callback; do
		for inside in 1 0; do
			"$bin" "$m" "$n" "$inside" | tee -a "$runs"
		done
	done
done
python3 - "$runs" <<'PY'
import collections, re, statistics, sys
ns = collections.defaultdict(list)
for line in open(sys.argv[1]):
    m = re.match(r"(\w+) inside=(\d) .* host_ns_per_launch=([\d.]+)", line)
    if m:
        ns[(m[1], m[2])].append(float(m[3]))
print("ns per launch, median (min..max):")
for (mode, inside), v in ns.items():
    print("  %-9s %-14s %7.0f (%.0f..%.0f)" % (mode, "inside a call" if inside == "1" else "outside",
          statistics.median(v), min(v), max(v)))
PY
