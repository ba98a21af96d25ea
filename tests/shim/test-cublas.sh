#!/bin/sh
# test-cublas.sh - cuBLAS and cuBLASLt recorded without a GPU: cublas-prog,
# linked against the real libcublas and libcublasLt, binds to the shim's
# wrappers (exported under the libraries' version nodes) and its calls are
# recorded with their arguments: GEMMs' sizes, types and strides; the
# batched calls' arrays of device pointers as their values; cuBLASLt's
# descriptors as handles, attribute values as bytes, the algorithm as its
# 64 bytes; alpha and beta read on the host under the host pointer mode
# only (the device mode's are recorded as pointers, never read; a failed
# handle's, whose mode cannot be asked, too). cuBLAS's status string,
# which cuBLASLt gives, is recorded once as the program's call, with
# cuBLASLt's marked nested.
#
# usage: test-cublas.sh DNNTRACE LIBDNNTRACE CUBLAS-PROG
set -u
dnntrace=$1 shim=$2 prog=$3
. "$(dirname "$0")/test-lib.sh"

# The wrappers carry the real libraries' version nodes.
readelf --dyn-syms -W "$shim" >"$tmp/syms" 2>&1 || bad "readelf failed"
has "$tmp/syms" ' cublasGemmEx@@libcublas\.so\.13$' "exports: cuBLAS's node"
has "$tmp/syms" ' cublasSgemm_v2@@libcublas\.so\.13$' "exports: cuBLAS's node"
has "$tmp/syms" ' cublasLtMatmul@@libcublasLt\.so\.13$' "exports: cuBLASLt's node"

DNNTRACE_LIB=$shim "$dnntrace" record -o "$tmp/t.dnnt" -- "$prog" \
	>"$tmp/out" 2>&1 || { bad "record failed"; cat "$tmp/out"; exit 1; }
has "$tmp/out" '^transa 1 \(4 bytes\), 0 algorithms$' "the program's output"
has "$tmp/out" '8 GEMM calls failed$' "the program's output"

"$dnntrace" info "$tmp/t.dnnt" >"$tmp/info" 2>&1 || bad "info failed"
# the loaded cuBLAS's version, as its getters give it (its cuBLASLt's)
has "$tmp/info" '^cuBLAS: +1[0-9]{5}, built against 1[0-9]{5}, loaded .*/libcublas\.so' "info: cuBLAS"
has "$tmp/info" '^cuBLASLt: +1[0-9]{5}, built against 1[0-9]{5}, loaded .*/libcublasLt\.so' \
	"info: cuBLASLt"
has "$tmp/info" "^calls: +33 the program's, 1 made by one library inside another's call" \
	"info: the program's calls, one nested"

"$dnntrace" dump "$tmp/t.dnnt" >"$tmp/dump" 2>&1 || bad "dump failed"
P='0x[0-9a-f]+'
# No GPU: the handle is NULL and its pointer mode unknown, so alpha and
# beta are their pointers, unread.
has "$tmp/dump" "cublasSgemm_v2\(handle=NULL, transa=0, transb=1, m=64, n=32, k=16, alpha=$P, A=0xa000, lda=64, B=0xb000, ldb=32, beta=$P, C=0xc000, ldc=64\) = 1$" \
	"dump: cublasSgemm_v2"
# cublasHgemm, declared for C++ only, wrapped all the same
has "$tmp/dump" "cublasHgemm\(handle=NULL, transa=0, transb=0, m=16, n=16, k=16, alpha=$P, A=0xa000, .*ldc=16\) = 1$" \
	"dump: cublasHgemm"
has "$tmp/dump" "cublasGemmEx\(.*m=256, n=128, k=64, alpha=$P, A=0xa000, Atype=14, lda=256, .*Ctype=14, ldc=256, computeType=68, algo=-1\) = 1$" \
	"dump: cublasGemmEx"
has "$tmp/dump" "cublasSgemmBatched\(.*Aarray=0xaa00, lda=32, Barray=0xbb00, ldb=32, beta=$P, Carray=0xcc00, ldc=32, batchCount=2\)" \
	"dump: an array of device pointers, its value"
