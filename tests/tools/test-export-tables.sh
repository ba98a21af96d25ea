#!/bin/sh
# `dnntrace export --format sqlite|csv` beyond its numbers (check-export.py
# has those): it needs -o, never overwrites an output, removes what it wrote
# when the disk fills, and keeps to --pid and to the window of --from and
# --to.
# usage: test-export-tables.sh DNNTRACE SYNTH_TRACE API_LISTING
set -u
dnntrace=$1 synth=$2 listing=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "$(dirname "$0")/expect.sh"
ok() { # ok WHAT COMMAND...: the command must succeed
	what=$1
	shift
	"$@" || { echo "FAIL: $what"; fail=1; }
}

mkdir "$tmp/job"
"$synth" "$listing" "$tmp/job" --ranks 2 --steps 200 >/dev/null || exit 1
t="$tmp/job"

expect 0 'sqlite .*one SQLite database' -- export --help
expect 0 'csv .*CSV files' -- export --help
expect 2 'name it with -o' -- export --format sqlite "$t"
expect 2 'name it with -o' -- export --format csv "$t"
expect 2 '--format takes .*sqlite, csv' -- export --format parquet -o "$tmp/x" "$t"

# an existing output is refused before anything is written
: >"$tmp/there.sqlite"
expect 2 'there.sqlite exists; dnntrace export does not overwrite it' -- \
	export --format sqlite -o "$tmp/there.sqlite" "$t"
ok "the refused file is left as it was" test ! -s "$tmp/there.sqlite"
expect 2 'exists and is no folder' -- export --format csv -o "$tmp/there.sqlite" "$t"
expect 0 '' -- export --format csv -o "$tmp/csv" "$t"
expect 2 'csv/[A-Za-z_]*.csv exists' -- export --format csv -o "$tmp/csv" "$t"
ok "a refused CSV export leaves the tables there" test -s "$tmp/csv/CUDNN_EVENTS.csv"

# a full disk (the file size limit, its signal ignored): one sentence,
# exit status 2, and nothing left behind
full() { # full FORMAT OUT
	(trap '' XFSZ; ulimit -f 200; exec "$dnntrace" export --format "$1" -o "$2" "$t") \
		>"$tmp/out" 2>"$tmp/err"
	got=$?
	[ "$got" = 2 ] || { echo "FAIL: export --format $1 to a full disk: exit $got"; fail=1; }
	grep -q "cannot write .*: \(File too large\|database or disk is full\|disk I/O error\)" "$tmp/err" ||
		{ echo "FAIL: export --format $1 to a full disk said:"; cat "$tmp/err"; fail=1; }
	[ "$(wc -l <"$tmp/err")" = 1 ] || { echo "FAIL: more than one sentence:"; cat "$tmp/err"; fail=1; }
	[ ! -e "$2" ] || { echo "FAIL: export --format $1 to a full disk left $2"; fail=1; }
}
full sqlite "$tmp/full.sqlite"
full csv "$tmp/full"

# --force replaces what is there only once the new one is whole: a forced
# export that fails leaves the old file as it was, and nothing beside it
forced_full() { # forced_full FORMAT OUT
	(trap '' XFSZ; ulimit -f 200; exec "$dnntrace" export --format "$1" --force -o "$2" "$t") \
		>/dev/null 2>&1
}
echo old >"$tmp/kept.sqlite"
forced_full sqlite "$tmp/kept.sqlite"
ok "a forced export that failed keeps the old file" test "$(cat "$tmp/kept.sqlite")" = old
ok "and leaves no temporary file" test -z "$(ls -A "$tmp" | grep 'kept.sqlite.')"
expect 0 '' -- export --format sqlite --force -o "$tmp/kept.sqlite" "$t"
ok "a forced export replaces the file" test "$(head -c 6 "$tmp/kept.sqlite")" = SQLite
mkdir "$tmp/keptcsv"
echo old >"$tmp/keptcsv/CUDNN_EVENTS.csv"
forced_full csv "$tmp/keptcsv"
ok "a forced CSV export that failed keeps the old table" test "$(cat "$tmp/keptcsv/CUDNN_EVENTS.csv")" = old
ok "and leaves no temporary file" test -z "$(ls -A "$tmp/keptcsv" | grep -v 'CUDNN_EVENTS.csv$')"

# rows of a table (its CSV file, less the header line)
rows() { echo $(($(wc -l <"$1") - 1)); }

# --pid: one process of the two
pid=$(sed -n '2s/^[0-9]*,\([0-9]*\),.*/\1/p' "$tmp/csv/PROCESSES.csv")
expect 0 '' -- export --format csv --pid "$pid" -o "$tmp/one" "$t"
ok "--pid keeps one process" test "$(rows "$tmp/one/PROCESSES.csv")" = 1
ok "--pid keeps its calls" test "$(rows "$tmp/one/CUDNN_EVENTS.csv")" -gt 0
ok "--pid keeps only its calls" test \
	"$(cut -d, -f5 "$tmp/one/CUDNN_EVENTS.csv" | sort -u | grep -v pid)" = "$pid"
expect 2 'no trace of process 1' -- export --format csv --pid 1 -o "$tmp/none" "$t"
ok "no output for no trace" test ! -e "$tmp/none"

# --from and --to: what meets the window, and only that
expect 0 '' -- export --format csv --from 200ms --to 400ms -o "$tmp/window" "$t"
all=$(rows "$tmp/csv/CUDNN_EVENTS.csv") some=$(rows "$tmp/window/CUDNN_EVENTS.csv")
ok "the window keeps some calls ($some of $all)" test "$some" -gt 0 -a "$some" -lt "$all"
for table in CUDNN_EVENTS CUDNN_OPS CUPTI_ACTIVITY_KIND_KERNEL CUPTI_ACTIVITY_KIND_MEMCPY; do
	out=$(awk -F, 'NR > 1 && ($2 < 2e8 || $1 > 4e8)' "$tmp/window/$table.csv" | head -3)
	ok "$table: rows outside the window: $out" test -z "$out"
	inside=$(awk -F, 'NR > 1 && $2 >= 2e8 && $1 <= 4e8' "$tmp/csv/$table.csv" | wc -l)
	ok "$table: every row of the window" test "$inside" = "$(rows "$tmp/window/$table.csv")"
done
ok "the window keeps every process" test "$(rows "$tmp/window/PROCESSES.csv")" = 2
exit $fail
