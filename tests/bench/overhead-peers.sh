#!/usr/bin/env bash
# overhead-peers.sh BUILD_DIR OUTDIR [WORKLOAD...]: what tracing costs a real
# workload, dnntrace against its peers, all in one run on one GPU.
#
# Every workload runs REPEATS times (default 3) in each configuration; the
# configurations are interleaved (one run of each, then the next round, in
# a rotated order), and each run is compared with the plain run of its own
# round, so that the machine's drift over minutes cancels out:
#
#   plain     the workload alone
#   none      dnntrace record --gpu none (cuDNN calls only)
#   sampled   dnntrace record --gpu-sample $SAMPLE (default 10), where the
#             build has it (with DNNTRACE_GPU_SAMPLE_UNSAFE=1)
#   full      dnntrace record (calls, kernels, copies, sets)
#   full_records  the same with launches tied to calls by CUPTI's launch
#             records instead of its callbacks (DNNTRACE_CUPTI_SUBSCRIBE=0);
#             only when CONFIGS names it
#   floor     libcupti-floor.so through CUDA_INJECTION64_PATH: CUPTI's
#             kernel records and nothing else, the least a kernel tracer pays
#   floor_sampled  the same with kernel records on 100 ms of each second
#             (CUPTI_FLOOR_SAMPLE=100:900): what switching them off saves
#   profiler  torch.profiler (CPU and CUDA activities) around the timed loop
#   log       cuDNN's API log, CUDNN_LOGLEVEL_DBG=3, to a file
#
# CONFIGS (default: all of these) names the configurations to run; plain
# is always one of them.
#
# Workloads: sdpa small_cnn lstm resnet50 (tests/gpu/wl_*.py, ms per
# iteration: lower is better) and llama (llama-bench through
# $LLAMA_RUN, default ../shared/workloads/llama/run-llama.sh beside the
# source tree: tokens per second, a prompt of 128 and the generation of
# 128 tokens, one at a time, in one process: the prompt's cuBLAS GEMMs
# start the recording, generation's many small kernels are then recorded;
# no cuDNN, so no profiler or log runs). The table gives,
# per configuration, the median ratio to plain over the rounds and the
# range (min..max); time ratios for the PyTorch workloads (1.10 = 10 %
# slower), throughput ratios for llama (0.90 = 10 % fewer tokens/s). Also
# the bytes one run wrote: traces against the cuDNN log.
#
# OUTDIR keeps runs.txt (every measurement), summary.txt (the table) and
# traces-WORKLOAD.tar (the first round's full and sampled traces, for
# comparing per-op GPU times offline: dnntrace ops or report on each).
set -u
build=$(cd "$1" && pwd) out=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
gpu=$here/../gpu
reps=${REPEATS:-3}
sample=${SAMPLE:-10}
llama_run=${LLAMA_RUN:-$here/../../../shared/workloads/llama/run-llama.sh}
workloads=${*:-sdpa small_cnn lstm resnet50 llama}
dnntrace=$build/tools/dnntrace
floor=$build/tests/bench/libcupti-floor.so
mkdir -p "$out"
out=$(cd "$out" && pwd)
runs=$out/runs.txt
: >"$runs"

[ -x "$dnntrace" ] || { echo "no $dnntrace" >&2; exit 2; }
[ -f "$floor" ] || { echo "no $floor (CUPTI headers missing?)" >&2; exit 2; }
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 || {
	echo "no GPU: skipped" >&2; exit 77; }

iters() {
	case $1 in
	sdpa) echo 1500 ;; small_cnn) echo 600 ;; lstm) echo 250 ;;
	resnet50) echo 60 ;; *) echo 100 ;;
	esac
}