has "$tmp/dump" "cublasGemmBatchedEx\(.*Aarray=0xaa00, Atype=2, .*batchCount=2, computeType=68" \
	"dump: cublasGemmBatchedEx"
has "$tmp/dump" "cublasGemmStridedBatchedEx\(.*m=128, n=64, k=32, .*lda=128, strideA=4096, .*strideC=8192, batchCount=12, computeType=68" \
	"dump: cublasGemmStridedBatchedEx"
has "$tmp/dump" "cublasSgemmGroupedBatched\(.*transa_array=\[0,1\], transb_array=\[1,0\], m_array=\[64,32\], n_array=\[16,8\], k_array=\[128,4\], .*group_count=2, group_size=\[3,1\]\)" \
	"dump: the grouped GEMM's host arrays"
# cuBLASLt: descriptors by value, attributes as their bytes
has "$tmp/dump" "cublasLtMatmulDescCreate\(matmulDesc=>$P, computeType=68, scaleType=0\) = 0$" \
	"dump: a descriptor created"
has "$tmp/dump" "cublasLtMatrixLayoutCreate\(matLayout=>$P, type=14, rows=768, cols=512, ld=768\) = 0$" \
	"dump: a layout"
has "$tmp/dump" "cublasLtMatmulDescSetAttribute\(matmulDesc=$P, attr=7, buf=<4 bytes: 24000000>, sizeInBytes=4\) = 0$" \
	"dump: the epilogue set (GELU_BIAS)"
has "$tmp/dump" "cublasLtMatmulDescSetAttribute\(matmulDesc=$P, attr=8, buf=<8 bytes: 00d0000000000000>, sizeInBytes=8\) = 0$" \
	"dump: the bias pointer set"
has "$tmp/dump" "cublasLtMatmulDescGetAttribute\(matmulDesc=$P, attr=3, buf=><4 bytes: 01000000>, sizeInBytes=4, sizeWritten=>4\) = 0$" \
	"dump: an attribute read back"
has "$tmp/dump" "cublasLtMatmulPreferenceSetAttribute\(pref=$P, attr=1, buf=<8 bytes: 0000400000000000>, sizeInBytes=8\) = 0$" \
	"dump: the workspace preference"
has "$tmp/dump" "cublasLtMatmulAlgoGetHeuristic\(lightHandle=NULL, .*requestedAlgoCount=4, heuristicResultsArray=><0 bytes>, returnAlgoCount=>0\) = 1$" \
	"dump: the heuristic, failed"
algo='<64 bytes: 0{24}04(00){51}>'
has "$tmp/dump" "cublasLtMatmulAlgoConfigSetAttribute\(algo=>$algo, attr=2, buf=<4 bytes: 04000000>, sizeInBytes=4\) = 0$" \
	"dump: the algorithm as the call left it"
# host pointer mode (the descriptor's default): alpha and beta read
has "$tmp/dump" "cublasLtMatmul\(lightHandle=NULL, computeDesc=$P, alpha=2, A=0xa000, Adesc=$P, B=0xb000, Bdesc=$P, beta=0\.5, C=0xc000, .*algo=$algo, workspace=0xe000, workspaceSizeInBytes=4194304, stream=NULL, scaleType=0\) = 1$" \
	"dump: cublasLtMatmul, host scalars and its algorithm"
# device pointer mode: pointers only (0xf000 is no host memory)
has "$tmp/dump" "cublasLtMatmul\(.*alpha=0xf000 \(mode 1\), .*beta=0xf004 \(mode 1\), .*algo=<0 bytes>, workspace=NULL" \
	"dump: cublasLtMatmul, device scalars"
# cuBLAS's status string comes from cuBLASLt: recorded nested, once
[ "$(grep -c 'API_CALL.*\[nested\]' "$tmp/dump")" = 1 ] ||
	bad "dump: one nested call: $(grep nested "$tmp/dump")"
has "$tmp/dump" 'cublasLtGetStatusString\(status=1, return="the library was not initialized"\) = 0 \[nested\]$' \
	"dump: cuBLASLt's call inside cuBLAS's"
has "$tmp/dump" 'cublasGetStatusString\(status=1, return="the library was not initialized"\) = 0$' \
	"dump: cuBLAS's call"
exit $fail
