#!/bin/sh
# libdnntrace.so on real programs calling the real libcudnn (no GPU needed):
# every call recorded once with its arguments and outputs, dlopen+dlsym
# callers, threads, fork, SIGTERM, exec and DNNTRACE_DISABLE.
# usage: test-shim.sh DNNTRACE LIBDNNTRACE SHIM_CALLS SHIM_DLOPEN CUDNN_LIBDIR NEXT_HOOK
set -u
dnntrace=$1 shim=$2 calls=$3 dlopen_prog=$4 cudnn_libdir=$5 next_hook=$6
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export LD_LIBRARY_PATH="$cudnn_libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fail=0

bad() { echo "FAIL: $*"; fail=1; }

# has FILE PATTERN: the dump of FILE has a line matching the extended regex
has() {
	"$dnntrace" dump "$1" >"$tmp/dump" 2>&1 || bad "dump $1"
	grep -Eq -- "$2" "$tmp/dump" || { bad "no line matches: $2"; sed 's/^/    /' "$tmp/dump" | head -50; }
}
# count FILE: number of calls recorded
count() { "$dnntrace" dump "$1" | grep -c '^API_CALL'; }
# only FILE-GLOB: exactly one file matches; prints it
only() {
	set -- $1
	[ $# = 1 ] && [ -f "$1" ] || { bad "expected one trace, found: $*"; return 1; }
	echo "$1"
}

# --- one of each kind of argument ------------------------------------
"$dnntrace" record -q -o "$tmp/calls-%p.dnnt" -- "$calls" calls >/dev/null || bad "calls mode failed"
f=$(only "$tmp/calls-*.dnnt") && {
	n=$(count "$f"); [ "$n" = 24 ] || bad "calls: $n calls recorded, expected 24"
	has "$f" '^API_CALL seq=1 .* cudnnGetVersion\(return=[0-9]{5}\) = CUDNN_STATUS_SUCCESS$'
	has "$f" ' cudnnGetErrorString\(status=CUDNN_STATUS_BAD_PARAM, return="CUDNN_STATUS_BAD_PARAM"\) = CUDNN_STATUS_SUCCESS$'
	has "$f" ' cudnnCreateTensorDescriptor\(tensorDesc=>0x[0-9a-f]+\) = CUDNN_STATUS_SUCCESS$'
	has "$f" ' cudnnSetTensor4dDescriptor\(tensorDesc=0x[0-9a-f]+, format=CUDNN_TENSOR_NHWC, dataType=CUDNN_DATA_HALF, n=8, c=16, h=32, w=64\) = CUDNN_STATUS_SUCCESS$'
	has "$f" ' cudnnSetTensorNdDescriptor\(tensorDesc=0x[0-9a-f]+, dataType=CUDNN_DATA_FLOAT, nbDims=4, dimA=\[2,3,4,5\], strideA=\[60,20,5,1\]\) = CUDNN_STATUS_SUCCESS$'
	has "$f" ' cudnnGetTensorNdDescriptor\(tensorDesc=0x[0-9a-f]+, nbDimsRequested=4, dataType=>CUDNN_DATA_FLOAT, nbDims=>4, dimA=>\[2,3,4,5\], strideA=>\[60,20,5,1\]\) = CUDNN_STATUS_SUCCESS$'
	has "$f" ' cudnnSetTensor4dDescriptor\(tensorDesc=0x[0-9a-f]+, format=CUDNN_TENSOR_NCHW, dataType=CUDNN_DATA_FLOAT, n=-1, c=1, h=1, w=1\) = CUDNN_STATUS_BAD_PARAM$'
	has "$f" ' cudnnSetConvolutionNdDescriptor\(convDesc=0x[0-9a-f]+, arrayLength=2, padA=\[1,2\], filterStrideA=\[3,4\], dilationA=\[1,1\], mode=CUDNN_CROSS_CORRELATION, computeType=CUDNN_DATA_FLOAT\) = CUDNN_STATUS_SUCCESS$'
	has "$f" ' cudnnSetConvolutionGroupCount\(convDesc=0x[0-9a-f]+, groupCount=4\) = CUDNN_STATUS_SUCCESS$'
	has "$f" ' cudnnBackendCreateDescriptor\(descriptorType=CUDNN_BACKEND_TENSOR_DESCRIPTOR, descriptor=>0x[0-9a-f]+\) = CUDNN_STATUS_SUCCESS$'
	has "$f" ' cudnnBackendSetAttribute\(descriptor=0x[0-9a-f]+, attributeName=CUDNN_ATTR_TENSOR_DATA_TYPE, attributeType=CUDNN_TYPE_DATA_TYPE, elementCount=1, arrayOfElements=CUDNN_DATA_BFLOAT16\) = CUDNN_STATUS_SUCCESS$'
	has "$f" ' cudnnBackendSetAttribute\(descriptor=0x[0-9a-f]+, attributeName=CUDNN_ATTR_TENSOR_STRIDES, attributeType=CUDNN_TYPE_INT64, elementCount=4, arrayOfElements=\[2048,1,128,8\]\) = CUDNN_STATUS_SUCCESS$'
	has "$f" ' cudnnBackendGetAttribute\(descriptor=0x[0-9a-f]+, attributeName=CUDNN_ATTR_TENSOR_DIMENSIONS, attributeType=CUDNN_TYPE_INT64, requestedElementCount=4, elementCount=>4, arrayOfElements=>\[1,8,16,16\]\) = CUDNN_STATUS_SUCCESS$'
	# a plan's 100 000-character JSON representation is recorded whole: the
	# trace holds it (it does not compress below 50 000 bytes)
	has "$f" ' cudnnBackendSetAttribute\(descriptor=0x[0-9a-f]+, attributeName=CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, attributeType=CUDNN_TYPE_CHAR, elementCount=100000, '
	[ "$(wc -c <"$f")" -gt 50000 ] || bad "calls: the plan's JSON was not recorded whole ($(wc -c <"$f") bytes of trace)"
	# the created handle is the one later calls use
	h=$(grep -Eo 'cudnnBackendCreateDescriptor\(descriptorType=CUDNN_BACKEND_TENSOR_DESCRIPTOR, descriptor=>0x[0-9a-f]+' "$tmp/dump" | sed 's/.*=>//')
	grep -q "cudnnBackendFinalize(descriptor=$h) = CUDNN_STATUS_SUCCESS" "$tmp/dump" || bad "finalize of $h not found"
	"$dnntrace" info "$f" >"$tmp/info" || bad "info failed"
	grep -q '^ended: *clean (exit 0)' "$tmp/info" || bad "calls: not a clean end: $(cat "$tmp/info")"
	# the version cuDNN gives (cudnnGetVersion) and the one built against
	grep -q '^cuDNN: *9\.[0-9]*\.[0-9]*, built against 9\.[0-9]*\.[0-9]*, loaded .*libcudnn.so' "$tmp/info" || bad "info lacks the cuDNN line"
	# no GPU here: the header says GPU activity is off, and why
	grep -q '^GPU trace: *off: ' "$tmp/info" || bad "info lacks 'GPU trace: off: <why>': $(grep GPU "$tmp/info")"
	if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
		grep -q '^GPU trace: *off: no GPU visible (no CUDA driver: libcuda.so.1 not found)$' "$tmp/info" ||
			bad "no driver, and info does not say so: $(grep GPU "$tmp/info")"
	fi
	gpu_state=$(grep '^GPU trace:' "$tmp/info")
}

# --- the GPU state in the header is the one CUPTI ended in, whichever thread
# started it: threads that call at once wait for it ---------------------------
for i in 1 2 3 4 5 6 7 8 9 10; do
	"$dnntrace" record -q -o "$tmp/gs-%p.dnnt" -- "$calls" threads 6 10 || bad "threads mode failed"
done
for f in "$tmp"/gs-*.dnnt; do
	got=$("$dnntrace" info "$f" | grep '^GPU trace:')
	[ "$got" = "$gpu_state" ] || bad "$(basename "$f"): '$got', expected '$gpu_state'"
done
# the toolkit's stub libcuda is no driver either
if [ -f "$cudnn_libdir/stubs/libcuda.so" ]; then
	mkdir "$tmp/stub"
	ln -s "$cudnn_libdir/stubs/libcuda.so" "$tmp/stub/libcuda.so.1"
	LD_LIBRARY_PATH="$tmp/stub:$LD_LIBRARY_PATH" "$dnntrace" record -q -o "$tmp/stub-%p.dnnt" -- "$calls" calls >/dev/null
	f=$(only "$tmp/stub-*.dnnt") &&
		{ "$dnntrace" info "$f" | grep -q "^GPU trace: *off: no GPU visible (libcuda.so.1 is the toolkit's stub" ||
			bad "stub driver: $("$dnntrace" info "$f" | grep GPU)"; }
fi
DNNTRACE_CUPTI=0 "$dnntrace" record -q -o "$tmp/nocupti-%p.dnnt" -- "$calls" calls >/dev/null || bad "DNNTRACE_CUPTI=0 run failed"
f=$(only "$tmp/nocupti-*.dnnt") && {
	"$dnntrace" info "$f" | grep -q '^GPU trace: *off: switched off (DNNTRACE_CUPTI=0)' || bad "DNNTRACE_CUPTI=0 not reported"
}

# --- dlopen + dlsym, as XLA does ---------------------------------------
DNNTRACE_OUTPUT="$tmp/dl-%p.dnnt" LD_PRELOAD="$shim" "$dlopen_prog" "$cudnn_libdir/libcudnn.so.9" >/dev/null ||
	bad "dlopen program failed"
f=$(only "$tmp/dl-*.dnnt") && {
	n=$(count "$f"); [ "$n" = 3 ] || bad "dlopen: $n calls recorded, expected 3"
	has "$f" ' cudnnSetTensor4dDescriptor\(tensorDesc=0x[0-9a-f]+, format=CUDNN_TENSOR_NCHW, dataType=CUDNN_DATA_FLOAT, n=7, c=7, h=7, w=7\) = CUDNN_STATUS_SUCCESS$'
}

# --- dlsym(RTLD_NEXT) keeps its meaning for other preloaded libraries ------
out=$(DNNTRACE_OUTPUT="$tmp/next-%p.dnnt" LD_PRELOAD="$shim:$next_hook" "$dlopen_prog" "$cudnn_libdir/libcudnn.so.9" 2>&1)
[ "$out" = "[hooked] dlopen calls made" ] || bad "RTLD_NEXT through the shim's dlsym: $out"

# --- threads: every call of every thread, none twice -------------------
"$dnntrace" record -q -o "$tmp/th-%p.dnnt" -- "$calls" threads 6 2000 || bad "threads mode failed"
f=$(only "$tmp/th-*.dnnt") && {
	n=$(count "$f"); [ "$n" = 36000 ] || bad "threads: $n calls, expected 36000"
	tids=$("$dnntrace" dump "$f" | grep '^API_CALL' | sed 's/.* tid=\([0-9]*\) .*/\1/' | sort | uniq -c | awk '$1 == 6000' | wc -l)
	[ "$tids" = 6 ] || bad "threads: expected 6 threads of 6000 calls, got $tids"
	seqs=$("$dnntrace" dump "$f" | grep '^API_CALL' | sed 's/^API_CALL seq=\([0-9]*\) .*/\1/' | sort -n | uniq | wc -l)
	[ "$seqs" = 36000 ] || bad "threads: $seqs distinct sequence numbers, expected 36000"
}

# --- fork: the child writes its own file --------------------------------
"$dnntrace" record -q -o "$tmp/fork-%p.dnnt" -- "$calls" fork || bad "fork mode failed"
set -- "$tmp"/fork-*.dnnt
if [ $# = 2 ]; then
	for f in "$@"; do
		n=$(count "$f")
		case $n in
		7) has "$f" 'cudnnSetTensorNdDescriptor'; has "$f" 'cudnnBackendFinalize' ;; # parent: 6 + 12
		8) has "$f" 'cudnnSetConvolutionNdDescriptor' ;;                          # child: 2 x 4
		18) has "$f" 'cudnnBackendFinalize' ;;
		*) bad "fork: a file with $n calls" ;;
		esac
		"$dnntrace" info "$f" | grep -q '^ended: *clean' || bad "fork: $f not clean"
	done
	ns=$(for f in "$@"; do count "$f"; done | sort -n | tr '\n' ' ')
	[ "$ns" = "8 18 " ] || bad "fork: call counts $ns, expected 8 (child) and 18 (parent)"
