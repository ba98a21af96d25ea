#!/bin/sh
# `dnntrace export --format chrome` read back as JSON: one process per
# trace with distinct pids, every slice inside --from/--to, --pid, arrows
# with both ends, incomplete traces marked; and, where node and Chrome
# DevTools' trace engine are installed (tests/checkers), the export loaded
# by that engine and checked against `dnntrace report --format json`
# (check-trace-events.mjs).
# `dnntrace export --format chrome` read back as the trace processor
# reads it (check-perfetto.py) and checked against the report on the same
# traces and windows; where protoc is installed, its own decoder reads the
# wire format, and with PERFETTO_PROTO naming Perfetto's
# perfetto_trace.proto, the whole file is decoded by that schema with no
# field left unknown.
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

"$dnntrace" export --format chrome -o "$tmp/job.json" "$tmp/job" || say_fail "export of a job"
check "two ranks" "ok 2" "$tmp/job.json"
all=$(python3 "$tmp/check.py" "$tmp/job.json" | cut -d' ' -f3)

# a window: fewer slices, none outside it (ts are microseconds)
"$dnntrace" export --format chrome --from 2ms --to 3ms -o "$tmp/win.json" "$tmp/job" ||
	say_fail "export of a window"
check "--from 2ms --to 3ms" "ok 2" "$tmp/win.json" 2000 3000
part=$(python3 "$tmp/check.py" "$tmp/win.json" | cut -d' ' -f3)
[ "$part" -gt 0 ] && [ "$part" -lt "$all" ] ||
	say_fail "the window kept $part of $all slices"

pid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["otherData"]["traces"][1]["pid"])' "$tmp/job.json")
"$dnntrace" export --format chrome --pid "$pid" -o "$tmp/pid.json" "$tmp/job" || say_fail "--pid"
check "--pid $pid" "ok 1" "$tmp/pid.json"

# records lost: the trace says so, in the file and on stderr
"$dnntrace" export --format chrome -o "$tmp/lost.json" "$tmp/lost" 2>"$tmp/err" ||
	say_fail "export of a trace that lost records"
check "lost records" "ok 1" "$tmp/lost.json"
python3 "$tmp/check.py" "$tmp/lost.json" | grep -q " 1 1$" ||
	say_fail "an incomplete trace not marked: $(python3 "$tmp/check.py" "$tmp/lost.json")"
grep -q "incomplete" "$tmp/err" || say_fail "no warning for an incomplete trace"

# CUDA graphs: arrows from each launch to its kernels
"$dnntrace" export --format chrome -o "$tmp/graphs.json" "$tmp/graphs" || say_fail "graphs"
check "graphs" "ok 1" "$tmp/graphs.json"

