#!/bin/sh
# The reading commands on fixed traces, compared with their expected output
# (tests/tools/golden/). tests/data/h200-sample.dnnt was recorded from the
# bundled sample program on an H200: legacy convolution, algorithm search,
# activation, pooling, softmax and a backend graph, with its kernels.
# usage: test-golden.sh DNNTRACE SOURCE_ROOT [--update]
set -u
dnntrace=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") root=$2 update=${3:-}
cd "$root" || exit 2
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
fail=0
check() { # check NAME ARGS...: `dnntrace ARGS` must print golden/NAME
	name=$1
	shift
	"$dnntrace" "$@" >"$tmp" 2>&1
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
[ $fail = 0 ] && echo "golden outputs match"
exit $fail
