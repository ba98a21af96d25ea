#!/bin/sh
# The reading commands on fixed traces, compared with their expected output
# (tests/tools/golden/). tests/data/h200-sample.dnnt was recorded from the
# bundled sample program on an H200: legacy convolution, algorithm search,
# activation, pooling, softmax and a backend graph, with its kernels. The
# synthetic traces (synth-trace.c: two ranks of a small training job, with
# fixed times) cover what the sample does not: autotuning, plans built
# again, layout conversions, failed calls, several ranks, plans run on
# another thread than the one that built them; and, in the
# fusion scenario, every fusion pattern once where it may run fused and
# once per limit that blocks it.
# usage: test-golden.sh DNNTRACE SOURCE_ROOT SYNTH_TRACE [--update]
set -u
unset NO_COLOR # the HTML pages would be monochrome
abs() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
dnntrace=$(abs "$1") root=$2 synth=$(abs "$3") update=${4:-}
cd "$root" || exit 2
tmp=$(mktemp)
synth_dir=$(mktemp -d)
trap 'rm -rf "$tmp" "$synth_dir"' EXIT
"$synth" shim/libs/cudnn-api.txt "$synth_dir" --ranks 2 --steps 4 || exit 1
for v in noise changed; do
	mkdir "$synth_dir/$v"
	"$synth" shim/libs/cudnn-api.txt "$synth_dir/$v" --ranks 2 --steps 12 --variant $v || exit 1
done
mkdir "$synth_dir/base" "$synth_dir/fusion" "$synth_dir/threads" "$synth_dir/metrics" \
	"$synth_dir/modules" "$synth_dir/exit" "$synth_dir/sampled" "$synth_dir/straggler" \
	"$synth_dir/ranges" "$synth_dir/job3" "$synth_dir/job256"
"$synth" shim/libs/cudnn-api.txt "$synth_dir/straggler" --ranks 3 --steps 4 --straggler 2 || exit 1
# and a trace without communication kernels (a launcher's): no rank of it
cp tests/data/h200-sample.dnnt "$synth_dir/straggler/launcher.dnnt" || exit 1
mkdir "$synth_dir/straggler-lost"
"$synth" shim/libs/cudnn-api.txt "$synth_dir/straggler-lost" --ranks 2 --steps 4 --straggler 1 --lose 5 || exit 1
"$synth" shim/libs/cudnn-api.txt "$synth_dir/job3" --ranks 3 --steps 2 || exit 1
"$synth" shim/libs/cudnn-api.txt "$synth_dir/job256" --ranks 256 --steps 2 --straggler 37 || exit 1
"$synth" shim/libs/cudnn-api.txt "$synth_dir/modules" --scenario modules --steps 3 || exit 1
"$synth" shim/libs/cudnn-api.txt "$synth_dir/exit" --scenario exit --steps 3 || exit 1
"$synth" shim/libs/cudnn-api.txt "$synth_dir/sampled" --scenario sampled --steps 5 || exit 1
"$synth" shim/libs/cudnn-api.txt "$synth_dir/ranges" --scenario ranges --steps 3 || exit 1
"$synth" shim/libs/cudnn-api.txt "$synth_dir/base" --ranks 2 --steps 12 || exit 1
"$synth" shim/libs/cudnn-api.txt "$synth_dir/threads" --scenario threads || exit 1
"$synth" shim/libs/cudnn-api.txt "$synth_dir/metrics" --scenario metrics --steps 10 || exit 1
"$synth" shim/libs/cudnn-api.txt "$synth_dir/fusion" --scenario fusion --steps 3 || exit 1
fail=0
check_rc() { # check_rc STATUS NAME ARGS...: also its exit status
	want=$1
	shift
	check "$@"
	name=$1
	shift
	"$dnntrace" "$@" >/dev/null 2>&1
	got=$?
	if [ "$got" != "$want" ]; then
		echo "FAIL: dnntrace $* exited $got, expected $want"
		fail=1
	fi
}
check() { # check NAME ARGS...: `dnntrace ARGS` must print golden/NAME
	name=$1
	shift
	# the synthetic traces' folder differs from run to run
	"$dnntrace" "$@" 2>&1 | sed "s|$synth_dir|SYNTH|g" >"$tmp"
	if [ "$update" = --update ]; then
		cp "$tmp" "tests/tools/golden/$name"
	elif ! diff -u "tests/tools/golden/$name" "$tmp"; then
		echo "FAIL: dnntrace $* differs from tests/tools/golden/$name"
		fail=1
	fi
}
check_pf() { # check_pf NAME ARGS...: the perfetto export of ARGS, as text
	name=$1
	shift
	"$dnntrace" export --format perfetto -o "$tmp.pf" "$@" 2>/dev/null &&
		python3 tests/tools/check-perfetto.py --text "$tmp.pf" >"$tmp" 2>&1
	rm -f "$tmp.pf"
	if [ "$update" = --update ]; then
		cp "$tmp" "tests/tools/golden/$name"
	elif ! diff -u "tests/tools/golden/$name" "$tmp"; then
		echo "FAIL: dnntrace export --format perfetto $* differs from tests/tools/golden/$name"
		fail=1
	fi
}
t=tests/data/h200-sample.dnnt
check sample.info info --calls -1 "$t"
check sample.dump dump "$t"
check sample.kernels kernels "$t"
# dump --mangled: kernel names as the record holds them
if ! "$dnntrace" dump --mangled "$t" | grep -q ' "_Z23implicit_convolve_sgemmIff'; then
	echo "FAIL: dump --mangled does not print the recorded name"
	fail=1
