#!/bin/sh
# Programs built with AddressSanitizer are recorded: `record` puts its
# runtime first in LD_PRELOAD, as it must be. And a shim itself built with
# -Db_sanitize=address records plain programs. Skips (77) where neither
# applies (no ASan program built, a shim without ASan).
# usage: test-asan.sh DNNTRACE LIBDNNTRACE SHIM_CALLS CUDNN_LIBDIR [SHIM_ASAN]
set -u
dnntrace=$1 shim=$2 calls=$3 cudnn_libdir=$4 asan_prog=${5:-}
. "$(dirname "$0")/test-lib.sh"
ran=0

# check NAME CALLS: one trace NAME-*.dnnt, with CALLS calls, ended cleanly
check() {
	set -- "$tmp/$1"-*.dnnt "$2"
	[ $# = 2 ] && [ -f "$1" ] || { bad "expected one trace: $*"; return; }
	n=$(count "$1")
	[ "$n" = "$2" ] || bad "$(basename "$1"): $n calls, expected $2"
	[ "$(info_of "$1" ended)" = "clean (exit 0)" ] || bad "$(basename "$1"): not a clean end"
}

if [ -n "$asan_prog" ] && [ -x "$asan_prog" ]; then
	ran=1
	"$dnntrace" record -q -o "$tmp/prog-%p.dnnt" -- "$asan_prog" >"$tmp/out" 2>"$tmp/err" ||
		{ bad "ASan program: exit status $?"; cat "$tmp/err"; }
	grep -q '^LD_PRELOAD=libasan\.so[^:]*:.*libdnntrace\.so' "$tmp/out" || bad "ASan program: $(cat "$tmp/out")"
	check prog 3
fi
if ldd "$shim" 2>/dev/null | grep -q libasan; then
	ran=1
	"$dnntrace" record -q -o "$tmp/plain-%p.dnnt" -- "$calls" calls >/dev/null 2>"$tmp/err" ||
		{ bad "ASan shim, plain program: exit status $?"; cat "$tmp/err"; }
	check plain 21
fi
[ $ran = 1 ] || { echo "skipped: no AddressSanitizer program, and the shim is built without it"; exit 77; }
[ $fail = 0 ] && echo "asan: all checks passed"
exit $fail
