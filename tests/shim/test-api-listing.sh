#!/bin/sh
# test-api-listing.sh - regenerate a library's API listing and compare it with the committed one.
#
# Usage: test-api-listing.sh <generator> <description> <include-dir> <committed-listing> [<committed-enums>]
# Exits 0 when they match, 1 with the diff when they do not, 77 (skipped) when the headers in
# <include-dir> are another version of the library than the committed listing describes.
# Honours $PYTHON (default python3) and $CC (default cc).
set -eu

if [ $# -ne 4 ] && [ $# -ne 5 ]; then
	echo "usage: $0 <generator> <description> <include-dir> <committed-listing> [<committed-enums>]" >&2
	exit 2
fi
generator=$1 description=$2 include_dir=$3 committed=$4 enums=${5:-}
name=$(basename "$description" .toml)
listing=$(basename "$committed")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"${PYTHON:-python3}" "$generator" --desc "$description" --include-dir "$include_dir" \
	--out-dir "$tmp" --out-enums "$name=$tmp/enums.c" --cc "${CC:-cc}"

# The first line reads "# <library> <version> API ...".
version() { sed -n '1s/^# [^ ]* \([^ ]*\) API.*/\1/p' "$1"; }
installed=$(version "$tmp/$listing")
listed=$(version "$committed")
if [ "$installed" != "$listed" ]; then
	echo "skipped: $include_dir holds version $installed, $committed describes $listed"
	exit 77
fi

if ! diff -u "$committed" "$tmp/$listing"; then
	echo "$committed is out of date: regenerate it with $generator (--out-dir) and review the diff" >&2
	exit 1
fi
if [ -n "$enums" ] && ! diff -u "$enums" "$tmp/enums.c"; then
	echo "$enums is out of date: regenerate it with $generator (--out-enums $name=PATH)" >&2
	exit 1
fi
