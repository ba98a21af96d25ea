#!/bin/sh
# A real 2-rank job: wl_ddp.py (ResNet-50, DistributedDataParallel over
# NCCL, one rank per GPU) under `dnntrace record -o DIR/%q{RANK}.dnnt --
# torchrun ...`, three times: with cuDNN's own API log per process beside
# it (writing it slows the ranks unevenly), as it is, and with rank 1
# slowed on purpose. Checks that each rank's
# trace is complete, names its rank and its GPU; that NCCL's kernels are
# NCCL's; that each rank's cuDNN calls are those cuDNN logged for its
# process (but cudnnGetVersion, which the shim itself calls once for the
# trace's header); that
# `report` of the slowed job names rank 1 the straggler, with a price at
# least half of the 1 s it slept more than the job as it is (where a
# straggler may be named too: ranks are not even on machines whose GPUs
# others share); that `diff` reads two job folders; and that the timeline export
# holds both ranks. Skips (77) with fewer than 2 GPUs or without torchrun.
# usage: check_ddp.sh DNNTRACE OUTDIR
set -u
dnntrace=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "$n" -ge 2 ] || { echo "fewer than 2 GPUs ($n): skipped"; exit 77; }
command -v torchrun >/dev/null || { echo "no torchrun: skipped"; exit 77; }
# NVLink multicast off, as on machines whose GPUs others share
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
rm -rf "$out" && mkdir -p "$out/a" "$out/b" "$out/c" || exit 2
fail=0
bad() { echo "FAIL: $*"; fail=1; }
job() { # job DIR ARGS...: the job recorded into DIR
	d=$1
	shift
	"$dnntrace" record -o "$d/%q{RANK}.dnnt" -- torchrun --standalone \
		--nproc_per_node 2 "$here/wl_ddp.py" --iters 8 --warmup 2 "$@" \
		>"$d/out.txt" 2>&1 || bad "the job in $d failed: $(tail -3 "$d/out.txt")"
}
CUDNN_LOGLEVEL_DBG=3 CUDNN_LOGDEST_DBG="$out/a/cudnn-%i.log" job "$out/a"
job "$out/b" --slow-rank 1 --sleep-ms 100
job "$out/c"

for r in 0 1; do
	t=$out/a/$r.dnnt
	[ -f "$t" ] || { bad "no trace of rank $r"; continue; }
	"$dnntrace" info "$t" >"$out/info$r.txt" 2>&1
	grep -q "^ended: *clean" "$out/info$r.txt" || bad "rank $r: $(grep '^ended' "$out/info$r.txt")"
	grep -q "^environment: RANK=$r\$" "$out/info$r.txt" || bad "rank $r: its trace does not name it"
	"$dnntrace" dump "$t" | grep "^KERNEL " | grep -v " dev=$r " | head -1 >"$out/otherdev$r.txt"
	[ -s "$out/otherdev$r.txt" ] && bad "rank $r: kernels on another GPU: $(cut -c1-120 "$out/otherdev$r.txt")"
	pid=$(sed -n 's/^process: .* pid \([0-9]*\).*/\1/p' "$out/info$r.txt")
	python3 "$here/dnntrace_calls.py" "$dnntrace" "$t" -o "$out/calls$r.json" >/dev/null &&
		python3 "$here/cudnn_log_calls.py" "$out/a/cudnn-$pid.log" -o "$out/log$r.json" >/dev/null &&
		python3 "$here/compare_calls.py" --ignore cudnnGetVersion \
			"$out/calls$r.json" "$out/log$r.json" >"$out/compare$r.txt" ||
		bad "rank $r: calls differ from cuDNN's log: $(grep -E 'NO|calls:' "$out/compare$r.txt")"
	echo "rank $r: $(grep '^calls:' "$out/compare$r.txt")"
done
"$dnntrace" report "$out/a" >"$out/report-a.txt" 2>&1 || bad "report of the job failed"
grep -qE "^ *NCCL +[0-9.]+ (ns|us|ms|s) " "$out/report-a.txt" || bad "no GPU time given to NCCL"
"$dnntrace" report "$out/c" >"$out/report-c.txt" 2>&1 || bad "report of the job as it is failed"
sed -n '/^Traces/,/^$/p' "$out/report-c.txt"
"$dnntrace" report "$out/b" >"$out/report-b.txt" 2>&1 || bad "report of the slowed job failed"
grep -q "straggler: rank 1 keeps the others waiting" "$out/report-b.txt" || bad "rank 1 not named the straggler"
sed -n '/^Traces/,/^$/p' "$out/report-b.txt"
grep "straggler:" "$out/report-b.txt" | cut -c1-160
# the straggler's price, JSON: that of the slowed job less that of the job
# as it is (0 where none is named) covers half of the 10 x 100 ms slept
for j in b c; do "$dnntrace" report --format json "$out/$j" >"$out/report-$j.json"; done
python3 - "$out/report-b.json" "$out/report-c.json" <<'PY' || bad "the straggler's price does not cover the sleeps"
import json, sys
def price(path):
    f = [x for x in json.load(open(path))["findings"] if x["type"] == "straggler"]
    return f[0]["cost_ns"] if f else 0
b, c = price(sys.argv[1]), price(sys.argv[2])
print("straggler priced %.0f ms slowed, %.0f ms as it is" % (b / 1e6, c / 1e6))
sys.exit(0 if b - c >= 500e6 else 1)
PY
"$dnntrace" diff "$out/c" "$out/b" >"$out/diff.txt" 2>&1 || bad "diff of the two jobs: exit $?"
"$dnntrace" export --format chrome -o "$out/b.json" "$out/b" &&
	python3 - "$out/b.json" <<'PY' || bad "the timeline does not hold both ranks"
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
names = [e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"]
ranks = {n.split()[0] for n in names if n.startswith("RANK=")}
print("timeline: %s" % ", ".join(sorted(ranks)))
sys.exit(0 if ranks == {"RANK=0", "RANK=1"} else 1)
PY
[ $fail = 0 ] && echo "ddp: all checks passed"
exit $fail
