#!/bin/sh
# dnntrace replay on the GPU the traces were recorded on: the bundled
# sample (a legacy and a backend convolution) and gpu-plan-restore (a
# matmul + bias + ReLU graph) recorded, then replayed. Each problem is
# measured or says why not; the recorded engine of each measured problem
# runs, and of a backend graph (a restored plan's too) another engine
# besides; no candidate's outputs disagree with the recorded engine's beyond
# their type's tolerance; report reads the results. Prints the
# calibration (replayed over recorded time) of each problem. Skips (77)
# without a GPU.
# usage: test-replay.sh DNNTRACE SAMPLE GPU_PLAN_RESTORE
set -u
dnntrace=$1 sample=$2 restore=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$restore" 1 >/dev/null 2>&1
[ $? = 77 ] && { echo "no GPU: skipped"; exit 77; }
fail=0
"$dnntrace" record -q -o "$tmp/sample.dnnt" -- "$sample" -n 3 >/dev/null || fail=1
"$dnntrace" record -q -o "$tmp/restore.dnnt" -- "$restore" 5 >/dev/null || fail=1
for t in sample restore; do
	"$dnntrace" replay -q --budget 60 "$tmp/$t.dnnt" || { echo "FAIL: replay of $t exited $?"; fail=1; }
	"$dnntrace" report "$tmp/$t.dnnt" >/dev/null 2>"$tmp/err" || fail=1
	[ -s "$tmp/err" ] && { echo "FAIL: report of $t said: $(cat "$tmp/err")"; fail=1; }
	python3 - "$tmp/$t.replay.jsonl" "$t" <<'PY' || fail=1
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
bad, measured = [], 0
for p in lines[1:]:
    c = p.get("candidates", [])
    if p["status"] != "measured":
        if not p.get("reason"):
            bad.append("%s without a reason: %s" % (p["status"], p["problem"][:80]))
        continue
    measured += 1
    if not c or c[0]["source"] != "recorded" or c[0]["status"] != "ok":
        bad.append("the recorded engine did not run: %s" % p["problem"][:80])
    # a backend graph (a restored plan's too) has heuristic candidates
    if not p["legacy"] and sum(x["status"] == "ok" for x in c) < 2:
        bad.append("no other engine timed: %s" % p["problem"][:80])
    bad += ["%s disagrees (%s)" % (x["engine"], x.get("error")) for x in c if x.get("agrees") is False]
    print("%s: %s recorded %s ns, replayed %s ns (%.2fx), %d candidates, best %s" % (
        sys.argv[2], p.get("brief", "")[:60], p["recorded_ns"], p["replayed_ns"],
        p.get("calibration", 0), len(c), c[p["best"]]["engine"] if p["best"] >= 0 else "-"))
if not measured:
    bad.append("no problem measured")
for b in bad:
    print("FAIL:", sys.argv[2], b)
sys.exit(1 if bad else 0)
PY
done
exit $fail
