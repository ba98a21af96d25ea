#!/bin/sh
# test-install.sh BUILD PREFIX BINDIR LIBEXECDIR: dnntrace installed into a
# staging folder (DESTDIR), then moved elsewhere, still records: it finds
# its shim from where it is, not from where it was meant to be installed.
# The bundled sample calls the real cuDNN, which answers its descriptor
# calls without a GPU.
set -eu
build=$1 prefix=$2 bindir=$3 libexecdir=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

meson install -C "$build" --destdir "$tmp/stage" --no-rebuild --quiet
mv "$tmp/stage$prefix" "$tmp/moved"
rm -rf "$tmp/stage"
case $bindir in /*) bindir=${bindir#"$prefix"/} ;; esac
case $libexecdir in /*) libexecdir=${libexecdir#"$prefix"/} ;; esac
dnntrace=$tmp/moved/$bindir/dnntrace
sample=$tmp/moved/$libexecdir/dnntrace/dnntrace-sample

unset DNNTRACE_LIB LD_PRELOAD
"$dnntrace" record -q -o "$tmp/t.dnnt" -- "$sample" -n 1 >"$tmp/out" 2>&1 || {
	echo "FAIL: the moved dnntrace could not record:"; cat "$tmp/out"; exit 1
}
"$dnntrace" dump "$tmp/t.dnnt" >"$tmp/dump"
calls=$(grep -c '^API_CALL .* cudnnSetTensor4dDescriptor(' "$tmp/dump" || true)
if [ "$calls" -lt 1 ]; then
	echo "FAIL: the trace holds no cudnnSetTensor4dDescriptor call"
	head -20 "$tmp/dump"
	exit 1
fi
# and the demo finds the installed sample there too
"$dnntrace" demo -o "$tmp/demo.dnnt" >"$tmp/out" 2>&1 || {
	echo "FAIL: the moved dnntrace's demo:"; cat "$tmp/out"; exit 1
}
echo "recorded with the moved tree: $calls cudnnSetTensor4dDescriptor calls"
