#!/bin/sh
# The trace's descriptor against a program that closes or reuses
# descriptors it did not open, and one near its limit on open files: the
# program's own files and calls are as without recording, and the trace
# is whole, or says why not.
# usage: test-shim-fds.sh DNNTRACE SHIM_CALLS CUDNN_LIBDIR
set -u
dnntrace=$1 calls=$2 cudnn_libdir=$3
. "$(dirname "$0")/test-lib.sh"

# --- daemons close every descriptor but 0-2, then open their own files ------
for how in closefrom close_range close dup2 raw; do
	"$dnntrace" record -q -o "$tmp/$how.dnnt" -- "$calls" fds $how "$tmp/own-$how" ||
		bad "$how: exit status $?"
	# the last frames are written as the program ends: its file is read after
	size=$(wc -c <"$tmp/own-$how")
	[ "$size" = 22 ] || bad "$how: the program's file holds $size bytes, 22 written"
	n=$(count "$tmp/$how.dnnt") e=$(info_of "$tmp/$how.dnnt" ended)
	l=$(info_of "$tmp/$how.dnnt" lost)
	[ "$n" = 6006 ] || bad "$how: $n calls recorded, expected 6006"
	[ "$e" = "clean (exit 0)" ] || bad "$how: ended '$e'"
	[ "$l" = "0 records" ] || bad "$how: lost '$l'"
done
# the raw system call is not seen: the writer finds it, and says so
d=$(info_of "$tmp/raw.dnnt" descriptor)
case $d in
*"replaced by the program; the file was opened again") ;;
*) bad "raw: no word of the descriptor replaced: '$d'" ;;
esac

# --- near the limit on open files --------------------------------------------
# a soft limit of 4 (0-2 and one for cuDNN to load its parts): the trace goes
# above it, which the hard limit allows; the program's 300 calls succeed
"$dnntrace" record -q -o "$tmp/soft.dnnt" -- sh -c "ulimit -Sn 4 && exec \"$calls\" threads 1 100" ||
	bad "soft limit 4: exit status $?"
n=$(count "$tmp/soft.dnnt") e=$(info_of "$tmp/soft.dnnt" ended)
[ "$n" = 300 ] || bad "soft limit 4: $n calls recorded, expected 300"
[ "$e" = "clean (exit 0)" ] || bad "soft limit 4: ended '$e'"
# hard and soft 4: no room for the trace; the program runs as without it,
# and record says why there is no trace
"$dnntrace" record -o "$tmp/hard.dnnt" -- sh -c "ulimit -n 4 && exec \"$calls\" threads 1 100" 2>"$tmp/err" ||
	bad "hard limit 4: exit status $?: $(cat "$tmp/err")"
[ -e "$tmp/hard.dnnt" ] && bad "hard limit 4: a trace was written"
[ "$(grep -c 'limit on open files' "$tmp/err")" = 2 ] ||
	bad "hard limit 4: not said once by the process and once by record: $(cat "$tmp/err")"

# the program lowers its own limit, to 4 and to 3: it fares as without the
# recorder (at 3, where cuDNN cannot load its parts, its calls fail; the
# recorder must not make cuDNN abort it)
for n in 4 3; do
	plain=$("$calls" limit $n 2>/dev/null)
	rc_plain=$?
	rec=$("$dnntrace" record -q -o "$tmp/limit$n.dnnt" -- "$calls" limit $n 2>/dev/null)
	rc=$?
	[ $rc = $rc_plain ] || bad "limit $n: exit status $rc, $rc_plain without recording"
	[ "$rec" = "$plain" ] || bad "limit $n: '$rec', '$plain' without recording"
done

[ $fail = 0 ] && echo "fds: all checks passed"
exit $fail