fi
check sample.ops ops "$t"
check sample.ops.json ops --format json "$t"
check sample.plans ops --plans "$t"
check sample.call120 ops --call 120 "$t"
check sample.call22 ops --call 22 "$t"
check sample.report report "$t"
check sample.report.md report --format markdown "$t"
check sample.report.json report --format json "$t"
check sample.export.json export --format chrome "$t"
check_pf sample.export.pftrace.txt "$t"
check sample.report.html report --format html "$t"
# torch.cuda.graph on an H100: three convolutions captured, replayed 16
# times (tests/gpu/wl_cuda_graph.py --mode graph)
t=tests/data/cuda-graph.dnnt
check graph.ops ops "$t"
check graph.ops.json ops --format json "$t"
check graph.report report "$t"
check graph.report.json report --format json "$t"
check graph.report.html report --format html "$t"
check graph.fusion fusion "$t"
check graph.export.json export --format chrome --from 6.3033s --to 6.3036s "$t"
check_pf graph.export.pftrace.txt --from 6.3033s --to 6.3036s "$t"
# a conv net (conv, ReLU, conv; fp32 NCHW) captured once with
# torch.cuda.graph and replayed 13 times on an H200, the process ending
# right after (tests/gpu/wl_graph_capture.py): the replays' kernels come
# before the capture's and the instantiation's records in the file
t=tests/data/graph-capture.dnnt
check capture.ops ops "$t"
check capture.report report "$t"
check capture.report.json report --format json "$t"
# llama.cpp b4747 on an H100, no cuDNN call: llama-bench -p 32 -n 8 -fa 1
# with its CUDA graphs (tests/gpu/test-llama.sh runs it)
t=tests/data/llama.dnnt
check llama.report report "$t"
check llama.report.json report --format json "$t"
check llama.report.md report --format markdown "$t"
check llama.kernels kernels "$t"
check llama.kernels.csv kernels --format csv --mangled --top 3 "$t"
# JAX attention through cuDNN on an H100, forward and backward
# (tests/gpu/wl_jax_attn.py): XLA builds each graph, serializes its plan
# and executes the plan it restores from that JSON, in CUDA graphs
t=tests/data/jax-attn-restored.dnnt
check restored.plans ops --plans "$t"
check restored.report report "$t"
# a PyTorch transformer encoder layer's training step in bf16 on an H100
# (tests/gpu/wl_transformer.py --iters 4 --warmup 2): cuDNN's attention,
# cuBLAS's and cuBLASLt's GEMMs (a bias epilogue), 2 calls of cuBLAS made
# inside cuBLASLt's, the recorder's own algorithm queries
t=tests/data/transformer-gemm.dnnt
check transformer.ops ops "$t"
check transformer.report report "$t"
check transformer.report.json report --format json "$t"
check transformer.fusion fusion "$t"
s=$synth_dir
check synth.ops ops "$s/rank0.dnnt"
check synth.plans ops --plans "$s/rank0.dnnt"
check synth.report report "$s/rank0.dnnt"
check synth.report.md report --format markdown "$s/rank0.dnnt"
check synth.report.json report --format json "$s/rank0.dnnt"
check synth.ranks report --top 5 "$s"
check synth.ranks.json report --format json "$s"
# rank 2 keeps ranks 0 and 1 waiting in every all-reduce: named, priced,
# the launcher's trace left out
check synth.straggler report --top 1 --no-fusion "$synth_dir/straggler"
# with records lost, each rank's line says its trace lacks them
check synth.straggler.lost report --top 1 --no-fusion "$synth_dir/straggler-lost"
# a job's ranks in their numeric order; above a screenful of them, each
# column's spread and the ranks that stand out (rank 37 the straggler),
# every row with --ranks all
check job3.report report --top 1 --no-fusion "$synth_dir/job3"
# ... however the files are named on the command line: rows and columns
check job3.reversed report --top 1 --no-fusion "$synth_dir/job3/rank2.dnnt" \
	"$synth_dir/job3/rank1.dnnt" "$synth_dir/job3/rank0.dnnt"
