#!/bin/sh
# Where traces go, and what is said when they cannot: `-o` naming a folder,
# a device or a pipe; a folder that cannot be written (checked before the
# program runs, and reported by the process when only it can tell); a full
# disk, as a file size limit and as a small tmpfs: the program runs on, the
# file ends cleanly and counts what it could not take, and `record` says so.
# Names no one should write at: a link to a pipe or a file, every name
# taken, a value of %q{VAR} that would climb, another user's link or open
# folder; a file size limit of 0 (no signal in the program); the output
# folder removed while the program runs.
# usage: test-record-output.sh DNNTRACE LIBDNNTRACE SHIM_CALLS CUDNN_LIBDIR
set -u
dnntrace=$1 shim=$2 calls=$3 cudnn_libdir=$4
. "$(dirname "$0")/test-lib.sh"
chmod 755 "$tmp" # the runs as another user go through it

# run WANT-STATUS CMD...: run, keep stderr in $tmp/err, check the status
run() {
	want=$1
	shift
	"$@" >/dev/null 2>"$tmp/err"
	got=$?
	[ "$got" = "$want" ] || { bad "$*: exit status $got, expected $want"; cat "$tmp/err"; }
}
said() { grep -q -- "$1" "$tmp/err" || { bad "not said: $1"; sed 's/^/    /' "$tmp/err"; }; }
not_said() { grep -q -- "$1" "$tmp/err" && bad "said: $(grep -- "$1" "$tmp/err")"; }