# the protobuf timeline: the same traces and window, read back
pcheck() { # pcheck WHAT WANT TRACE [FROM_NS TO_NS] [export options]
	what=$1 want=$2 t=$3
	shift 3
	from= to=
	case "${1:-}" in [0-9]*) from=$1 to=$2; shift 2 ;; esac
	"$dnntrace" export --format perfetto --force -o "$tmp/p.pftrace" "$@" "$t" 2>/dev/null ||
		{ say_fail "perfetto export: $what"; return; }
	"$dnntrace" report --format json --with-warmup "${report_of:-$t}" >"$tmp/pr.json" 2>/dev/null
	python3 "$root/tests/tools/check-perfetto.py" "$tmp/p.pftrace" "$tmp/pr.json" $from $to \
		>"$tmp/pout" 2>&1
	rc=$?
	got=$(sed -n 's/^summary //p' "$tmp/pout")
	case "$*" in
	*--from*) # a window: the format checks, not the totals
		grep -q "^ok   format errors: 0" "$tmp/pout" || { cat "$tmp/pout"; say_fail "perfetto $what"; } ;;
	*) [ $rc = 0 ] || { cat "$tmp/pout"; say_fail "perfetto $what against the report"; }
	   # every kernel a call or graph launched has its arrow (unless the
	   # interned strings were cleared while its call waited for it)
	   [ -n "${some_arrows:-}" ] || echo "$got" | awk '{ exit !($3 == $5) }' ||
		say_fail "perfetto $what: arrows and launched GPU work differ: $got" ;;
	esac
	case "$got" in "$want"*) ;; *) say_fail "perfetto $what: got '$got', expected '$want...'" ;; esac
	if command -v protoc >/dev/null; then
		protoc --decode_raw <"$tmp/p.pftrace" >/dev/null 2>"$tmp/perr" ||
			{ cat "$tmp/perr"; say_fail "protoc cannot read the perfetto export: $what"; }
		if [ -n "${PERFETTO_PROTO:-}" ]; then
			protoc --proto_path="$(dirname "$PERFETTO_PROTO")" \
				--decode=perfetto.protos.Trace "$PERFETTO_PROTO" \
				<"$tmp/p.pftrace" >"$tmp/ptxt" 2>"$tmp/perr" ||
				{ cat "$tmp/perr"; say_fail "Perfetto's schema cannot read: $what"; }
			! grep -qE '^ *[0-9]+[:{ ]' "$tmp/ptxt" ||
				say_fail "fields Perfetto's schema does not know: $what"
		fi
	fi
}
pcheck "two ranks" "2" "$tmp/job"
pcheck "--from 2ms --to 3ms" "2" "$tmp/job" 2000000 3000000 --from 2ms --to 3ms
for f in "$tmp"/job/*.dnnt; do
	"$dnntrace" info "$f" | grep -q "pid $pid " && report_of=$f
done
pcheck "--pid $pid" "1" "$tmp/job" --pid "$pid"
report_of=
pcheck "lost records" "1 " "$tmp/lost"
sed -n 's/^summary //p' "$tmp/pout" | awk '{ exit $4 != 1 }' ||
	say_fail "perfetto: an incomplete trace not marked: $(cat "$tmp/pout")"
pcheck "graphs" "1" "$tmp/graphs"
for t in h200-sample cuda-graph llama jax-attn-restored; do
	pcheck "$t" "1" "$root/tests/data/$t.dnnt"
done
# interned strings cleared every 40 (a million in use): the same reading,
# and the arrows lost for it said
some_arrows=1
DNNTRACE_PERFETTO_INTERN_MAX=40 pcheck "interning cleared" "2" "$tmp/job"
DNNTRACE_PERFETTO_INTERN_MAX=40 pcheck "interning cleared, graphs" "1" "$tmp/graphs"
some_arrows=
DNNTRACE_PERFETTO_INTERN_MAX=40 "$dnntrace" export --format perfetto -o /dev/null "$tmp/job" 2>&1 |
	grep -q "their call was written out when the 40 interned strings were cleared" ||
	say_fail "arrows lost to clearing not said"
DNNTRACE_PERFETTO_INTERN_MAX=40 "$dnntrace" export --format perfetto -o "$tmp/c.pftrace" "$tmp/job" 2>/dev/null
python3 "$root/tests/tools/check-perfetto.py" --text "$tmp/c.pftrace" >"$tmp/ctxt" 2>&1 ||
	say_fail "interning cleared: $(grep error "$tmp/ctxt" | head -3)"
command -v protoc >/dev/null || echo "protoc missing: the perfetto export was not read by protobuf's own decoder"
"$dnntrace" export --format perfetto "$tmp/job" >/dev/null 2>&1 </dev/null
[ $? = 0 ] || say_fail "perfetto export to a pipe or file"

# usage errors
for args in "" "--format nope x" "--format chrome" "--format chrome --from 1x x" \
	"--format chrome --from 2s --to 1s x" "--format chrome --pid -3 x"; do
	"$dnntrace" export $args >/dev/null 2>&1
	[ $? = 2 ] || say_fail "dnntrace export $args did not exit 2"
done
"$dnntrace" export --format chrome --pid 999999999 "$tmp/job" >/dev/null 2>"$tmp/err"
[ $? = 2 ] && grep -q "no trace of process" "$tmp/err" || say_fail "--pid of no trace"

# the DevTools trace engine, where it is installed
modules=${DNNTRACE_NODE_MODULES:-$root/build/checkers/node_modules}
if command -v node >/dev/null && [ -d "$modules/@paulirish/trace_engine" ]; then
	for t in "$root/tests/data/h200-sample.dnnt" "$root/tests/data/cuda-graph.dnnt" \
		"$tmp/job/rank0.dnnt" "$tmp/graphs"; do
		"$dnntrace" export --format chrome --force -o "$tmp/e.json" "$t" 2>/dev/null
		"$dnntrace" report --format json --with-warmup "$t" >"$tmp/r.json" 2>/dev/null
		DNNTRACE_NODE_MODULES=$modules node "$root/tests/tools/check-trace-events.mjs" \
			"$tmp/e.json" "$tmp/r.json" >"$tmp/out" 2>&1 ||
			{ cat "$tmp/out"; say_fail "DevTools' trace engine on the export of $t"; }
	done
else
	echo "node or $modules/@paulirish/trace_engine missing: the DevTools check did not run"
	[ "$fail" = 0 ] && exit 77
fi
exit $fail