check job256.report report --top 1 --no-fusion "$synth_dir/job256"
check job256.all report --top 1 --no-fusion --ranks all "$synth_dir/job256"
check synth.ranks.export.json export --format chrome --from 300ms --to 300.2ms "$s"
check_pf synth.ranks.export.pftrace.txt --from 300ms --to 300.2ms "$s"
check synth.ranks.html report --format html "$s"
check synth.kernels.json kernels --format json --top 4 "$s"
check synth.ranks.sorted report --top 3 --sort roof --wide "$s"
# a plan built on one thread and run on another, whose records come
# first in the file
check threads.ops ops "$synth_dir/threads/threads.dnnt"
# GPU counters sampled every 100 us (record --gpu-metrics): each step's
# matrix product reads 2e8 bytes and writes 1e8, its fill writes 2.5e7
check metrics.report report "$synth_dir/metrics/metrics.dnnt"
# NVTX ranges: GPU time by range, the work of one range's instances
# (--range), and the ranges on the exported timelines
r="$synth_dir/ranges/ranges.dnnt"
check ranges.report report "$r"
check ranges.report.json report --format json "$r"
check ranges.report.md report --format markdown "$r"
check ranges.step.report report --range step "$r"
check ranges.forward.ops ops --range 'f*' "$r"
check ranges.export.json export --format chrome "$r"
check_pf ranges.export.pftrace.txt "$r"
check modules.report report "$synth_dir/modules"
# the last op's kernel read after the program's exit, 5 s later: still its
check exit.ops ops "$synth_dir/exit/exit.dnnt"
# GPU activity in 2 windows (record --gpu-sample 4:10): 10 of the 15
# ReLUs timed, 40 and 50 us; the same program recorded whole beside it
sm=$synth_dir/sampled
check sampled.report report "$sm/sampled.dnnt"
check sampled.report.json report --format json "$sm/sampled.dnnt"
check sampled.ops ops "$sm/sampled.dnnt"
check_rc 0 sampled.diff diff --fail-on regression "$sm/full.dnnt" "$sm/sampled.dnnt"
check sampled.diff.json diff --format json "$sm/full.dnnt" "$sm/sampled.dnnt"
check modules.report.json report --format json "$synth_dir/modules"
check metrics.report.json report --format json "$synth_dir/metrics/metrics.dnnt"
check metrics.report.html report --format html "$synth_dir/metrics/metrics.dnnt"
check synth.peaks report --top 3 --peak-bandwidth 2T --peak-flops bf16=500T,fp32=50T "$s/rank1.dnnt"
b=$synth_dir/base
check_rc 0 diff.same diff --fail-on any "$b" "$synth_dir/noise"
check_rc 0 diff.noise diff --threshold 1% --min-time 1ns "$b" "$synth_dir/noise"
check_rc 1 diff.changed diff --fail-on regression "$b" "$synth_dir/changed"
check_rc 1 diff.changed.md diff --format markdown --fail-on engine-change "$b" "$synth_dir/changed"
check_rc 1 diff.changed.json diff --format json --fail-on any "$b" "$synth_dir/changed"
check_rc 1 diff.changed.html diff --format html --fail-on regression "$b" "$synth_dir/changed"
check_rc 0 diff.ranks diff --top 3 "$s/rank0.dnnt" "$s/rank1.dnnt"
check_rc 1 diff.other diff --fail-on any --top 2 tests/data/jax-attn-restored.dnnt "$s/rank0.dnnt"
f=$synth_dir/fusion
for c in h100 nchw cc75 cc100 c12 fp64; do
	check fusion.$c fusion "$f/fusion-$c.dnnt"
