#!/usr/bin/env bash
# run-oracle.sh - run the GPU workloads plain and under dnntrace; check dnntrace against cuDNN's log.
#
#   run-oracle.sh BUILD_DIR OUTDIR [workload...]     (workloads: resnet50 small_cnn lstm sdpa jax_conv)
#
# For each workload (tests/gpu/wl_<name>.py):
#   1. plain run: ms/iter and checksum;
#   2. `dnntrace record` run with the same iterations: ms/iter and checksum (must equal the plain one);
#   3. oracle run: `dnntrace record` and cuDNN's API log (CUDNN_LOGLEVEL_DBG=3) in the SAME process,
#      fewer iterations (logging is slow); calls per function from the trace (dnntrace_calls.py)
#      compared with the calls per function in the log (cudnn_log_calls.py) by compare_calls.py,
#      and what `dnntrace ops` decoded for every execution compared with the log (check_ops.py).
# Writes everything under OUTDIR (<wl>.* files, traces in <wl>.timing/ and <wl>.oracle/) and a
# table to OUTDIR/summary.txt and stdout. Exit status: 0 when every workload that ran has an equal
# (or, for the nondeterministic ones, close) checksum and a matching oracle; 1 otherwise (a run
# failed, differed, or was cut by the time budget); 77 when there is no GPU (or every workload
# skipped itself); 2 on bad usage.
#
# Environment: PYTHON (default python3); ORACLE_BUDGET_S (default 420: runs not started by then
# are skipped, so the script ends well within 8 minutes on an H100); DNNTRACE_RECORD_FLAGS (extra
# options for `dnntrace record`); ORACLE_COMPARE_FLAGS (options for compare_calls.py; default
# `--ignore cudnnGetVersion`: the shim asks it itself, unrecorded, once a process for the trace's
# header, and cuDNN logs it; the shim also asks cudnnGetStream once of a handle it did not see
# created, which then shows as a difference).
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
PY=${PYTHON:-python3}
BUDGET=${ORACLE_BUDGET_S:-420}
ALL_WORKLOADS="resnet50 small_cnn lstm sdpa jax_conv"

usage() {
	echo "usage: $0 BUILD_DIR OUTDIR [workload...]   (workloads: $ALL_WORKLOADS)" >&2
	exit 2
}

# Per workload: "timed_iters warmup oracle_iters oracle_warmup timeout_s checksum_rtol".
# Timed runs last about 0.4-1 s past start-up on an H200; the oracle run is short because
# cuDNN's log costs 2-10x and writes 5-220 MB. checksum_rtol: 0 where two plain runs give identical checksums
# (measured on an H200); cuDNN attention's backward and XLA's autotuned convolutions vary
# slightly from run to run, so they are compared with a tolerance (verdict "close").
workload_config() {
	case $1 in
	resnet50) echo "30 5 3 2 150 0" ;;
	small_cnn) echo "300 20 20 5 90 0" ;;
	lstm) echo "50 5 5 2 120 0" ;;
	sdpa) echo "1000 20 10 3 90 1e-6" ;;
	jax_conv) echo "1000 20 10 3 150 1e-4" ;;
	*) return 1 ;;
	esac
}

have_gpu() {
	command -v nvidia-smi >/dev/null 2>&1 || { echo "no nvidia-smi: no GPU here" >&2; return 1; }
	nvidia-smi -L >/dev/null 2>&1 || { echo "nvidia-smi finds no GPU" >&2; return 1; }
	"$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null ||
		{ echo "torch.cuda.is_available() is false (or torch is missing)" >&2; return 1; }
}

find_shim() {
	local f
	for f in "$BUILD/shim/libdnntrace.so" "$BUILD/libdnntrace.so"; do
		[ -f "$f" ] && { echo "$f"; return 0; }
	done
	find "$BUILD" -name libdnntrace.so -print -quit 2>/dev/null | grep .
}

elapsed() { echo $((SECONDS - START)); }

# run_wl NAME TAG ITERS WARMUP TIMEOUT PREFIX...: run wl_NAME.py behind PREFIX (may be empty),
# stdout/stderr to OUT/NAME.TAG.{out,err}; returns the workload's exit status (124: timed out).
# No run outlasts the budget by more than a minute.
run_wl() {
	local name=$1 tag=$2 iters=$3 warmup=$4 secs=$5 left
	shift 5
	left=$((BUDGET + 60 - $(elapsed)))
	[ "$secs" -le "$left" ] || secs=$((left > 10 ? left : 10))
	echo "[$(elapsed)s] $name: $tag run ($iters iterations)" >&2
	timeout -k 10 "$secs" "$@" "$PY" "$HERE/wl_$name.py" --iters "$iters" --warmup "$warmup" \
		>"$OUT/$name.$tag.out" 2>"$OUT/$name.$tag.err"
}

