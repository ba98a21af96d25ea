#!/bin/sh
# How a recorded process ends, and its trace with it: children that end
# with _exit() (forked workers), crashes in programs with their own fatal-
# signal handler (installed before or after recording starts), and handlers
# that return or signals ignored, which must not end anything.
# usage: test-shim-ends.sh DNNTRACE SHIM_CALLS CUDNN_LIBDIR SHIM
set -u
dnntrace=$1 calls=$2 cudnn_libdir=$3 shim=$4
. "$(dirname "$0")/test-lib.sh"

# --- forked workers that end with _exit() or _Exit() -------------------------
"$dnntrace" record -q -o "$tmp/wk-%p.dnnt" -- "$calls" workers 4 || bad "workers: exit status $?"
set -- "$tmp"/wk-*.dnnt
[ $# = 5 ] || bad "workers: expected 5 traces, found $#"
for f in "$@"; do
	n=$(count "$f") e=$(info_of "$f" ended)
	case $n in
	6 | 8) ;;
	*) bad "workers: $(basename "$f") has $n calls (expected 8 in a child, 6 in the parent)" ;;
	esac
	[ "$e" = "clean (exit 0)" ] || bad "workers: $(basename "$f") ended '$e'"
done
DNNTRACE_DISABLE=1 "$dnntrace" record -q -o "$tmp/off-%p.dnnt" -- "$calls" workers 2 || bad "workers, recording off: exit status $?"
set -- "$tmp"/off-*.dnnt
[ -e "$1" ] && bad "workers, recording off: traces written: $*"

# --- a crash in a program with its own SIGSEGV handler ------------------------
for how in reraise previous resethand exit; do
	for when in ctor before after; do
		name=$how-$when
		"$dnntrace" record -q -o "$tmp/$name-%p.dnnt" -- "$calls" segv $how $when 2>"$tmp/err"
		rc=$?
		want=139 end="clean (signal 11)"
		[ $how = exit ] && want=3 end="clean (exit 3)"
		[ $rc = $want ] || bad "segv $name: exit status $rc, expected $want"
		grep -q 'handler ran' "$tmp/err" || bad "segv $name: the program's handler did not run"
		grep -q 'FAIL' "$tmp/err" && bad "segv $name: $(grep FAIL "$tmp/err")"
		set -- "$tmp/$name"-*.dnnt
		if [ $# = 1 ] && [ -f "$1" ]; then
			n=$(count "$1") e=$(info_of "$1" ended)
			[ "$n" = 10 ] || bad "segv $name: $n calls recorded, expected 10"
			[ "$e" = "$end" ] || bad "segv $name: ended '$e', expected '$end'"
		else
			bad "segv $name: expected one trace, found $*"
		fi
	done
done

# --- DNNTRACE_BACKTRACE: a crash's place and stack, and the trace still ends --
DNNTRACE_BACKTRACE=1 "$dnntrace" record -q -o "$tmp/bt-%p.dnnt" -- "$calls" segv resethand after 2>"$tmp/err"
rc=$?
[ $rc = 139 ] || bad "backtrace: exit status $rc, expected 139"
grep -q '^dnntrace: SIGSEGV at 0x0 in thread [0-9]* "shim-calls"; its stack:$' "$tmp/err" ||
	bad "backtrace: no crash line on stderr: $(cat "$tmp/err")"
grep -q 'shim-calls(+0x' "$tmp/err" || bad "backtrace: no frame of the program on stderr"
set -- "$tmp"/bt-*.dnnt
e=$(info_of "$1" ended)
[ "$e" = "clean (signal 11)" ] || bad "backtrace: ended '$e', expected 'clean (signal 11)'"

# --- handlers that return and ignored signals end nothing ---------------------
for mode in sigint sigign; do
	"$dnntrace" record -q -o "$tmp/$mode-%p.dnnt" -- "$calls" $mode || bad "$mode: exit status $?"
	set -- "$tmp/$mode"-*.dnnt
	n=$(count "$1") e=$(info_of "$1" ended)
	[ "$n" = 10 ] || bad "$mode: $n calls recorded, expected 10"
	[ "$e" = "clean (exit 0)" ] || bad "$mode: ended '$e'"
done

# --- main ends with pthread_exit: the process ends with its last thread -----
# (run without record, which would wait for ever; killed if it hangs)
DNNTRACE_OUTPUT="$tmp/mainexit-%p.dnnt" LD_PRELOAD=$shim \
	timeout -s KILL 20 "$calls" mainexit
rc=$?
[ $rc = 0 ] || bad "mainexit: exit status $rc, expected 0 (137: it did not end)"
set -- "$tmp"/mainexit-*.dnnt
n=$(count "$1") e=$(info_of "$1" ended)
[ "$n" = 10 ] || bad "mainexit: $n calls recorded, expected 10"
[ "$e" = "clean (exit 0)" ] || bad "mainexit: ended '$e'"

# --- every signal whose default action ends the process ----------------------
# (by number: SIGALRM SIGUSR1 SIGUSR2 SIGVTALRM SIGPROF SIGIO SIGPWR SIGXCPU
# SIGXFSZ SIGSYS SIGTRAP SIGSTKFLT SIGHUP, and real-time signals), each left
# at its default: the trace ends with it, and record exits 128 + N
rtmin=$(kill -l RTMIN 2>/dev/null || echo 34) rtmax=$(kill -l RTMAX 2>/dev/null || echo 64)
for sig in 14 10 12 26 27 29 30 24 25 31 5 16 1 RTMIN+0 RTMIN+3 RTMAX-0; do
	case $sig in
	RTMIN+*) n=$((rtmin + ${sig#RTMIN+})) ;;
	RTMAX-*) n=$((rtmax - ${sig#RTMAX-})) ;;
	*) n=$sig ;;
	esac
	"$dnntrace" record -q -o "$tmp/sig$n-%p.dnnt" -- "$calls" raise $sig 2>/dev/null
	rc=$?
	[ $rc = $((128 + n)) ] || bad "signal $n: exit status $rc, expected $((128 + n))"
	set -- "$tmp/sig$n"-*.dnnt
	c=$(count "$1") e=$(info_of "$1" ended)
	[ "$c" = 6 ] || bad "signal $n: $c calls recorded, expected 6"
	[ "$e" = "clean (signal $n)" ] || bad "signal $n: ended '$e'"
done

# the same signals handled by the program end nothing
for n in 10 14 $rtmin; do
	"$dnntrace" record -q -o "$tmp/handled$n-%p.dnnt" -- "$calls" handled $n || bad "handled $n: exit status $?"
	set -- "$tmp/handled$n"-*.dnnt
	c=$(count "$1") e=$(info_of "$1" ended)
	[ "$c" = 10 ] || bad "handled $n: $c calls recorded, expected 10"
	[ "$e" = "clean (exit 0)" ] || bad "handled $n: ended '$e'"
done

[ $fail = 0 ] && echo "ends: all checks passed"
exit $fail
