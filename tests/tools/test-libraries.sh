#!/bin/sh
# test-libraries.sh - the reading commands on a trace of two wrapped
# libraries (synth-trace's `libraries` scenario: cuDNN and dtt, dtt
# calling cuDNN inside one of its calls): each library's line in info,
# the other library's calls shown with their arguments and status, the
# nested call shown and marked, and counted apart from the program's.
#
# usage: test-libraries.sh DNNTRACE SYNTH-TRACE API-LISTING
set -u
dnntrace=$1 synth=$2 listing=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
# has FILE REGEX WHAT
has() {
	grep -Eq -- "$2" "$1" || {
		echo "FAIL: $3: no line matches '$2' in:"
		cat "$1"
		fail=1
	}
}

"$synth" "$listing" "$tmp" --scenario libraries --steps 2 || exit 1
t=$tmp/libraries.dnnt

"$dnntrace" info "$t" >"$tmp/info" 2>&1 || { echo "FAIL: info"; fail=1; }
has "$tmp/info" '^cuDNN: +9\.19\.0, built against 9\.19\.0, loaded /usr/lib/libcudnn\.so\.9\.19\.0$' "info: cuDNN"
has "$tmp/info" '^DTT: +10200, built against 10200, loaded /usr/lib/libdtt\.so\.1\.2\.0$' "info: dtt"
has "$tmp/info" "^calls: +5 the program's, 1 made by one library inside another's call" "info: calls"
has "$tmp/info" '^ +2 +0 .* dttScale$' "info: the function table"

"$dnntrace" dump "$t" >"$tmp/dump" 2>&1 || { echo "FAIL: dump"; fail=1; }
has "$tmp/dump" '^API_CALL seq=2 .* dttScale\(handle=0x1000, n=4, alpha=2, x=0x[0-9a-f]+, y=0x[0-9a-f]+\) = 0$' "dump: dtt's call"
has "$tmp/dump" '^API_CALL seq=5 .* cudnnGetVersion\(return=91900\) = CUDNN_STATUS_SUCCESS \[nested\]$' "dump: the nested call"
has "$tmp/dump" '^API_CALL seq=4 .* dttCheckBackend\(.*\) = 0$' "dump: its outer call"

"$dnntrace" report "$t" >"$tmp/report" 2>&1 || { echo "FAIL: report"; fail=1; }
has "$tmp/report" '^totals +5 calls' "report: the program's calls"
exit $fail
