# test-lib.sh - what the shim's test scripts share; sourced once dnntrace
# and cudnn_libdir are set: a scratch folder removed at exit, cuDNN on the
# loader's path, and helpers that report failures and read traces.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export LD_LIBRARY_PATH="$cudnn_libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fail=0

bad() { echo "FAIL: $*"; fail=1; }
# count TRACE: the calls it holds
count() { "$dnntrace" dump "$1" | grep -c '^API_CALL'; }
# info_of TRACE LABEL: the value of one line of `dnntrace info`
info_of() { "$dnntrace" info "$1" | sed -n "s/^$2: *//p"; }
