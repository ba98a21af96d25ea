#!/bin/sh
# Two cases found on real programs, checked against what the program knows
# or what cuDNN logged. Skips (77) without a GPU.
#
#   graph-capture  a conv net captured once with torch.cuda.graph and
#                  replayed (wl_graph_capture.py), the process ending right
#                  after: every replay of both convolutions is an execution
#                  of its call's op, with the kernels of the call's nodes.
#                  Run five times: the trace's order of the replayed kernels
#                  and of the records of the graph's making varies from run
#                  to run;
#   sdpa-decode    fp16 decoding steps (one query), which cuDNN runs as its
#                  unified SDPA forward operation, against cuDNN's API log
#                  (check_ops.py).
#
# usage: check_cases.sh DNNTRACE OUTDIR [graph-capture] [sdpa-decode]
set -u
dnntrace=$1 out=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU: skipped"; exit 77; }
rm -rf "$out" && mkdir -p "$out"
fail=0

graph_capture() {
	for run in 1 2 3 4 5; do
		t=$out/graph-capture-$run.dnnt
		"$dnntrace" record -q -o "$t" -- python3 "$here/wl_graph_capture.py" \
			>"$out/graph-capture-$run.out" 2>&1
		rc=$?
		[ $rc = 77 ] && { echo "graph-capture: skipped"; return; }
		[ $rc = 0 ] || { echo "FAIL: graph-capture: run $run exited $rc"; fail=1; continue; }
		# the kernel nodes the convolutions' calls made (the engine's
		# layout conversions and GEMM): each replay runs every one
		nodes=$("$dnntrace" dump "$t" | grep -c '^GRAPH_NODE .* node_type=0 ')
		"$dnntrace" report --format json "$t" >"$out/graph-capture-$run.json" &&
			python3 - "$out/graph-capture-$run.out" "$out/graph-capture-$run.json" $run $nodes <<'PY' || fail=1
import json, re, sys
convs, replays = map(int, re.search(r"CAPTURED convs=(\d+) replays=(\d+)", open(sys.argv[1]).read()).groups())
g = json.load(open(sys.argv[2]))["graphs"]
want = {"captured": convs, "replays": convs * replays, "partial": 0, "unknown": 0,
        "attributed": int(sys.argv[4]) * replays}
bad = {k: (g[k], v) for k, v in want.items() if g[k] != v}
print("graph-capture run %s: %d executions replayed from %d calls; %d of %d kernels cuDNN's"
      % (sys.argv[3], g["replays"], g["captured"], g["attributed"], g["kernels"]))
for k, (got, v) in bad.items():
    print("FAIL: graph-capture: %s %d, expected %d" % (k, got, v))
sys.exit(1 if bad else 0)
PY
	done
}

sdpa_decode() {
	mkdir -p "$out/sdpa-log"
	CUDNN_LOGLEVEL_DBG=3 CUDNN_LOGDEST_DBG="$out/sdpa-log/cudnn.%i.log" \
		"$dnntrace" record -q -o "$out/sdpa-decode.dnnt" -- python3 "$here/wl_sdpa.py" \
		--inference --dtype fp16 --q-seq 1 --no-causal --iters 10 >"$out/sdpa-decode.out" 2>&1
	rc=$?
	[ $rc = 77 ] && { echo "sdpa-decode: skipped"; return; }
	[ $rc = 0 ] || { echo "FAIL: sdpa-decode: exited $rc"; fail=1; return; }
	n=$("$dnntrace" dump "$out/sdpa-decode.dnnt" | grep -c 'CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR')
	[ "$n" -ge 1 ] || { echo "FAIL: sdpa-decode: no unified SDPA operation made"; fail=1; }
	python3 "$here/check_ops.py" "$dnntrace" "$out/sdpa-decode.dnnt" "$out"/sdpa-log/cudnn.*.log ||
		{ echo "FAIL: sdpa-decode: the trace's ops differ from cuDNN's log"; fail=1; }
}

for c in ${*:-graph-capture sdpa-decode}; do
	case $c in
	graph-capture) graph_capture ;;
	sdpa-decode) sdpa_decode ;;
	*) echo "unknown case $c"; exit 2 ;;
	esac
done
exit $fail
