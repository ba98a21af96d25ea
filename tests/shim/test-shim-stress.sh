#!/bin/sh
# Many threads making many cheap cuDNN calls into small buffers: every call
# made is in the trace or counted as lost, exactly, thread by thread; sized
# to take a few seconds on a 2-core machine.
# usage: test-shim-stress.sh DNNTRACE SHIM_CALLS CUDNN_LIBDIR
set -u
dnntrace=$1 calls=$2 cudnn_libdir=$3
. "$(dirname "$0")/test-lib.sh"
threads=16 iterations=8000 # 3 calls each


for buffer in 64K 256K 4M; do
	"$dnntrace" record -q --buffer-size $buffer -o "$tmp/s$buffer-%p.dnnt" -- \
		"$calls" threads $threads $iterations || bad "$buffer: exit status $?"
	set -- "$tmp/s$buffer"-*.dnnt
	[ -f "$1" ] || { bad "$buffer: no trace"; continue; }
	"$dnntrace" dump "$1" >"$tmp/dump" || bad "$buffer: dump failed"
	# per thread: calls recorded + calls counted lost; and the totals
	awk -v want=$((iterations * 3)) -v threads=$threads '
		function field(name,   i) {
			for (i = 2; i <= NF; i++)
				if (index($i, name "=") == 1)
					return substr($i, length(name) + 2)
		}
		/^API_CALL / { n[field("tid")]++; made++ }
		/^LOSS / && field("reason") != 5 { n[field("tid")] += field("count"); lost += field("count") }
		END {
			for (t in n) {
				seen++
				if (n[t] != want) { print "thread " t ": " n[t] " calls recorded or lost, made " want; bad = 1 }
			}
			if (seen != threads) { print seen " threads, expected " threads; bad = 1 }
			print made " recorded, " lost + 0 " lost"
			exit bad
		}' "$tmp/dump" >"$tmp/sum" || bad "$buffer: $(cat "$tmp/sum")"
	recorded=$(info_of "$1" records | sed -n 's/.*(\([0-9]*\) calls.*/\1/p')
	lost=$(info_of "$1" lost | sed 's/ .*//')
	[ $((recorded + lost)) = $((threads * iterations * 3)) ] ||
		bad "$buffer: info says $recorded calls and $lost lost, made $((threads * iterations * 3))"
	[ "$(info_of "$1" ended)" = "clean (exit 0)" ] || bad "$buffer: not a clean end"
	echo "$buffer: $(tail -1 "$tmp/sum")"
done

# Memory grows with threads only as their records need it: 200 threads of
# one call each add far less than their 1 MiB rings.
kib=$("$dnntrace" record -q -o "$tmp/rss-%p.dnnt" -- "$calls" rss 200 | sed -n 's/ KiB per thread//p')
plain=$("$calls" rss 200 | sed -n 's/ KiB per thread//p')
echo "rss: $kib KiB per recording thread ($plain KiB without recording)"
[ -n "$kib" ] && [ "$kib" -lt 256 ] || bad "rss: ${kib:-?} KiB per thread, a quarter of the 1 MiB ring or more"
set -- "$tmp"/rss-*.dnnt
[ "$(count "$1")" = $((201 * 3)) ] || bad "rss: $(count "$1") calls recorded, expected $((201 * 3))"

[ $fail = 0 ] && echo "stress: all checks passed"
exit $fail