else
	bad "fork: expected 2 traces, found $#"
fi

# --- SIGTERM leaves a complete file --------------------------------------
"$dnntrace" record -q -o "$tmp/term-%p.dnnt" -- "$calls" sigterm
[ $? = 143 ] || bad "sigterm: exit status not 128+15"
f=$(only "$tmp/term-*.dnnt") && {
	n=$(count "$f"); [ "$n" = 6 ] || bad "sigterm: $n calls, expected 6"
	"$dnntrace" info "$f" | grep -q '^ended: *clean (signal 15)' || bad "sigterm: $("$dnntrace" info "$f" | grep ended)"
}

# --- SIGKILL: everything flushed before it is readable ---------------------
DNNTRACE_OUTPUT="$tmp/kill-%p.dnnt" LD_PRELOAD="$shim" "$calls" sleep &
pid=$!
sleep 2 # more than DNNTRACE_FLUSH_MS (500 ms) after the calls
kill -9 $pid
wait $pid 2>/dev/null
f=$(only "$tmp/kill-*.dnnt") && {
	n=$(count "$f"); [ "$n" = 6 ] || bad "sigkill: $n calls, expected 6"
	"$dnntrace" info "$f" | grep -q '^ended: *incomplete' || bad "sigkill: $("$dnntrace" info "$f" | grep ended)"
}

