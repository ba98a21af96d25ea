# expect.sh - sourced by the tests of the dnntrace command's exit statuses
# and messages. They set dnntrace (the executable), tmp (a scratch folder)
# and fail (0), and call
#   expect STATUS PATTERN -- ARGS...
# which runs `dnntrace ARGS` and sets fail=1 unless it exits with STATUS and
# its output matches PATTERN (grep; an empty pattern matches anything).
expect() {
	want=$1 pat=$2
	shift 3
	"$dnntrace" "$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	if [ "$got" != "$want" ]; then
		echo "FAIL: dnntrace $*: exit $got, expected $want"; cat "$tmp/err"; fail=1
	elif [ -n "$pat" ] && ! grep -q -- "$pat" "$tmp/err" "$tmp/out"; then
		echo "FAIL: dnntrace $*: output lacks '$pat'"; cat "$tmp/out" "$tmp/err"; fail=1
	fi
}

# expect_usage PATTERN -- ARGS...: a usage error, said once: exit status 2
# and on stderr the one sentence matching PATTERN, then the hint to --help,
# nothing else (no second message from getopt).
expect_usage() {
	expect 2 "$@"
	shift 2
	if [ "$(wc -l <"$tmp/err")" != 2 ] || ! grep -q "^Try 'dnntrace" "$tmp/err"; then
		echo "FAIL: dnntrace $*: not one sentence and the hint:"; cat "$tmp/err"; fail=1
	fi
}
