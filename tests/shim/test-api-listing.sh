#!/bin/sh
# test-api-listing.sh - regenerate the cuDNN API listing and compare it with the committed one.
#
# Usage: test-api-listing.sh <generator> <annotations> <include-dir> <committed-listing> [<committed-enums>]
# Exits 0 when they match, 1 with the diff when they do not, 77 (skipped) when the headers in
# <include-dir> are another cuDNN version than the committed listing describes. Honours $PYTHON
# (default python3) and $CC (default cc).
set -eu

if [ $# -ne 4 ] && [ $# -ne 5 ]; then
	echo "usage: $0 <generator> <annotations> <include-dir> <committed-listing> [<committed-enums>]" >&2
	exit 2
fi
generator=$1 annotations=$2 include_dir=$3 committed=$4 enums=${5:-}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"${PYTHON:-python3}" "$generator" --include-dir "$include_dir" --annotations "$annotations" \
	--out-c "$tmp/dt-wrappers.c" --out-h "$tmp/dt-api.h" --out-list "$tmp/cudnn-api.txt" \
	--out-enums "$tmp/cudnn-enums.c" \
	--cc "${CC:-cc}"

# The first line reads "# cuDNN <version> API ...".
version() { sed -n '1s/^# cuDNN \([^ ]*\) API.*/\1/p' "$1"; }
installed=$(version "$tmp/cudnn-api.txt")
listed=$(version "$committed")
if [ "$installed" != "$listed" ]; then
	echo "skipped: $include_dir holds cuDNN $installed, $committed describes cuDNN $listed"
	exit 77
fi

if ! diff -u "$committed" "$tmp/cudnn-api.txt"; then
	echo "$committed is out of date: regenerate it with $generator (--out-list) and review the diff" >&2
	exit 1
fi
if [ -n "$enums" ] && ! diff -u "$enums" "$tmp/cudnn-enums.c"; then
	echo "$enums is out of date: regenerate it with $generator (--out-enums)" >&2
	exit 1
fi
