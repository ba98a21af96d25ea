#!/bin/sh
# The fusion what-ifs' fused graphs finalized by the real cuDNN, no GPU
# needed (test-replay-fuse-cudnn.c): a legacy convolution's chain
# (synth-trace's fusion scenario), GEMMs' epilogues and prologues
# (its gemm scenario and its variant `prologue`), and those of two traces
# recorded on an H100: a backend convolution's (cuda-graph.dnnt), cuBLAS
# and cuBLASLt GEMMs' (transformer-gemm.dnnt).
# usage: test-replay-fuse-cudnn.sh TEST SYNTH_TRACE SOURCE_ROOT
set -u
test=$1 synth=$2 root=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
listing=$root/shim/libs/cudnn-api.txt
mkdir "$dir/pro" &&
	"$synth" "$listing" "$dir" --scenario fusion --steps 2 >/dev/null &&
	"$synth" "$listing" "$dir" --scenario gemm --steps 2 >/dev/null &&
	"$synth" "$listing" "$dir/pro" --scenario gemm --steps 2 --variant prologue >/dev/null || exit 2
exec "$test" "$dir/fusion-h100.dnnt" 1 "$dir/gemm.dnnt" 3 "$dir/pro/gemm.dnnt" 2 \
	"$root/tests/data/cuda-graph.dnnt" 1 "$root/tests/data/transformer-gemm.dnnt" 6
