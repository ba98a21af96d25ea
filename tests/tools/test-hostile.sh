#!/bin/sh
# Every reading command on a trace whose strings carry a terminal's control
# sequences, a Markdown cell's '|', a spreadsheet formula, a function name
# shorter than "cudnn" and a status cuDNN does not define (synth-trace
# --scenario hostile): each ends with status 0, and none of what it prints
# holds a control character but line ends and tabs (CSV files, data, are
# looked at for formulas only).
# usage: test-hostile.sh DNNTRACE SYNTH_TRACE API_LISTING
set -u
dnntrace=$1 synth=$2 listing=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
t="$tmp/hostile.dnnt"
"$synth" "$listing" "$tmp" --scenario hostile >/dev/null || exit 1

# control characters but LF and tab: C0, DEL, C1 in UTF-8 or raw
controls='[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]|\xc2[\x80-\x9f]'

# clean COMMAND...: it exits 0 and its output and messages are clean
clean() {
	"$dnntrace" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" != 0 ]; then
		echo "FAIL: dnntrace $*: exit $rc"; head -c 2000 "$tmp/err" | cat -v
		fail=1
	elif LC_ALL=C grep -a -q -P "$controls" "$tmp/out" "$tmp/err"; then
		echo "FAIL: dnntrace $*: prints control characters:"
		LC_ALL=C grep -a -P "$controls" "$tmp/out" "$tmp/err" | head -3 | cat -v
		fail=1
	fi
}

clean info "$t"
clean dump "$t"
clean ops "$t"
clean ops --format json "$t"
clean ops --call 3 "$t"
for f in text markdown json html; do
	clean report --format "$f" "$t"
	clean diff --format "$f" "$t" "$t"
done
cp "$t" "$tmp/again.dnnt" # two ranks: the tables of ranks
clean report "$t" "$tmp/again.dnnt"
clean report --format markdown "$t" "$tmp/again.dnnt"
clean fusion "$t"
clean fusion --format json "$t"
clean export --format chrome -o - "$t"

# a name shorter than "cudnn" is shown whole, not read past its end
"$dnntrace" ops "$t" | grep -q ' cu $' ||
	{ echo "FAIL: ops: the function 'cu' is not shown as it is"; fail=1; }
# a status cuDNN does not define is shown as its number
"$dnntrace" ops --call 3 "$t" | grep -q ') = 9999$' ||
	{ echo "FAIL: ops --call: status 9999 not shown as a number"; fail=1; }
# a Markdown table's cell keeps its '|' from ending it
"$dnntrace" report --format markdown "$t" | grep -q 'x7f\\|=1+2' ||
	{ echo "FAIL: report --format markdown: a cell's '|' is not escaped"; fail=1; }

# times at the ends of the clocks: the time line is worked out modulo 2^64
# (no signed overflow), each time in its place
"$synth" "$listing" "$tmp" --scenario extreme >/dev/null || exit 1
for cmd in info dump ops report "report --format json" fusion "diff $tmp/extreme.dnnt" \
	"export --format perfetto -o $tmp/e.pftrace" "export --format sqlite -o $tmp/e.sqlite"; do
	# shellcheck disable=SC2086 # words of the command
	"$dnntrace" $cmd "$tmp/extreme.dnnt" >/dev/null 2>"$tmp/err" ||
		{ echo "FAIL: dnntrace $cmd on times at the clocks' ends"; cat "$tmp/err"; fail=1; }
done
"$dnntrace" export --format chrome "$tmp/extreme.dnnt" >"$tmp/e.json" 2>"$tmp/err"
grep -q '"ts":300.500,"dur":2.000,"name":"cudnn::init_kernel"' "$tmp/e.json" &&
	grep -q '"ts":9223372036854774.807,"dur":1.000,"name":"late_kernel"' "$tmp/e.json" ||
	{ echo "FAIL: export --format chrome: times near 2^63 misplaced"; grep -o '"ts":[^,]*,"dur":[^,]*,"name":"[^"]*"' "$tmp/e.json"; fail=1; }

# the binary and data formats: they end well (Perfetto's strings are
# protobuf's, SQLite's bound values)
for f in perfetto sqlite; do
	"$dnntrace" export --format $f -o "$tmp/out.$f" "$t" 2>"$tmp/err" ||
		{ echo "FAIL: export --format $f"; cat "$tmp/err"; fail=1; }
done

# CSV: a text a spreadsheet would run as a formula is quoted with a ' first
"$dnntrace" export --format csv -o "$tmp/csv" "$t" 2>"$tmp/err" ||
	{ echo "FAIL: export --format csv"; cat "$tmp/err"; fail=1; }
if grep -a -q '^[^"]*"=HYPERLINK\|,=HYPERLINK' "$tmp"/csv/*.csv ||
	! grep -a -q "\"'=HYPERLINK" "$tmp"/csv/*.csv; then
	echo "FAIL: export --format csv: a formula is written as it is"
	grep -a -h 'HYPERLINK' "$tmp"/csv/*.csv
	fail=1
fi
exit $fail
