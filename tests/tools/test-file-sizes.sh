#!/bin/sh
# test-file-sizes.sh - no source file of a component grows past a size a
# newcomer can read: each is of one idea, and a file that outgrows the
# limit is split by idea rather than let grow. The files over it when the
# limit came are listed with their length then: they may shrink, never
# grow.
#
# Usage: test-file-sizes.sh SRCDIR
set -u
src=$1
limit=1200 # lines
# FILE LINES: over the limit already; split them when next changed
known="
trace/trace-writer.c 1609
trace/trace-reader.c 1526
cupti/cupti-activity.c 1374
"
cd "$src" || exit 2
rc=0
for f in $(find tools analyzer trace shim cupti -type f \
	\( -name '*.c' -o -name '*.h' -o -name '*.py' -o -name '*.sh' \) | sort); do
	n=$(wc -l <"$f")
	max=$(echo "$known" | awk -v f="$f" -v l="$limit" '
		$1 == f { print $2; found = 1 } END { if (!found) print l }')
	if [ "$n" -gt "$max" ]; then
		if [ "$max" -gt "$limit" ]; then
			echo "FAIL: $f has $n lines, more than its $max: split it by idea rather than let it grow"
		else
			echo "FAIL: $f has $n lines, over the limit of $limit: split it by idea"
		fi
		rc=1
	fi
done
exit $rc
