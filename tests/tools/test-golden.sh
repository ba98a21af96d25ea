#!/bin/sh
# The reading commands on fixed traces, compared with their expected output
# (tests/tools/golden/). tests/data/h200-sample.dnnt was recorded from the
# bundled sample program on an H200: legacy convolution, algorithm search,
# activation, pooling, softmax and a backend graph, with its kernels. The
# synthetic traces (synth-trace.c: two ranks of a small training job, with
# fixed times) cover what the sample does not: autotuning, plans built
# again, layout conversions, failed calls, several ranks.
# usage: test-golden.sh DNNTRACE SOURCE_ROOT SYNTH_TRACE [--update]
set -u
abs() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
dnntrace=$(abs "$1") root=$2 synth=$(abs "$3") update=${4:-}
cd "$root" || exit 2
tmp=$(mktemp)
synth_dir=$(mktemp -d)
trap 'rm -rf "$tmp" "$synth_dir"' EXIT
"$synth" shim/cudnn-api.txt "$synth_dir" --ranks 2 --steps 4 || exit 1
fail=0
check() { # check NAME ARGS...: `dnntrace ARGS` must print golden/NAME
	name=$1
	shift
	# the synthetic traces' folder differs from run to run
	"$dnntrace" "$@" 2>&1 | sed "s|$synth_dir|SYNTH|g" >"$tmp"
	if [ "$update" = --update ]; then
		cp "$tmp" "tests/tools/golden/$name"
	elif ! diff -u "tests/tools/golden/$name" "$tmp"; then
		echo "FAIL: dnntrace $* differs from tests/tools/golden/$name"
		fail=1
	fi
}
t=tests/data/h200-sample.dnnt
check sample.info info --calls -1 "$t"
check sample.dump dump "$t"
check sample.ops ops "$t"
check sample.ops.json ops --format json "$t"
check sample.plans ops --plans "$t"
check sample.call120 ops --call 120 "$t"
check sample.call22 ops --call 22 "$t"
check sample.report report "$t"
check sample.report.md report --format markdown "$t"
check sample.report.json report --format json "$t"
s=$synth_dir
check synth.ops ops "$s/rank0.dnnt"
check synth.plans ops --plans "$s/rank0.dnnt"
check synth.report report "$s/rank0.dnnt"
check synth.report.md report --format markdown "$s/rank0.dnnt"
check synth.report.json report --format json "$s/rank0.dnnt"
check synth.ranks report --top 5 "$s"
check synth.ranks.json report --format json "$s"
check synth.ranks.sorted report --top 3 --sort roof --wide "$s"
check synth.peaks report --top 3 --peak-bandwidth 2T --peak-flops bf16=500T,fp32=50T "$s/rank1.dnnt"
[ $fail = 0 ] && echo "golden outputs match"
exit $fail