# result_field NAME TAG FIELD: a field (ms_per_iter or checksum) of the RESULT line, or "-".
result_field() {
	local v
	v=$(grep '^RESULT ' "$OUT/$1.$2.out" 2>/dev/null | tail -n 1 | tr ' ' '\n' | sed -n "s/^$3=//p")
	echo "${v:--}"
}

# compare_checksums A B RTOL: equal, close (within RTOL), DIFF, or "-" when one is missing.
compare_checksums() {
	[ "$1" = - ] || [ "$2" = - ] && { echo -; return; }
	[ "$1" = "$2" ] && { echo equal; return; }
	"$PY" -c 'import sys; a, b, t = map(float, sys.argv[1:])
print("close" if abs(a - b) <= t * max(abs(a), abs(b)) else "DIFF")' "$1" "$2" "$3"
}

overhead() {
	[ "$1" = - ] || [ "$2" = - ] && { echo -; return; }
	"$PY" -c 'import sys; a, b = map(float, sys.argv[1:]); print("%+.1f%%" % (100 * (b - a) / a) if a > 0 else "-")' "$1" "$2"
}

# oracle NAME: the oracle run and its comparison; echoes the verdict for the table.
oracle() {
	local name=$1 oi=$2 ow=$3 secs=$4 rc traces logs
	rm -rf "$OUT/$name.oracle" "$OUT/$name".cudnn.*.log
	mkdir -p "$OUT/$name.oracle"
	# %i: cuDNN puts the pid in the log's name, one log per process like the traces.
	CUDNN_LOGLEVEL_DBG=3 CUDNN_LOGDEST_DBG="$OUT/$name.cudnn.%i.log" \
		run_wl "$name" oracle "$oi" "$ow" "$secs" \
		"$DNNTRACE" record "${RECORD_FLAGS[@]}" -o "$OUT/$name.oracle/%p.dnnt" --
	rc=$?
	[ $rc -eq 0 ] || { echo "run failed (rc=$rc, see $name.oracle.err)"; return; }
	traces=("$OUT/$name.oracle/"*.dnnt)
	logs=("$OUT/$name".cudnn.*.log)
	[ -e "${traces[0]}" ] || { echo "no trace written"; return; }
	[ -e "${logs[0]}" ] || { echo "no cuDNN log written"; return; }
	echo "[$(elapsed)s] $name: counting calls" >&2
	"$PY" "$HERE/dnntrace_calls.py" "$DNNTRACE" "${traces[@]}" -o "$OUT/$name.dnntrace.json" \
		2>"$OUT/$name.dnntrace.err" || { echo "dnntrace dump problem: $(head -n 1 "$OUT/$name.dnntrace.err")"; return; }
	"$PY" "$HERE/cudnn_log_calls.py" --stats "${logs[@]}" -o "$OUT/$name.cudnn.json" \
		2>"$OUT/$name.cudnn.stats" || { echo "cuDNN log unreadable: $(head -n 1 "$OUT/$name.cudnn.stats")"; return; }
	"$PY" "$HERE/compare_calls.py" "${COMPARE_FLAGS[@]}" "$OUT/$name.dnntrace.json" "$OUT/$name.cudnn.json" \
		>"$OUT/$name.compare.txt" 2>&1
	rc=$?
	local line ops_rc ops_line
	line=$(grep '^calls: ' "$OUT/$name.compare.txt" | sed 's/^calls: //')
	# what the model decoded for every execution, against the same log
	"$PY" "$HERE/check_ops.py" "$DNNTRACE" "${traces[0]}" "${logs[@]}" >"$OUT/$name.ops.txt" 2>&1
	ops_rc=$?
	ops_line=$(grep '^ops: ' "$OUT/$name.ops.txt" | sed 's/^ops: //')
	if [ $rc -eq 0 ] && [ $ops_rc -eq 0 ]; then
		echo "match: $line; ops $ops_line"
	else
		echo "MISMATCH: $line; ops $ops_line"
	fi
}