# run WL CONFIG ROUND: one run; appends "WL CONFIG ROUND METRIC VALUE" and
# "WL CONFIG ROUND bytes N" to runs.txt
run() {
	local wl=$1 cfg=$2 r=$3 dir=$out/$1.$2.$3 pre=() env=()
	rm -rf "$dir" && mkdir -p "$dir"
	case $cfg in
	plain) ;;
	none) pre=("$dnntrace" record -q -o "$dir/%p.dnnt" --gpu none --) ;;
	# CUPTI 13.0.1 refuses sampling unless asked anyway: it is measured
	sampled) env=(DNNTRACE_GPU_SAMPLE_UNSAFE=1)
		pre=("$dnntrace" record -q -o "$dir/%p.dnnt"
		--gpu-sample "$sample" --) ;;
	full) pre=("$dnntrace" record -q -o "$dir/%p.dnnt" --) ;;
	full_records) env=(DNNTRACE_CUPTI_SUBSCRIBE=0)
		pre=("$dnntrace" record -q -o "$dir/%p.dnnt" --) ;;
	floor) env=(CUDA_INJECTION64_PATH="$floor") ;;
	floor_sampled) env=(CUDA_INJECTION64_PATH="$floor"
		CUPTI_FLOOR_SAMPLE=100:900) ;;
	profiler) env=(DNNTRACE_WL_PROFILE="$dir/profile.json") ;;
	log) env=(CUDNN_LOGLEVEL_DBG=3 CUDNN_LOGDEST_DBG="$dir/cudnn.log") ;;
	esac
	if [ "$wl" = llama ]; then
		env LLAMA_ARGS="-p 128 -n 128 -ngl 99 -r 3 -fa 1 -o csv" \
			"${env[@]}" bash "$llama_run" /tmp/llama "${pre[@]}" \
			>"$dir/stdout" 2>"$dir/stderr"
		# llama-bench's CSV: n_prompt, n_gen and avg_ts by name
		python3 - "$dir/stdout" "$wl $cfg $r" >>"$runs" <<-'EOF'
		import csv, sys
		for row in csv.DictReader(l for l in open(sys.argv[1]) if l.strip()):
		    test = "pp" if int(row["n_prompt"]) else "tg"
		    print(sys.argv[2].replace("llama", "llama_" + test, 1), "tok_s", row["avg_ts"])
		EOF
	else
		env "${env[@]}" "${pre[@]}" python3 "$gpu/wl_$wl.py" \
			--iters "$(iters "$wl")" >"$dir/stdout" 2>"$dir/stderr"
		sed -n "s/^RESULT .* ms_per_iter=\([0-9.]*\).*/$wl $cfg $r ms \1/p" \
			"$dir/stdout" >>"$runs"
	fi
	local bytes
	bytes=$(find "$dir" -name '*.dnnt' -o -name 'cudnn.log*' | xargs -r du -cb | tail -1 | cut -f1)
	echo "$wl $cfg $r bytes ${bytes:-0}" >>"$runs"
	grep -h "cupti-floor:" "$dir/stderr" >"$dir/floor.txt" 2>/dev/null
	# keep the first round's traces for the per-op comparison only
	if [ "$r" = 1 ] && { [ "$cfg" = full ] || [ "$cfg" = sampled ]; }; then
		mkdir -p "$out/traces/$wl.$cfg" && mv "$dir"/*.dnnt "$out/traces/$wl.$cfg/" 2>/dev/null
	fi
	rm -rf "$dir"
}

# sampled kernel timing, where this build has it
"$dnntrace" record --help | grep -q -- --gpu-sample && sampled=sampled || sampled=
for wl in $workloads; do
	cfgs=(plain none $sampled full floor floor_sampled profiler log)
	[ "$wl" = llama ] && cfgs=(plain none $sampled full floor floor_sampled)
	if [ -n "${CONFIGS:-}" ]; then
		want=" $CONFIGS " && picked=(plain)
		for c in "${cfgs[@]:1}" full_records; do
			[[ $want == *" $c "* ]] && picked+=("$c")
		done
		cfgs=("${picked[@]}")
	fi
	n=${#cfgs[@]}
	for r in $(seq "$reps"); do
		for i in $(seq 0 $((n - 1))); do
			run "$wl" "${cfgs[$(((i + r - 1) % n))]}" "$r"
		done
		echo "$wl round $r done ($(date +%T))" >&2
	done
	# one archive per workload, so that a run cut short keeps the others
	[ -d "$out/traces" ] && tar -cf "$out/traces-$wl.tar" -C "$out" traces &&
		rm -rf "$out/traces"
done

python3 - "$runs" "$sample" <<'EOF' | tee "$out/summary.txt"
import collections, statistics, sys
vals = collections.defaultdict(dict)   # (wl, cfg) -> {round: value}
size = collections.defaultdict(list)
for line in open(sys.argv[1]):
    wl, cfg, r, what, v = line.split()
    if what == "bytes":
        size[(wl.split("_")[0] if wl.startswith("llama") else wl, cfg)].append(int(v))
    else:
        vals[(wl, cfg)][r] = float(v)
cfgs = ["none", "sampled", "full", "full_records", "floor", "floor_sampled",
        "profiler", "log"]
cfgs = [c for c in cfgs if any(k[1] == c for k in vals)]  # those that ran
print("ratio to plain, median (min..max) over interleaved rounds; "
      "sampled = --gpu-sample %s" % sys.argv[2])
print("%-12s %9s  " % ("workload", "plain") + "  ".join("%-19s" % c for c in cfgs))
for wl in dict.fromkeys(k[0] for k in vals):
    plain = vals[(wl, "plain")]
    unit = "ms" if not wl.startswith("llama") else "tok/s"
    row = "%-12s %9s  " % (wl, "%.4g%s" % (statistics.median(plain.values()), unit) if plain else "-")
    for c in cfgs:
        rs = [v / plain[r] for r, v in vals.get((wl, c), {}).items() if plain.get(r)]
        row += "%-19s  " % ("%.3f (%.3f..%.3f)" % (statistics.median(rs), min(rs), max(rs)) if rs else "-")
    print(row)
print("\nbytes written by one run (median): dnntrace traces, cuDNN log")
for wl in dict.fromkeys(k[0] for k in size):
    parts = ["%s %.1f MB" % (c, statistics.median(size[(wl, c)]) / 1e6)
             for c in ("none", "sampled", "full", "full_records", "log")
             if size.get((wl, c))]
    print("  %-10s %s" % (wl, ", ".join(parts)))
EOF
