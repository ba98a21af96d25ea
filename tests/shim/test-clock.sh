#!/bin/sh
# The times the shim records (from the CPU's counter) against the
# program's own CLOCK_MONOTONIC readings around each call (shim-clock.c):
# every call's recorded begin and end, relative to the second call's, lie
# within the program's readings, relative to the same, give or take 1 us,
# across the shim's calibration and rebases. Then the same with
# DNNTRACE_NO_TSC=1 (clock_gettime), which must agree exactly.
# usage: test-clock.sh DNNTRACE SHIM_CLOCK CUDNN_LIBDIR
set -u
dnntrace=$1 prog=$2 libdir=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
for mode in tsc no-tsc; do
	env=
	[ $mode = no-tsc ] && env=DNNTRACE_NO_TSC=1
	env $env LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
		"$dnntrace" record -q -o "$tmp/$mode.dnnt" -- \
		"$prog" >"$tmp/$mode.brackets" || { echo "FAIL: $mode: the program failed"; fail=1; continue; }
	"$dnntrace" dump "$tmp/$mode.dnnt" | grep "cudnnCreateTensorDescriptor(" >"$tmp/$mode.calls"
	python3 - "$tmp/$mode.brackets" "$tmp/$mode.calls" $mode <<'PY' || fail=1
import re, sys
br = [tuple(map(int, l.split())) for l in open(sys.argv[1])]
calls = []
for l in open(sys.argv[2]):
    m = re.search(r" t=(\d+)\.(\d{9}) dur=(\d+)ns", l)
    calls.append((int(m.group(1)) * 10**9 + int(m.group(2)), int(m.group(3))))
mode = sys.argv[3]
if len(calls) != len(br) or not calls:
    print("FAIL %s: %d calls recorded, %d made" % (mode, len(calls), len(br)))
    sys.exit(1)
tol = 1000 if mode == "tsc" else 0
# relative to the second call (the first one loads cuDNN and starts the
# shim: its bracket is milliseconds wide)
t0, a0, b0 = calls[1][0], br[1][0], br[1][1]
worst = 0
for (t, d), (a, b) in list(zip(calls, br))[1:]:
    lo, hi = (a - b0) - tol, (b - a0) + tol
    for v in (t - t0, t + d - t0):
        if v < lo:
            worst = max(worst, lo - v)
        elif v > hi:
            worst = max(worst, v - hi)
    if d < 0 or d > (b - a) + 2 * tol:
        worst = max(worst, d - (b - a))
span = (br[-1][1] - br[0][0]) / 1e6
ok = worst == 0
print("%s %s: %d calls over %.0f ms, recorded times within the program's "
      "readings (+-%d ns)%s" % ("ok  " if ok else "FAIL", mode, len(calls), span, tol,
                               "" if ok else ", off by up to %d ns" % worst))
sys.exit(0 if ok else 1)
PY
done
exit $fail
