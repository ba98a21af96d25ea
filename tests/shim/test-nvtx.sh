#!/bin/sh
# NVTX ranges under the shim: a program using NVTX v3 records its ranges,
# marks, domain, registered string and names when NVTX_INJECTION64_PATH
# names the shim (`record` sets it); without it, nothing of NVTX is
# recorded and the program runs as before; under another NVTX tool, that
# tool keeps NVTX and the trace says so.
# usage: test-nvtx.sh DNNTRACE LIBDNNTRACE NVTX_PROG NVTX_OTHER CUDNN_LIBDIR
set -u
dnntrace=$1 shim=$2 prog=$3 other=$4 cudnn_libdir=$5
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export LD_LIBRARY_PATH="$cudnn_libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
unset NVTX_INJECTION64_PATH
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# events FILE EVENT: how many NVTX records of that event number FILE holds
events() { "$dnntrace" dump "$1" | grep -c "^NVTX .* event=$2 "; }

# --- under `record`: every kind of event, names written once ----------
out=$("$dnntrace" record -q -o "$tmp/rec-%p.dnnt" -- "$prog") || bad "record failed"
[ "$out" = "nvtx-prog: ok" ] || bad "the program said: $out"
f=$(ls "$tmp"/rec-*.dnnt)
for e in "1 9 push" "2 9 pop" "3 1 start" "4 1 end" "5 3 mark" "6 1 category" "7 1 thread-name"; do
	set -- $e
	n=$(events "$f" "$1")
	[ "$n" = "$2" ] || bad "record: $n $3 events, expected $2"
done
"$dnntrace" dump "$f" >"$tmp/dump"
[ "$(grep -c '^STRING .* "step"$' "$tmp/dump")" = 1 ] || bad "the name \"step\" was not written once"
grep -q '^STRING .* "wide \\xc3\\xa9t\\xc3\\xa9"$' "$tmp/dump" || bad "the wide message is not in UTF-8"
# the registered string names the domain's range by its handle
reg=$(sed -n 's/^STRING id=\([0-9]*\) "registered"$/\1/p' "$tmp/dump")
dom=$(sed -n 's/^STRING id=\([0-9]*\) "mylib"$/\1/p' "$tmp/dump")
grep -q "^NVTX .* event=1 name=$reg domain=$dom " "$tmp/dump" || bad "no push of the registered string in domain mylib"
# the start/end range: ended by the other thread, with the same id
s=$(sed -n 's/^NVTX .* range=\([0-9]*\) tid=\([0-9]*\) event=3 .*/\1 \2/p' "$tmp/dump")
e=$(sed -n 's/^NVTX .* range=\([0-9]*\) tid=\([0-9]*\) event=4 .*/\1 \2/p' "$tmp/dump")
[ "${s%% *}" = "${e%% *}" ] && [ "${s#* }" != "${e#* }" ] || bad "start ($s) and end ($e): not one range on two threads"
"$dnntrace" info "$f" | grep -q '^NVTX ranges: on$' || bad "info does not say NVTX ranges are on"

# --- the report's ranges, and --range --------------------------------
"$dnntrace" report "$f" >"$tmp/report" || bad "report failed"
grep -Eq '^ +3 +[0-9.]+ [mun]?s +9 +0 +0 ns +step$' "$tmp/report" || bad "report: step is not 3 ranges of 9 calls: $(grep -A9 '^GPU time by range' "$tmp/report")"
grep -Eq '^ +1 +[0-9.]+ [mun]?s +3 +0 +0 ns +mylib::registered$' "$tmp/report" || bad "report: the domain's range is not 1 range of 3 calls"
# the worker's call, inside the start/end range though read before its start
grep -Eq '^ +1 +[0-9.]+ [mun]?s +1 +0 +0 ns +async$' "$tmp/report" || bad "report: the start/end range does not hold the worker's call"
"$dnntrace" report --format json "$f" | grep -q '{"name": "conv", "domain": null, "count": 3, "open": 0, "host_ns": [0-9]*, "calls": 9, "kernels": 0, "gpu_ns": 0}' ||
	bad "report json: no conv range of 3 instances and 9 calls"
for r in step 'st?p' conv; do
	"$dnntrace" report --range "$r" "$f" | grep -q '^totals *9 calls (0 failed)' || bad "report --range $r: not the 9 calls of the steps"
done
"$dnntrace" report --range warmup "$f" | grep -q '^totals *1 calls (0 failed)' || bad "report --range warmup: not its 1 call"
"$dnntrace" report --range nothing "$f" 2>"$tmp/err" | grep -q '^totals *0 calls' || bad "report --range nothing: calls left"
grep -q "^dnntrace: no NVTX range is called 'nothing' in this trace: nothing was kept$" "$tmp/err" ||
	bad "report --range nothing: not said: $(cat "$tmp/err")"
"$dnntrace" diff --range step "$f" "$f" >/dev/null || bad "diff --range failed"
"$dnntrace" fusion --range step "$f" >/dev/null || bad "fusion --range failed"

# --- a fork's child: its file names what it pushes, though the parent's
# thread had written that name into the parent's file
mkdir "$tmp/fork"
out=$("$dnntrace" record -q -o "$tmp/fork/%p.dnnt" -- "$prog" fork) || bad "record of a fork failed"
[ "$out" = "nvtx-prog: ok" ] || bad "with a fork, the program said: $out"
child=$(for c in "$tmp"/fork/*.dnnt; do "$dnntrace" info "$c" | grep -q '^process:.*(parent [0-9]*)' &&
	[ "$("$dnntrace" dump "$c" | grep -c '^NVTX ')" = 2 ] && echo "$c"; done)
[ -n "$child" ] && "$dnntrace" report "$child" | grep -Eq '^ +1 +.* +3 +0 +0 ns +step$' ||
	bad "the child's trace does not name its step: $("$dnntrace" dump $child | grep -v '^API')"

# --- LD_PRELOAD alone: NVTX is not loaded, nothing recorded -----------
out=$(LD_PRELOAD="$shim" DNNTRACE_OUTPUT="$tmp/pre-%p.dnnt" "$prog") || bad "preloaded run failed"
[ "$out" = "nvtx-prog: ok" ] || bad "preloaded, the program said: $out"
f=$(ls "$tmp"/pre-*.dnnt)
[ "$(events "$f" '[0-9]*')" = 0 ] || bad "NVTX recorded without NVTX_INJECTION64_PATH"
"$dnntrace" info "$f" | grep -q '^NVTX ranges: off: NVTX_INJECTION64_PATH is not set$' ||
	bad "info does not say why NVTX is off: $("$dnntrace" info "$f" | grep NVTX)"

# --- another tool holds NVTX: it keeps it -----------------------------
NVTX_INJECTION64_PATH="$other" "$dnntrace" record -q -o "$tmp/other-%p.dnnt" -- "$prog" >"$tmp/out" 2>"$tmp/err" ||
	bad "record under another tool failed"
grep -q '^nvtx-other: 4 ranges pushed$' "$tmp/err" || bad "the other tool lost NVTX: $(cat "$tmp/err")"
f=$(ls "$tmp"/other-*.dnnt)
[ "$(events "$f" '[0-9]*')" = 0 ] || bad "NVTX recorded while another tool holds it"
"$dnntrace" info "$f" | grep -q "^NVTX ranges: off: another tool holds NVTX (NVTX_INJECTION64_PATH=$other)$" ||
	bad "info does not name the other tool: $("$dnntrace" info "$f" | grep NVTX)"

exit $fail