# --- the exit status, when main returns it -----------------------------------
"$dnntrace" record -q -o "$tmp/ret-%p.dnnt" -- "$calls" ret3
[ $? = 3 ] || bad "ret3: exit status not 3"
f=$(only "$tmp/ret-*.dnnt") && {
	"$dnntrace" info "$f" | grep -q '^ended: *clean (exit 3)' || bad "ret3: $("$dnntrace" info "$f" | grep ended)"
}

# --- a vfork child's exec leaves the parent's file alone ----------------------
"$dnntrace" record -q -o "$tmp/vfork-%p.dnnt" -- "$calls" vfork || bad "vfork mode failed"
f=$(only "$tmp/vfork-*.dnnt") && {
	n=$(count "$f"); [ "$n" = 10 ] || bad "vfork: $n calls, expected 10"
	"$dnntrace" info "$f" | grep -q '^ended: *clean (exit 0)' || bad "vfork: $("$dnntrace" info "$f" | grep ended)"
}

# --- threads still calling while main exits: one file, complete --------------
"$dnntrace" record -q -o "$tmp/race-%p.dnnt" -- "$calls" exitrace || bad "exitrace mode failed"
f=$(only "$tmp/race-*.dnnt") && {
	"$dnntrace" info "$f" | grep -q '^ended: *clean (exit 0)' || bad "exitrace: $("$dnntrace" info "$f" | grep ended)"
}