# --- a folder: the default name inside it -----------------------------------
mkdir "$tmp/dir"
run 3 "$dnntrace" record -o "$tmp/dir" -- "$calls" ret3
set -- "$tmp"/dir/dnntrace-*.dnnt
[ -f "$1" ] || bad "-o DIR: no trace in it: $(ls "$tmp")"
run 3 "$dnntrace" record -o "$tmp/new/" -- "$calls" ret3
set -- "$tmp"/new/dnntrace-*.dnnt
[ -f "$1" ] || bad "-o NEW/: no trace in it"
DNNTRACE_OUTPUT="$tmp/dir" LD_PRELOAD="$shim" "$calls" ret3 >/dev/null
set -- "$tmp"/dir/dnntrace-*.dnnt
[ $# = 2 ] || bad "DNNTRACE_OUTPUT=DIR: expected a second trace in it, found $*"

# --- a device or a pipe is refused, never written next to --------------------
mkfifo "$tmp/fifo"
run 2 "$dnntrace" record -o "$tmp/fifo" -- "$calls" ret3
said "fifo is a device or a pipe, not a trace file or a folder"
run 2 "$dnntrace" record -o /dev/null -- "$calls" ret3
said "/dev/null is a device or a pipe"
DNNTRACE_OUTPUT="$tmp/fifo" LD_PRELOAD="$shim" "$calls" ret3 >/dev/null 2>"$tmp/err"
said "cannot create the trace file .*fifo: it is a device or a pipe"
[ -e "$tmp/fifo.1" ] && bad "a trace was written beside the pipe"

# /dev/stderr is a link to the process's stderr: a pipe is refused, once, and
# nothing is written beside it in /dev
(DNNTRACE_OUTPUT=/dev/stderr LD_PRELOAD="$shim" "$calls" ret3 2>&1 >/dev/null) | cat >"$tmp/err"
said "cannot create the trace file /dev/stderr: it is a device or a pipe"
[ "$(grep -c 'cannot create' "$tmp/err")" = 1 ] || bad "/dev/stderr: not said once: $(cat "$tmp/err")"
[ -e /dev/stderr.1 ] && { bad "a trace was written at /dev/stderr.1"; rm -f /dev/stderr.1; }
# and a link to a file (stderr into one) is not a name taken, to number
DNNTRACE_OUTPUT=/dev/stderr LD_PRELOAD="$shim" "$calls" ret3 >/dev/null 2>"$tmp/err"
said "cannot create the trace file /dev/stderr: it is a link to a file"
[ -e /dev/stderr.1 ] && { bad "a trace was written at /dev/stderr.1"; rm -f /dev/stderr.1; }

# --- every name taken: said so, not taken for a device ------------------------
mkdir "$tmp/many"
(cd "$tmp/many" && touch x.dnnt && seq 9999 | sed 's/.*/x.&.dnnt/' | xargs touch)
DNNTRACE_OUTPUT="$tmp/many/x.dnnt" LD_PRELOAD="$shim" "$calls" ret3 >/dev/null 2>"$tmp/err"
said "cannot create the trace file $tmp/many/x.dnnt: every name from x.dnnt to x.9999.dnnt is taken"
not_said "device or a pipe"

# --- a variable's value never adds or climbs a folder -------------------------
mkdir -p "$tmp/q/a"
run 3 env D=.. "$dnntrace" record -o "$tmp/q/a/%q{D}/t.dnnt" -- "$calls" ret3
[ -e "$tmp/q/t.dnnt" ] && bad "%q{D} of '..' climbed a folder"
[ -f "$tmp/q/a/__/t.dnnt" ] || bad "%q{D} of '..': no trace at a/__/t.dnnt: $(find "$tmp/q" -type f)"
D=. DNNTRACE_OUTPUT="$tmp/q/a/%q{D}/%q{D}%q{D}.dnnt" LD_PRELOAD="$shim" "$calls" ret3 >/dev/null 2>&1
[ -f "$tmp/q/a/_/...dnnt" ] || bad "%q{D} of '.': no trace at a/_/...dnnt: $(find "$tmp/q" -type f)"

# --- a file size limit of 0: said, and never a signal in the program ---------
(ulimit -f 0 && "$dnntrace" record -o "$tmp/f0-%p.dnnt" -- "$calls" ret3 2>&1 >/dev/null; echo "exit status $?") | cat >"$tmp/err"
said "exit status 3"
said "pid [0-9]*: cannot create $tmp/f0-[0-9]*.dnnt: File too large"
# and without record, the warning on a stderr that is a file at its limit
(ulimit -f 0 && DNNTRACE_OUTPUT="$tmp/f0-%p.dnnt" LD_PRELOAD="$shim" "$calls" ret3 >/dev/null 2>"$tmp/f0-err"; echo "exit status $?") | cat >"$tmp/err"
said "exit status 3"

# --- a trace's name reaches the terminal escaped ----------------------------
mkdir "$tmp/esc"
EVIL=$(printf 'r\033]0;owned\007') run 3 "$dnntrace" record \
	-o "$tmp/esc/%q{EVIL}.dnnt" -- "$calls" ret3
said 'r\\x1b]0;owned\\x07.dnnt'
LC_ALL=C grep -q "$(printf '\033')" "$tmp/err" &&
	bad "record printed a trace's name with its escape: $(cat -v "$tmp/err")"

# --- a program that cannot be started --------------------------------------
run 127 "$dnntrace" record -o "$tmp/x-%p.dnnt" -- "$tmp/no-such-program"
said "cannot run .*no-such-program: No such file or directory"
not_said "no trace written"
run 126 "$dnntrace" record -o "$tmp/x-%p.dnnt" -- "$tmp/fifo"
said "cannot run .*fifo: Permission denied"

# --- a folder that cannot be written ------------------------------------------
# as root, the test runs the command as nobody; without a way to, it skips
as=""
if [ "$(id -u)" = 0 ]; then
	command -v setpriv >/dev/null && as="setpriv --reuid=65534 --regid=65534 --clear-groups"
fi
if [ "$(id -u)" != 0 ] || [ -n "$as" ]; then
	mkdir "$tmp/rw" "$tmp/rw/ro"
	chmod 777 "$tmp/rw"
	chmod 555 "$tmp/rw/ro"
	run 2 $as "$dnntrace" record -o "$tmp/rw/ro/t-%p.dnnt" -- "$calls" ret3
	said "cannot write traces in $tmp/rw/ro: Permission denied"
	# a folder known only to the process: it says what happened
	run 3 env SUB=ro $as "$dnntrace" record -o "$tmp/rw/%q{SUB}/t-%p.dnnt" -- "$calls" ret3
	said "pid [0-9]*: cannot create $tmp/rw/ro/t-[0-9]*.dnnt: Permission denied"
	not_said "no process of the program called"
else
	echo "skipped: an unwritable folder (root, and no setpriv)"
fi

# --- folders and links of another user, in a folder everyone may write ---------
# (a shared /tmp): never written through, nor into
if [ -n "$as" ]; then
	mkdir -m 1777 "$tmp/shared"
	mkdir "$tmp/victim"
	$as ln -s "$tmp/victim" "$tmp/shared/out"
	run 3 "$dnntrace" record -o "$tmp/shared/out" -- "$calls" ret3
	said "cannot create the trace file $tmp/shared/out: .*another user"
	$as mkdir -m 777 "$tmp/shared/traces"
	run 3 "$dnntrace" record -o "$tmp/shared/traces/t-%p.dnnt" -- "$calls" ret3
	said "cannot create the trace file $tmp/shared/traces/t-[0-9]*.dnnt: .*another user"
	set -- "$tmp"/victim/* "$tmp"/shared/traces/*
	[ -e "$1" ] || [ -e "$2" ] && bad "written through another user's link or folder: $*"
	# one's own link is followed
	ln -s "$tmp/victim" "$tmp/shared/mine"
	run 3 "$dnntrace" record -o "$tmp/shared/mine" -- "$calls" ret3
	set -- "$tmp"/victim/dnntrace-*.dnnt
	[ -f "$1" ] || bad "-o LINK of one's own: no trace in the folder it names"
fi

# --- the output folder removed while the program runs --------------------------
# The trace is made again, whole, where it was; where it cannot be, record
# says it is lost and how much, and does not list it. (Buffers large enough
# that a loaded machine's writer loses none of the 18 000 calls.)
# wait_for GLOB: until a file matches it (10 s at most)
wait_for() {
	for i in $(seq 100); do
		set -- $1
		[ -f "$1" ] && return
		sleep 0.1
	done
}
mkdir "$tmp/gone"
touch "$tmp/flag"
"$dnntrace" record --buffer-size 64M -o "$tmp/gone/t-%p.dnnt" -- "$calls" gone "$tmp/flag" 3000 >/dev/null 2>"$tmp/err" &
pid=$!
wait_for "$tmp/gone/t-*.dnnt"
rm -rf "$tmp/gone" "$tmp/flag"
wait $pid || bad "removed folder: record's exit status $?"
said "t-[0-9]*.dnnt was removed while recording"
set -- "$tmp"/gone/t-*.dnnt
if [ -f "$1" ]; then
	[ "$(count "$1")" = 18000 ] || bad "removed folder: $(count "$1") calls in the trace made again, expected 18000"
	[ "$(info_of "$1" ended)" = "clean (exit 0)" ] || bad "removed folder: ended '$(info_of "$1" ended)'"
else
	bad "removed folder: the trace is gone"
fi
if [ -n "$as" ]; then
	mkdir -m 777 "$tmp/rw2"
	touch "$tmp/flag"
	$as "$dnntrace" record --buffer-size 64M -o "$tmp/rw2/g/t-%p.dnnt" -- "$calls" gone "$tmp/flag" 3000 >/dev/null 2>"$tmp/err" &
	pid=$!
	wait_for "$tmp/rw2/g/t-*.dnnt"
	chmod 555 "$tmp/rw2"
	rm -rf "$tmp/rw2/g" "$tmp/flag"
	wait $pid
	chmod 777 "$tmp/rw2"
	said "t-[0-9]*.dnnt was removed while recording and could not be made again (Permission denied): [0-9]* records, 18000 calls, lost"
	not_said "^dnntrace: trace "
fi

# --- a full disk ----------------------------------------------------------------
# check_full TRACE: the file ended cleanly and counts what it could not take
check_full() {
	e=$(info_of "$1" ended) lost=$(info_of "$1" lost)
	[ "$e" = "clean (exit 0)" ] || bad "full: ended '$e'"
	case $lost in 0\ * | "") bad "full: lost '$lost'" ;; esac
	"$dnntrace" dump "$1" | grep -Eq '^LOSS .*reason=4' || bad "full: no LOSS record of reason 4"
}
if command -v prlimit >/dev/null; then
	run 0 prlimit --fsize=131072 "$dnntrace" record -o "$tmp/lim-%p.dnnt" -- "$calls" threads 1 40000
	said "pid [0-9]*: .*lim-[0-9]*.dnnt could not take every record (File too large): [1-9][0-9]* records lost"
	set -- "$tmp"/lim-*.dnnt
	check_full "$1"
else
	echo "skipped: a file size limit (no prlimit)"
fi
# A 256 KiB tmpfs, mounted in a namespace of its own where that is allowed.
cat >"$tmp/tmpfs.sh" <<EOF
mount -t tmpfs -o size=256k none "$tmp/mnt" || exit 77
"$dnntrace" record -o "$tmp/mnt/t-%p.dnnt" -- "$calls" threads 1 100000 >/dev/null 2>"$tmp/err" || exit 3
cp "$tmp"/mnt/t-*.dnnt "$tmp/full.dnnt"
EOF
mkdir "$tmp/mnt"
unshare -rm sh "$tmp/tmpfs.sh" 2>/dev/null
case $? in
0)
	said "could not take every record (No space left on device)"
	check_full "$tmp/full.dnnt"
	;;
1 | 77 | 127) echo "skipped: a full tmpfs (no mount namespace here)" ;;
*) bad "the program on a full tmpfs failed" ;;
esac

# --- the help names the library record preloads ------------------------------
lib=$("$dnntrace" record --help | sed -n 's/^  LD_PRELOAD=\([^ ]*\) .*/\1/p')
[ -f "$lib" ] || bad "record --help names '$lib', which does not exist"

[ $fail = 0 ] && echo "output: all checks passed"
exit $fail