done
check fusion.h100.json fusion --format json "$f/fusion-h100.dnnt"
check fusion.report report --top 3 "$f/fusion-h100.dnnt"
check fusion.report.html report --top 3 --format html "$f/fusion-h100.dnnt"
check fusion.bandwidth fusion --top 1 --bandwidth 2T "$f/fusion-h100.dnnt"
# products through cuBLAS and cuBLASLt (synth-trace's gemm scenario), and
# the same with another cuBLASLt algorithm
mkdir "$synth_dir/gemm" "$synth_dir/gemm-changed"
"$synth" shim/libs/cudnn-api.txt "$synth_dir/gemm" --scenario gemm --steps 3 || exit 1
"$synth" shim/libs/cudnn-api.txt "$synth_dir/gemm-changed" --scenario gemm --steps 3 --variant changed || exit 1
t=$synth_dir/gemm/gemm.dnnt
check gemm.ops ops "$t"
check gemm.ops.json ops --format json "$t"
check gemm.plans ops --plans "$t"
check gemm.report report "$t"
check gemm.fusion fusion "$t"
check_rc 1 gemm.diff diff --fail-on engine-change "$t" "$synth_dir/gemm-changed/gemm.dnnt"
# each case blocks what it is meant to, and only that
expect() { # expect CASE COUNT PATTERN: COUNT chains of CASE blocked for PATTERN
	got=$("$dnntrace" fusion "$f/fusion-$1.dnnt" | grep -c "status: *blocked: .*$3")
	all=$("$dnntrace" fusion "$f/fusion-$1.dnnt" | grep -c "status: *blocked")
	if [ "$got" != "$2" ] || [ "$all" != "$2" ]; then
		echo "FAIL: fusion-$1: $got chains blocked for '$3' ($all blocked), expected $2"
		fail=1
	fi
}
expect h100 0 .
expect nchw 4 "NHWC"
expect cc75 3 "compute capability 8.0\\|32-bit aligned"
expect cc100 2 "compute capability 7.0 to 9.0"
expect c12 1 "multiple of 8"
expect fp64 6 "FLOAT, HALF"
# a busy stream: ops come out of the model seconds of host time after
# their kernels, and every chain must still be found
mkdir "$synth_dir/busy"
"$synth" shim/libs/cudnn-api.txt "$synth_dir/busy" --scenario fusion --steps 2000 || exit 1
n=$("$dnntrace" fusion --with-warmup "$synth_dir/busy/fusion-h100.dnnt" | grep -c "saving .*, 2000 times$")
if [ "$n" != 6 ]; then
	echo "FAIL: fusion on a busy stream: $n of 6 chains found 2000 times"
	fail=1
fi
[ $fail = 0 ] && echo "golden outputs match"
exit $fail
