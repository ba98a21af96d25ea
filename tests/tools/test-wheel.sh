#!/bin/sh
# test-wheel.sh PYTHON COMMAND...: the wheel COMMAND writes (into the
# folder appended to it: python/build-wheel.py's command) installs into a
# fresh virtual environment of PYTHON without the network, and there
#   - `dnntrace` is on PATH, and records the bundled sample with the shim
#     installed beside it (the real cuDNN answers its descriptor calls
#     without a GPU);
#   - `python -m dnntrace record -- python ...` records a Python program
#     that marks a region (in its own trace, as an NVTX range) and runs
#     the sample, and sees dnntrace.recording();
#     `python -m dnntrace` exits with the command's status;
#   - outside a recording, dnntrace.recording() is False, and
#     dnntrace.region, as a block and as a decorator, runs what it marks;
#     with the NVTX tool $NVTX_TOOL loaded (nvtx-tool.c, as NVTX loads
#     Nsight Systems), each region is pushed and popped there by name.
# Skipped (77) when PYTHON cannot make a virtual environment with pip
# (Debian: python3-venv; tools/setup.sh installs it).
set -eu
python=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset DNNTRACE_LIB LD_PRELOAD LD_LIBRARY_PATH CUDA_INJECTION64_PATH PIP_INDEX_URL

fail() {
	echo "FAIL: $*"
	exit 1
}

"$python" -c 'import ensurepip' 2>/dev/null || {
	echo "SKIP: $python cannot make a virtual environment with pip"
	exit 77
}

wheel=$("$@" "$tmp/dist") || fail "the wheel was not built"
case ${wheel##*/} in
dnntrace-*-cp38-abi3-linux_x86_64.whl) ;;
*) fail "unexpected wheel name ${wheel##*/}" ;;
esac
"$python" -m venv "$tmp/venv"
venv=$tmp/venv
"$venv/bin/python" -m pip install -q --no-index --no-cache-dir "$wheel" ||
	fail "pip install --no-index $wheel failed"
PATH=$venv/bin:$PATH
export PATH
[ "$(command -v dnntrace)" = "$venv/bin/dnntrace" ] ||
	fail "dnntrace on PATH is $(command -v dnntrace), not the venv's"
sample=$(find "$venv" -name dnntrace-sample -type f)
[ -x "$sample" ] || fail "the wheel holds no runnable dnntrace-sample"

# has_sample_calls TRACE: it holds the sample's descriptor calls
has_sample_calls() {
	dnntrace dump "$1" >"$tmp/dump" || fail "cannot dump $1"
	calls=$(grep -c '^API_CALL .* cudnnSetTensor4dDescriptor(' "$tmp/dump" || true)
	[ "$calls" -ge 1 ] || fail "$1 holds no cudnnSetTensor4dDescriptor call"
}

test_cli() {
	dnntrace record --help | grep -q "LD_PRELOAD=$venv/.*/libdnntrace.so" ||
		fail "dnntrace does not find the shim installed with it"
	dnntrace record -q -o "$tmp/cli.dnnt" -- "$sample" -n 1 >"$tmp/out" 2>&1 ||
		fail "dnntrace record failed: $(cat "$tmp/out")"
	has_sample_calls "$tmp/cli.dnnt"
	echo "dnntrace record: $calls cudnnSetTensor4dDescriptor calls"
}

test_python_m() {
	cat >"$tmp/train.py" <<'PY'
import subprocess, sys
import dnntrace

assert dnntrace.recording(), "recorded, but dnntrace.recording() is False"
with dnntrace.region("step"):
    subprocess.run([sys.argv[1], "-n", "1"], check=True, capture_output=True)
PY
	python -m dnntrace record -q -o "$tmp/py/" -- python "$tmp/train.py" "$sample" \
		>"$tmp/out" 2>&1 || fail "python -m dnntrace record failed: $(cat "$tmp/out")"
	set -- "$tmp"/py/*.dnnt
	[ $# = 2 ] || fail "python -m dnntrace record wrote $# traces, not the program's and the sample's"
	# the program's holds its region (an NVTX range), the sample's its calls
	region= sample_trace=
	for f; do
		if dnntrace dump "$f" | grep -q '^NVTX .* event=1 '; then region=$f; else sample_trace=$f; fi
	done
	[ -n "$region" ] && dnntrace dump "$region" | grep -q '^STRING id=[0-9]* "step"$' ||
		fail "the program's region \"step\" was not recorded"
	has_sample_calls "$sample_trace"
	echo "python -m dnntrace record: $calls cudnnSetTensor4dDescriptor calls"
	status=0
	python -m dnntrace record -q -- sh -c 'exit 3' || status=$?
	[ "$status" = 3 ] || fail "python -m dnntrace exited $status, the program 3"
	python -m dnntrace --version | grep -q '^dnntrace ' ||
		fail "python -m dnntrace --version: $(python -m dnntrace --version 2>&1)"
}

test_module() {
	cat >"$tmp/regions.py" <<'PY'
import dnntrace

assert not dnntrace.recording(), "not recorded, but dnntrace.recording()"
with dnntrace.region("step") as r:
    assert r.name == "step"

@dnntrace.region("forward")
def forward(x):
    return x + 1

assert forward(1) == 2 and forward.__name__ == "forward"
try:
    with dnntrace.region("fails"):
        raise KeyError("inside")
except KeyError:
    pass
else:
    raise AssertionError("an exception inside a region was swallowed")
try:
    dnntrace.region(3)
except TypeError:
    pass
else:
    raise AssertionError("a region named by a number")
PY
	python "$tmp/regions.py" >"$tmp/out" 2>&1 ||
		fail "the module's regions: $(cat "$tmp/out")"
	[ ! -s "$tmp/out" ] || fail "regions without an NVTX tool said: $(cat "$tmp/out")"
	NVTX_INJECTION64_PATH=$NVTX_TOOL python "$tmp/regions.py" >"$tmp/out" 2>&1 ||
		fail "the module's regions with an NVTX tool: $(cat "$tmp/out")"
	printf 'nvtx-tool: %s\n' 'push step' pop 'push forward' pop 'push fails' pop >"$tmp/want"
	diff -u "$tmp/want" "$tmp/out" >"$tmp/diff" ||
		fail "the NVTX tool saw other ranges: $(cat "$tmp/diff")"
	echo "dnntrace.region: a block, a decorator, an exception through it; 3 ranges in an NVTX tool"
}

test_cli
test_python_m
test_module
