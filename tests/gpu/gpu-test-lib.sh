# gpu-test-lib.sh - sourced by tests/gpu's shell checks of a CUDA program
# ($prog): a scratch folder ($tmp) removed at exit, the program run once on
# its own (exit 77: no usable GPU, and the check skips with it), and
# fail=0 for the checks to set.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$prog" >/dev/null 2>&1
[ $? = 77 ] && { echo "no GPU: skipped"; exit 77; }
fail=0
