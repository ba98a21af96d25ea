# test-lib.sh - what the shim's test scripts share; sourced once dnntrace
# (and, for cuDNN programs, cudnn_libdir) are set: a scratch folder removed
# at exit, cuDNN on the loader's path, and helpers that report failures and
# read traces.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -n "${cudnn_libdir:-}" ] &&
	export LD_LIBRARY_PATH="$cudnn_libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fail=0

bad() { echo "FAIL: $*"; fail=1; }
# has FILE REGEX WHAT: a line of FILE matches REGEX, else FILE is shown
has() {
	grep -Eq -- "$2" "$1" || {
		bad "$3: no line matches '$2' in:"
		cat "$1"
	}
}
# count TRACE: the calls it holds
count() { "$dnntrace" dump "$1" | grep -c '^API_CALL'; }
# info_of TRACE LABEL: the value of one line of `dnntrace info`
info_of() { "$dnntrace" info "$1" | sed -n "s/^$2: *//p"; }
# record_prog: `dnntrace record` of $prog with $shim into $tmp/t.dnnt,
# its output in $tmp/out; the test ends when recording fails
record_prog() {
	DNNTRACE_LIB=$shim "$dnntrace" record -q -o "$tmp/t.dnnt" -- "$prog" >"$tmp/out" 2>&1 ||
		{ bad "record failed"; cat "$tmp/out"; exit 1; }
}
