#!/bin/sh
# The dnntrace command's error paths: bad usage and unreadable or foreign
# input give one sentence on stderr and exit status 2; --help exits 0.
set -u
dnntrace=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "$(dirname "$0")/expect.sh"

printf 'not a trace, just text\n' >"$tmp/text.dnnt"
mkdir "$tmp/emptydir"
: >"$tmp/empty.dnnt"
printf '\120\052\115\030\004\000\000\000ABCD' >"$tmp/skippable.dnnt"

expect 2 'usage: dnntrace' --
expect 2 "'frobnicate' is not a dnntrace command" -- frobnicate
expect 0 'usage: dnntrace <command>' -- --help
expect 0 'usage: dnntrace dump' -- help dump
expect 0 'dnntrace [0-9]' -- --version
expect 0 '^dnntrace [0-9]' -- -V
expect 2 'expected a trace file' -- info
expect 2 'cannot read .*nonexistent.dnnt: No such file' -- info "$tmp/nonexistent.dnnt"
expect 2 'not a dnntrace file' -- info "$tmp/text.dnnt"
expect 2 'not a dnntrace file' -- dump "$tmp/empty.dnnt"
expect 2 'not a dnntrace file' -- dump "$tmp/skippable.dnnt"
expect 2 'cannot read' -- dump "$tmp"
expect_usage "dump: unknown option '--bogus'$" -- dump --bogus "$tmp/text.dnnt"
expect_usage "report: unknown option '-x'$" -- report -x "$tmp/text.dnnt"
expect_usage 'report: --top needs a value$' -- report --top
expect_usage 'report: --wide takes no value$' -- report --wide=3 "$tmp/text.dnnt"
expect_usage "report: '--p' is ambiguous$" -- report --p 1 "$tmp/text.dnnt"
expect_usage "record: unknown option '-x'$" -- record -x -- true
expect_usage 'record: -o needs a value$' -- record -o
expect_usage "export: unknown option '--bogus'$" -- export --bogus
expect_usage "diff: unknown option '--bogus'$" -- diff --bogus a b
expect_usage "fusion: unknown option '--bogus'$" -- fusion --bogus a
expect_usage "ops: unknown option '--bogus'$" -- ops --bogus a
expect_usage "info: unknown option '--bogus'$" -- info --bogus a
expect_usage "demo: unknown option '--bogus'$" -- demo --bogus
expect 2 'expected one trace file' -- dump
expect 2 '--calls takes a number' -- info --calls x "$tmp/text.dnnt"
expect 2 'expected a trace file or a folder' -- report
expect 2 'not a dnntrace file' -- report "$tmp/text.dnnt"
expect 2 'no .dnnt files in this folder' -- report "$tmp/emptydir"
expect 2 '--format takes text, markdown, json or html' -- report --format xml "$tmp/text.dnnt"
expect 2 '--sort takes gpu, count' -- report --sort speed "$tmp/text.dnnt"
expect 2 '--peak-flops takes' -- report --peak-flops bf17=3T "$tmp/text.dnnt"
expect 2 '--peak-flops takes' -- report --peak-flops fast "$tmp/text.dnnt"
expect 2 '--peak-bandwidth takes' -- report --peak-bandwidth 4.8X "$tmp/text.dnnt"
# peaks a GPU can have: 1 GB/s to 1 PB/s, 1 GFLOP/s to 1 EFLOP/s
expect_usage '--peak-bandwidth takes bytes per second from 1G to 1P' -- report --peak-bandwidth 1 "$tmp/text.dnnt"
expect_usage '--peak-bandwidth takes bytes per second from 1G to 1P' -- report --peak-bandwidth 2P "$tmp/text.dnnt"
expect_usage '--peak-flops takes FLOP/s from 1G to 1000P' -- report --peak-flops 1 "$tmp/text.dnnt"
expect_usage '--peak-flops takes FLOP/s from 1G to 1000P' -- report --peak-flops bf16=989T,fp32=1e19 "$tmp/text.dnnt"
expect 2 'not a dnntrace file' -- report --peak-bandwidth 4.8T --peak-flops bf16=989T "$tmp/text.dnnt"
expect 2 '--top takes a number' -- report --top -3 "$tmp/text.dnnt"
expect_usage '--top takes a number from 0 to' -- report --top 99999999999999999999 "$tmp/text.dnnt"
expect_usage '--bandwidth takes bytes per second from 1G to 1P' -- fusion --bandwidth 1 "$tmp/text.dnnt"
expect_usage '--threshold takes a percentage above 0 and up to 1000%' -- diff --threshold 1e300 a b
expect_usage '--min-time takes a time up to 3600s' -- diff --min-time 1e30s a b
expect_usage '--calls takes a number' -- info --calls 99999999999999999999 "$tmp/text.dnnt"
expect_usage "--call takes a call's seq number" -- ops --call 99999999999999999999 "$tmp/text.dnnt"
expect_usage '--pid takes a process id' -- export --format sqlite --pid 99999999999 "$tmp/text.dnnt"
expect_usage '-n takes a number of iterations from 1 to 1000000' -- demo -n 0
expect 0 'usage: dnntrace report' -- report --help
expect 2 'expected a trace file or a folder' -- fusion
expect 2 'not a dnntrace file' -- fusion "$tmp/text.dnnt"
expect 2 '--format takes text or json' -- fusion --format xml "$tmp/text.dnnt"
expect 2 '--bandwidth takes bytes per second' -- fusion --bandwidth fast "$tmp/text.dnnt"
expect 2 '--top takes a number' -- fusion --top -1 "$tmp/text.dnnt"
expect 0 'usage: dnntrace fusion' -- fusion --help
expect 2 'expected BASE and NEW' -- diff "$tmp/text.dnnt"
expect 2 'not a dnntrace file' -- diff "$tmp/text.dnnt" "$tmp/text.dnnt"
expect 2 'cannot read' -- diff "$tmp/nonexistent.dnnt" "$tmp/text.dnnt"
expect 2 '--fail-on takes regression' -- diff --fail-on slowdown a b
expect 2 '--threshold takes a percentage' -- diff --threshold x a b
expect 2 '--min-time takes a time' -- diff --min-time 10parsecs a b
expect 2 '--format takes text, markdown, json or html' -- diff --format xml a b
expect 0 'usage: dnntrace diff' -- diff --help
expect 2 'expected one trace file' -- ops
expect 2 'expected a trace or a folder' -- kernels
expect 2 '--format takes text, json or csv' -- kernels --format html "$tmp/text.dnnt"
expect 2 '--top takes a number' -- kernels --top -1 "$tmp/text.dnnt"
expect 2 'not a dnntrace file' -- kernels "$tmp/text.dnnt"
expect 0 'usage: dnntrace kernels' -- kernels --help
expect 2 '--format takes text or json' -- ops --format xml "$tmp/text.dnnt"
expect 2 'expected a command to run' -- record
expect 2 'bad output template' -- record -o 'x%z' -- true
expect 0 'usage: dnntrace record' -- record --help
expect 2 '--buffer-size takes a size from 64K to 1G' -- record --buffer-size -5 -- true
expect 2 '--buffer-size takes a size' -- record --buffer-size 2G -- true
expect 2 '--buffer-size takes a size' -- record --buffer-size 1.5M -- true
expect 2 '--buffer-size takes a size' -- record --buffer-size 4K -- true
expect 2 '--flush-ms takes a number of milliseconds' -- record --flush-ms -1 -- true
expect 2 '--flush-ms takes a number of milliseconds' -- record --flush-ms 0 -- true
expect 2 '--flush-ms takes a number of milliseconds' -- record --flush-ms 10x -- true
expect 2 '--gpu takes kernel, memcpy and memset' -- record --gpu lens -- true
expect 2 '--gpu takes kernel, memcpy and memset' -- record --gpu kernel,,memset -- true
expect 2 '--gpu takes kernel, memcpy and memset' -- record --gpu kernels -- true
expect 0 'no trace written' -- record --buffer-size 64K --flush-ms 100 --gpu kernel,memset -o "$tmp/t-%p.dnnt" -- true
expect 0 'no trace written' -- record --buffer-size 4MiB --gpu none -o "$tmp/t-%p.dnnt" -- true
expect 127 'cannot run' -- record -q -- "$tmp/no-such-program"
expect 127 'cannot run dnntrace-no-such-command: no such command in PATH' -- record -- dnntrace-no-such-command
expect 126 'cannot run .*text.dnnt: Permission denied' -- record -- "$tmp/text.dnnt"
expect 2 'is a device or a pipe, not a trace file or a folder' -- record -o /dev/null -- true
expect 2 'cannot write traces in .*text.dnnt: Not a directory' -- record -o "$tmp/text.dnnt/t.dnnt" -- true
expect 0 'no trace written' -- record -o "$tmp/t-%p.dnnt" -- true

[ $fail = 0 ] && echo "all error paths behave"
exit $fail
