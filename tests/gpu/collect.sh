#!/usr/bin/env bash
# collect.sh BUILD_DIR OUTDIR [workload...]: record each workload for a few
# iterations with dnntrace and cuDNN's API log in the same run, keep the
# trace and the gzipped log, and show what `dnntrace ops --plans` decodes.
# For developing and checking the analyzer against the oracle offline.
set -u
build=$1 out=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
for wl in ${*:-resnet50 lstm sdpa jax_conv jax_attn jax_convbias ctc}; do
	rm -rf "$out/$wl.tmp" && mkdir -p "$out/$wl.tmp"
	CUDNN_LOGLEVEL_DBG=3 CUDNN_LOGDEST_DBG="$out/$wl.tmp/cudnn.%i.log" timeout 300 \
		"$build/tools/dnntrace" record -q -o "$out/$wl.tmp/%p.dnnt" -- \
		python3 "$here/wl_$wl.py" --iters 2 --warmup 1 >/dev/null 2>"$out/$wl.err" ||
		{ echo "$wl: failed"; tail -3 "$out/$wl.err"; continue; }
	for f in "$out/$wl.tmp"/*.dnnt; do cp "$f" "$out/$wl.dnnt"; done
	for f in "$out/$wl.tmp"/cudnn.*.log; do gzip -c "$f" >"$out/$wl.cudnn.log.gz"; done
	echo "== $wl: $(ls -s "$out/$wl.dnnt" | cut -d' ' -f1) KiB trace"
	"$build/tools/dnntrace" ops --plans "$out/$wl.dnnt" | cut -c1-220 | head -12
	rm -rf "$out/$wl.tmp"
done
