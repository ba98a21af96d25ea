#!/bin/sh
# test-demo.sh DNNTRACE: `dnntrace demo` records the bundled sample into a
# trace away from where it runs, says where, and reports it. Where that
# recording holds no GPU work (no GPU here), it says why from the trace and
# then reports the sample's trace recorded on a GPU, naming the GPU; where
# it holds GPU work, its own report is the one shown.
set -u
dnntrace=$1
case $dnntrace in /*) ;; *) dnntrace=$PWD/$dnntrace ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() {
	echo "FAIL: $*"
	fail=1
}
has() { grep -q -- "$1" "$tmp/demo" || bad "demo does not say: $1"; }

mkdir "$tmp/cwd"
if ! (cd "$tmp/cwd" && "$dnntrace" demo >"$tmp/demo" 2>&1); then
	grep -q 'was not built' "$tmp/demo" && {
		echo "skipped: no sample program"
		exit 77
	}
	bad "demo failed: $(tail -3 "$tmp/demo")"
	exit 1
fi
trace=$(sed -n 's/^The trace is \(.*\)\. Every call.*/\1/p' "$tmp/demo")
[ -f "$trace" ] || bad "no trace where it says: '$trace'"
set -- "$tmp"/cwd/*
[ -e "$1" ] && bad "wrote into the folder it ran from: $*"
grep -q '^API_CALL' "$tmp/demo" && bad "printed the dump"
has "^  dnntrace dump $trace\$"
has "^\$ dnntrace report $trace\$"

# the report of a GPU's recording: its device and the time of its ops
reports_gpu() {
	awk -v cmd="\$ dnntrace report $1" '$0 == cmd { on = 1; next }
		on && /^\$ / { exit } on' "$tmp/demo" >"$tmp/report"
	grep -q '^GPU  *[^ ]' "$tmp/report" &&
		grep -q '^  cuDNN operations  *[0-9.]* [mun]*s ' "$tmp/report"
}

if "$dnntrace" info "$trace" | grep -q '^GPU work:'; then
	reports_gpu "$trace" || bad "the recording's report has no GPU time"
	grep -q 'h200-sample.dnnt' "$tmp/demo" &&
		bad "a recording with GPU work, and the bundled trace reported too"
	echo "demo: recorded on $("$dnntrace" info "$trace" | sed -n 's/^GPU: *//p')"
else
	state=$("$dnntrace" info "$trace" | sed -n 's/^GPU trace: *//p')
	has "^The report above has no GPU time: GPU trace $state\.\$"
	gpu=$(sed -n 's/^Here is the same sample program recorded on a machine with a GPU (\(.*\)),$/\1/p' "$tmp/demo")
	[ "$gpu" = "NVIDIA H200" ] || bad "the bundled trace's GPU said as '$gpu'"
	bundled=$(sed -n 's/^\$ dnntrace report \(.*h200-sample\.dnnt\)$/\1/p' "$tmp/demo")
	[ -f "$bundled" ] || bad "the bundled trace reported is no file: '$bundled'"
	reports_gpu "$bundled" || bad "the bundled trace's report has no GPU time"
	has "^  dnntrace ops $bundled\$"
	echo "demo: no GPU work recorded ($state); the bundled trace of the $gpu reported"
fi
# the sample runs its work 3 times, then destroys its descriptors in a
# row: no loop of steps, with or without a GPU
"$dnntrace" report "$trace" | grep -q '^steps  *no repeating structure' ||
	bad "the sample's report finds steps: $("$dnntrace" report "$trace" | grep '^steps')"
rm -f "$trace"
[ $fail = 0 ] && echo "demo: all checks passed"
exit $fail
