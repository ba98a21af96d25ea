#!/bin/sh
# Kernels replayed from CUDA graphs are executions of the op whose call
# made their node: synth-trace --scenario graphs holds every way there
# (capture, clone, cuDNN populating a graph, a child graph updated, one
# capture from two threads, an executable updated to a new capture,
# replays whose kernels the file holds before the capture and the
# instantiation they ran from) and the kernels that must stay
# unattributed (another kernel than the node's, an executable never seen
# made) or make a partial replay.
# usage: test-graphs.sh DNNTRACE SYNTH_TRACE API_LISTING
set -u
dnntrace=$1 synth=$2 listing=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
"$synth" "$listing" "$tmp" --scenario graphs || exit 1
t=$tmp/graphs.dnnt

# which call each replay goes to, by graph launch (correlation id)
"$dnntrace" ops --format json --with-warmup "$t" >"$tmp/ops.json" || fail=1
python3 - "$tmp/ops.json" <<'PY' || fail=1
import collections, json, sys
d = json.load(open(sys.argv[1]))
ops = d["ops"]
def seqs(origin):
    return [o["seq"] for o in ops if o.get("origin", "call") == origin]
bad = []
def want(what, got, expect):
    if got != expect:
        bad.append("%s: got %r, expected %r" % (what, got, expect))
calls = {o["seq"]: o for o in ops if o.get("origin", "call") != "replay"}
captured = seqs("captured")
want("captured calls", len(captured), 7)
by_call = collections.Counter(seqs("replay"))
# captured calls in order: capture, populate, update, thread 200,
# thread 300, the capture an executable was updated to, the capture
# replayed before it is read
cap, pop, upd, t200, t300, again, early = captured
want("replays of the captured call (3 launches + a clone's)", by_call[cap], 4)
want("replays of the populating call (2 + 2 as a child)", by_call[pop], 4)
want("replays after the update", by_call[upd], 2)
want("replays of thread 200's node", by_call[t200], 3)
want("replays of thread 300's nodes (2 + 1 partial)", by_call[t300], 3)
want("replays after the executable's update", by_call[again], 1)
want("replays read before their capture", by_call[early], 2)
want("threads of the two-thread capture", (calls[t200]["tid"], calls[t300]["tid"]), (200, 300))
for o in ops:
    if o.get("origin") == "replay":
        # thread 300's split-K product has two kernels (one, replayed partly)
        allowed = (1, 2) if o["seq"] == t300 else (1,)
        if o["kernels"] not in allowed or not o["gpu_ns"]:
            bad.append("replay of %d has %d kernels, %d ns" % (o["seq"], o["kernels"], o["gpu_ns"]))
        if "graph_launch" not in o:
            bad.append("replay of %d lacks its graph launch" % o["seq"])
    elif o.get("origin") == "captured" and o["kernels"]:
        bad.append("captured call %d ran kernels" % o["seq"])
g = d["stats"]["graphs"]
want("graph stats", {k: g[k] for k in ("launches", "captured", "replays", "partial", "kernels", "attributed", "unknown", "mismatch")},
     {"launches": 18, "captured": 7, "replays": 19, "partial": 1, "kernels": 27, "attributed": 21, "unknown": 1, "mismatch": 1})
for b in bad:
    print("FAIL: ops: " + b)
sys.exit(1 if bad else 0)
PY

# the report counts replays as executions, captured calls not, and says
# what stayed unattributed
"$dnntrace" report --format json --with-warmup "$t" >"$tmp/report.json" || fail=1
python3 - "$tmp/report.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
mm = [o for o in d["ops"] if o["kind"] == "matmul"]
bad = []
count = sum(o["count"] for o in mm)
replays = sum(o["replays"] for o in mm)
captured = sum(o["captured"] for o in mm)
if (count, replays, captured) != (21, 19, 7):
    bad.append("matmul executions, replays, captured calls: %r" % ((count, replays, captured),))
if d["graphs"]["launches"] != 18 or d["graphs"]["attributed"] != 21:
    bad.append("graphs: %r" % d["graphs"])
for b in bad:
    print("FAIL: report: " + b)
sys.exit(1 if bad else 0)
PY
"$dnntrace" report "$t" >"$tmp/report.txt" || fail=1
for want in "^graphs    18 CUDA graph launches" "19 cuDNN op executions replayed from 7 calls captured into graphs" \
	"1 kernels came from executable graphs whose making the trace does not show" \
	"1 replayed kernels did not match" "1 replays lack some of their kernels"; do
	grep -q -- "$want" "$tmp/report.txt" || { echo "FAIL: report text lacks '$want'"; fail=1; }
done
# the other views read it too
"$dnntrace" fusion "$t" >/dev/null || { echo "FAIL: fusion"; fail=1; }
"$dnntrace" diff --fail-on any "$t" "$t" >/dev/null || { echo "FAIL: diff of a trace with itself"; fail=1; }
"$dnntrace" dump "$t" | grep -q '^KERNEL .* graph=2 node=8589934592 ' || { echo "FAIL: dump shows no graph of a kernel"; fail=1; }

[ $fail = 0 ] && echo "graph replays: all checks passed"
exit $fail