# --- exec finishes the file first ------------------------------------------
"$dnntrace" record -q -o "$tmp/exec-%p.dnnt" -- "$calls" exec || bad "exec mode failed"
f=$(only "$tmp/exec-*.dnnt") && {
	n=$(count "$f"); [ "$n" = 4 ] || bad "exec: $n calls, expected 4"
	"$dnntrace" info "$f" | grep -q '^ended: *clean (exec 0)' || bad "exec: $("$dnntrace" info "$f" | grep ended)"
}

# --- bad numbers in the environment: one warning each, defaults used ---------
DNNTRACE_BUFFER_SIZE=-5 DNNTRACE_FLUSH_MS=-1 DNNTRACE_OUTPUT="$tmp/env-%p.dnnt" LD_PRELOAD="$shim" "$calls" ret3 >/dev/null 2>"$tmp/err"
grep -q 'ignoring DNNTRACE_BUFFER_SIZE=-5: not a size' "$tmp/err" || bad "DNNTRACE_BUFFER_SIZE=-5 taken: $(cat "$tmp/err")"
grep -q 'ignoring DNNTRACE_FLUSH_MS=-1: not a number' "$tmp/err" || bad "DNNTRACE_FLUSH_MS=-1 taken: $(cat "$tmp/err")"

# --- DNNTRACE_DISABLE: pure forwarding, no file ----------------------------
DNNTRACE_DISABLE=1 "$dnntrace" record -q -o "$tmp/off-%p.dnnt" -- "$calls" calls >/dev/null || bad "disabled run failed"
set -- "$tmp"/off-*.dnnt
[ -e "$1" ] && bad "DNNTRACE_DISABLE=1 still wrote $*"

# --- CUDA's injection: set by record, unless another tool injects -----------
inj() { env -u CUDA_INJECTION64_PATH $(env | sed -n 's/^\(NV_NSIGHT_INJECTION_[A-Z_]*\)=.*/-u \1/p') "$@" \
	"$dnntrace" record -q -o "$tmp/inj-%p.dnnt" -- sh -c 'echo "${CUDA_INJECTION64_PATH-unset}"'; }
case $(inj) in
*/libdnntrace.so) ;; *) bad "record did not point CUDA_INJECTION64_PATH at the shim: $(inj)" ;;
esac
[ "$(inj CUDA_INJECTION64_PATH=/nsys/libToolsInjection64.so)" = /nsys/libToolsInjection64.so ] ||
	bad "record replaced another tool's CUDA_INJECTION64_PATH"
# Nsight Compute injects without it and refuses to run when it is set
[ "$(inj NV_NSIGHT_INJECTION_TRANSPORT_TYPE=uds)" = unset ] ||
	bad "record set CUDA_INJECTION64_PATH under Nsight Compute"

[ $fail = 0 ] && echo "shim: all checks passed"
exit $fail
