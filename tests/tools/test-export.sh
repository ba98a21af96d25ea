#!/bin/sh
# `dnntrace export --format perfetto` read back as JSON: one process per
# trace with distinct pids, every slice inside --from/--to, --pid, arrows
# with both ends, incomplete traces marked; and, where node and Chrome
# DevTools' trace engine are installed (tests/checkers), the export loaded
# by that engine and checked against `dnntrace report --format json`
# (check-trace-events.mjs).
# usage: test-export.sh DNNTRACE SYNTH_TRACE API_LISTING SOURCE_ROOT
set -u
dnntrace=$1 synth=$2 listing=$3 root=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
say_fail() { echo "FAIL: $*"; fail=1; }

mkdir "$tmp/job" "$tmp/lost" "$tmp/graphs"
"$synth" "$listing" "$tmp/job" --ranks 2 --steps 6 >/dev/null || exit 1
"$synth" "$listing" "$tmp/lost" --ranks 1 --steps 6 --lose 5 >/dev/null || exit 1
"$synth" "$listing" "$tmp/graphs" --scenario graphs >/dev/null || exit 1

# check.py FILE [FROM_US TO_US]: what every export must hold; prints a
# summary line
cat >"$tmp/check.py" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
lo, hi = (float(sys.argv[2]), float(sys.argv[3])) if len(sys.argv) > 3 else (0, float("inf"))
bad = []
slices = [e for e in ev if e["ph"] == "X"]
for e in slices:
    ts, dur = float(e["ts"]), float(e["dur"])
    if ts + dur < lo - 0.001 or ts > hi + 0.001:
        bad.append(f"slice outside the window: {e['name']} at {ts}")
starts = {e["id"]: e for e in ev if e["ph"] == "s"}
ends = {e["id"]: e for e in ev if e["ph"] == "f"}
if set(starts) != set(ends):
    bad.append(f"{len(set(starts) ^ set(ends))} flows without both ends")
for i, f in ends.items():
    if i in starts and float(f["ts"]) < float(starts[i]["ts"]):
        bad.append(f"flow {i} ends before it starts")
pids = {t["exported_pid"] for t in d["otherData"]["traces"]}
if len(pids) != len(d["otherData"]["traces"]):
    bad.append("two traces share a pid")
names = {e["pid"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
if names != pids:
    bad.append("a process without its name")
print(" ".join(bad) or "ok", len(d["otherData"]["traces"]), len(slices),
      len(ends), sum(e["ph"] == "i" and e["name"] == "trace incomplete" for e in ev),
      sum(not t["complete"] for t in d["otherData"]["traces"]))
PY
check() { # check WHAT WANT FILE [FROM TO]: WANT = "ok TRACES ..." prefix
	got=$(python3 "$tmp/check.py" "$3" ${4:-} ${5:-})
	case "$got" in
	"$2"*) ;;
	*) say_fail "$1: got '$got', expected '$2...'" ;;
	esac
}

"$dnntrace" export --format perfetto -o "$tmp/job.json" "$tmp/job" || say_fail "export of a job"
check "two ranks" "ok 2" "$tmp/job.json"
all=$(python3 "$tmp/check.py" "$tmp/job.json" | cut -d' ' -f3)

# a window: fewer slices, none outside it (ts are microseconds)
"$dnntrace" export --format perfetto --from 2ms --to 3ms -o "$tmp/win.json" "$tmp/job" ||
	say_fail "export of a window"
check "--from 2ms --to 3ms" "ok 2" "$tmp/win.json" 2000 3000
part=$(python3 "$tmp/check.py" "$tmp/win.json" | cut -d' ' -f3)
[ "$part" -gt 0 ] && [ "$part" -lt "$all" ] ||
	say_fail "the window kept $part of $all slices"

pid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["otherData"]["traces"][1]["pid"])' "$tmp/job.json")
"$dnntrace" export --format perfetto --pid "$pid" -o "$tmp/pid.json" "$tmp/job" || say_fail "--pid"
check "--pid $pid" "ok 1" "$tmp/pid.json"

# records lost: the trace says so, in the file and on stderr
"$dnntrace" export --format perfetto -o "$tmp/lost.json" "$tmp/lost" 2>"$tmp/err" ||
	say_fail "export of a trace that lost records"
check "lost records" "ok 1" "$tmp/lost.json"
python3 "$tmp/check.py" "$tmp/lost.json" | grep -q " 1 1$" ||
	say_fail "an incomplete trace not marked: $(python3 "$tmp/check.py" "$tmp/lost.json")"
grep -q "incomplete" "$tmp/err" || say_fail "no warning for an incomplete trace"

# CUDA graphs: arrows from each launch to its kernels
"$dnntrace" export --format perfetto -o "$tmp/graphs.json" "$tmp/graphs" || say_fail "graphs"
check "graphs" "ok 1" "$tmp/graphs.json"

# usage errors
for args in "" "--format nope x" "--format perfetto" "--format perfetto --from 1x x" \
	"--format perfetto --from 2s --to 1s x" "--format perfetto --pid -3 x"; do
	"$dnntrace" export $args >/dev/null 2>&1
	[ $? = 2 ] || say_fail "dnntrace export $args did not exit 2"
done
"$dnntrace" export --format perfetto --pid 999999999 "$tmp/job" >/dev/null 2>"$tmp/err"
[ $? = 2 ] && grep -q "no trace of process" "$tmp/err" || say_fail "--pid of no trace"

# the DevTools trace engine, where it is installed
modules=${DNNTRACE_NODE_MODULES:-$root/build/checkers/node_modules}
if command -v node >/dev/null && [ -d "$modules/@paulirish/trace_engine" ]; then
	for t in "$root/tests/data/h200-sample.dnnt" "$root/tests/data/cuda-graph.dnnt" \
		"$tmp/job/rank0.dnnt" "$tmp/graphs"; do
		"$dnntrace" export --format perfetto -o "$tmp/e.json" "$t" 2>/dev/null
		"$dnntrace" report --format json "$t" >"$tmp/r.json" 2>/dev/null
		DNNTRACE_NODE_MODULES=$modules node "$root/tests/tools/check-trace-events.mjs" \
			"$tmp/e.json" "$tmp/r.json" >"$tmp/out" 2>&1 ||
			{ cat "$tmp/out"; say_fail "DevTools' trace engine on the export of $t"; }
	done
else
	echo "node or $modules/@paulirish/trace_engine missing: the DevTools check did not run"
	[ "$fail" = 0 ] && exit 77
fi
exit $fail
