#!/bin/sh
# How fast `dnntrace export` writes, against `dnntrace report` on the same
# trace: the synthetic trace of bench-report.sh (about 9.6 million
# records), exported as a timeline (Perfetto's protobuf and Chrome's JSON),
# to SQLite and to CSV, each the best of 3 runs
# (interleaved with report's, which the machine's load moves alike), with
# the rows and bytes written.
# usage: bench-export.sh DNNTRACE SYNTH_TRACE API_LISTING [STEPS [OUT_DIR]]
# OUT_DIR (default: a temporary folder) is where the exports go: a tmpfs
# such as /dev/shm leaves the disk out of the numbers.
set -eu
dnntrace=$1 synth=$2 listing=$3 steps=${4:-400000}
tmp=$(mktemp -d)
out=$(mktemp -d "${5:-$tmp}/export.XXXXXX")
trap 'rm -rf "$tmp" "$out"' EXIT

"$synth" "$listing" "$tmp" --ranks 1 --steps "$steps"
t="$tmp/rank0.dnnt"
records=$("$dnntrace" info "$t" | sed -n 's/^records: *\([0-9]*\) .*/\1/p')
echo "dnntrace export on a synthetic trace: $records records, $(wc -c <"$t") bytes"
echo "  on $(nproc) CPUs, writing to $out"

# seconds COMMAND...: its wall time
seconds() {
	s=$(date +%s.%N)
	"$@" >/dev/null
	e=$(date +%s.%N)
	echo "$s $e" | awk '{ printf "%.3f", $2 - $1 }'
}
min() { echo "$1 $2" | awk '{ print ($2 == "" || $1 < $2) ? $1 : $2 }'; }

report= sqlite= csv= perfetto= chrome=
for i in 1 2 3; do
	report=$(min "$(seconds "$dnntrace" report "$t")" "$report")
	perfetto=$(min "$(seconds "$dnntrace" export --format perfetto -o "$out/t.pftrace" "$t")" "$perfetto")
	chrome=$(min "$(seconds "$dnntrace" export --format chrome -o "$out/t.json" "$t")" "$chrome")
	rm -f "$out/t.json"
	rm -rf "$out/t.sqlite" "$out/t"
	sqlite=$(min "$(seconds "$dnntrace" export --format sqlite -o "$out/t.sqlite" "$t")" "$sqlite")
	csv=$(min "$(seconds "$dnntrace" export --format csv -o "$out/t" "$t")" "$csv")
done
rows=0
for f in "$out"/t/*.csv; do
	rows=$((rows + $(wc -l <"$f") - 1))
done
"$dnntrace" export --format chrome -o "$out/t.json" "$t" 2>/dev/null
echo "$report $sqlite $csv $rows $(wc -c <"$out/t.sqlite") $(du -cb "$out"/t/*.csv | tail -1 | cut -f1) $perfetto $(wc -c <"$out/t.pftrace") $chrome $(wc -c <"$out/t.json")" |
	awk '{ printf "  report (with fusion) %.2f s\n  export perfetto      %.2f s (%.1fx report): %.0f MB\n  export chrome        %.2f s (%.1fx report): %.0f MB\n  export sqlite        %.2f s (%.1fx report): %d rows, %.0f MB\n  export csv           %.2f s (%.1fx report): %.0f MB\n",
		$1, $7, $7 / $1, $8 / 1e6, $9, $9 / $1, $10 / 1e6, $2, $2 / $1, $4, $5 / 1e6, $3, $3 / $1, $6 / 1e6 }'