# workload NAME: all runs of one workload; appends its row to $ROWS, sets FAILED/RAN.
workload() {
	local name=$1 cfg iters warmup oi ow secs rtol rc plain_ms dt_ms plain_ck dt_ck ck verdict
	cfg=$(workload_config "$name") || { echo "unknown workload: $name" >&2; FAILED=1; return; }
	read -r iters warmup oi ow secs rtol <<<"$cfg"
	if [ "$(elapsed)" -ge "$BUDGET" ]; then
		ROWS+=("$name|-|-|-|-|not run: time budget spent"); FAILED=1; return
	fi

	run_wl "$name" plain "$iters" "$warmup" "$secs"
	rc=$?
	if [ $rc -eq 77 ]; then
		ROWS+=("$name|-|-|-|-|skipped: $(sed -n 's/^SKIP: //p' "$OUT/$name.plain.err" | head -n 1)"); return
	fi
	RAN=1
	if [ $rc -ne 0 ]; then
		ROWS+=("$name|-|-|-|-|plain run failed (rc=$rc, see $name.plain.err)"); FAILED=1; return
	fi
	plain_ms=$(result_field "$name" plain ms_per_iter)
	plain_ck=$(result_field "$name" plain checksum)

	dt_ms=- dt_ck=-
	if [ "$(elapsed)" -lt "$BUDGET" ]; then
		rm -rf "$OUT/$name.timing" && mkdir -p "$OUT/$name.timing"
		run_wl "$name" dnntrace "$iters" "$warmup" "$secs" \
			"$DNNTRACE" record "${RECORD_FLAGS[@]}" -o "$OUT/$name.timing/%p.dnnt" --
		rc=$?
		dt_ms=$(result_field "$name" dnntrace ms_per_iter)
		dt_ck=$(result_field "$name" dnntrace checksum)
	fi
	ck=$(compare_checksums "$plain_ck" "$dt_ck" "$rtol")
	[ "$rc" -eq 0 ] || ck="run failed (rc=$rc, see $name.dnntrace.err)"

	if [ "$(elapsed)" -lt "$BUDGET" ]; then
		verdict=$(oracle "$name" "$oi" "$ow" "$((secs * 2))")
	else
		verdict="not run: time budget spent"
	fi
	case $ck in equal | close) ;; *) FAILED=1 ;; esac
	case $verdict in match:*) ;; *) FAILED=1 ;; esac
	ROWS+=("$name|$plain_ms|$dt_ms|$(overhead "$plain_ms" "$dt_ms")|$ck|$verdict")
}

print_summary() {
	local row
	printf '%-10s %14s %17s %9s  %-8s %s\n' workload "plain ms/iter" "dnntrace ms/iter" overhead checksum oracle
	for row in "${ROWS[@]}"; do
		IFS='|' read -r n a b o c v <<<"$row"
		printf '%-10s %14s %17s %9s  %-8s %s\n' "$n" "$a" "$b" "$o" "$c" "$v"
	done
	echo "plain and dnntrace runs: same iterations; oracle: dnntrace + CUDNN_LOGLEVEL_DBG=3 in one run," \
		"per-function call counts compared (details: <workload>.compare.txt, <workload>.cudnn.stats)"
}

[ $# -ge 2 ] || usage
BUILD=$1 OUT=$2
shift 2
WORKLOADS=${*:-$ALL_WORKLOADS}
DNNTRACE=$BUILD/tools/dnntrace
read -ra RECORD_FLAGS <<<"${DNNTRACE_RECORD_FLAGS:-}"
read -ra COMPARE_FLAGS <<<"${ORACLE_COMPARE_FLAGS---ignore cudnnGetVersion}"
START=$SECONDS

for name in $WORKLOADS; do
	workload_config "$name" >/dev/null || { echo "unknown workload: $name" >&2; usage; }
done
have_gpu || { echo "SKIP: no GPU" >&2; exit 77; }
[ -x "$DNNTRACE" ] || { echo "no dnntrace binary at $DNNTRACE" >&2; exit 2; }
SHIM=$(find_shim) || { echo "no libdnntrace.so under $BUILD" >&2; exit 2; }
mkdir -p "$OUT" || exit 2
OUT=$(cd "$OUT" && pwd)
echo "dnntrace: $DNNTRACE, shim: $SHIM, output: $OUT" >&2

ROWS=()
FAILED=0
RAN=0
for name in $WORKLOADS; do
	workload "$name"
done
print_summary | tee "$OUT/summary.txt"
echo "total: $(elapsed)s" | tee -a "$OUT/summary.txt"
[ $FAILED -eq 0 ] || exit 1
[ $RAN -eq 1 ] || exit 77 # every workload skipped itself: no GPU stack to run it
exit 0
