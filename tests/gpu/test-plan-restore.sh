#!/bin/sh
# A plan restored from its JSON is decoded as the plan it was built as:
# gpu-plan-restore builds a matmul + bias + ReLU plan, executes it once,
# serializes it, destroys every descriptor and executes the restored plan
# 5 times. Both plans' executions must carry the same kind, FLOPs, bytes,
# tensors, engine and knobs; none may lack its graph. Skips (77) without
# a GPU.
# usage: test-plan-restore.sh DNNTRACE GPU_PLAN_RESTORE
set -u
dnntrace=$1 prog=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$prog" 1 >/dev/null 2>&1
[ $? = 77 ] && { echo "no GPU: skipped"; exit 77; }
"$dnntrace" record -q -o "$tmp/%p.dnnt" -- "$prog" 5 || { echo "FAIL: the program failed"; exit 1; }
f=$(ls "$tmp"/*.dnnt | head -1)
"$dnntrace" ops --format json --with-warmup "$f" >"$tmp/ops.json" || exit 1
python3 - "$tmp/ops.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
runs = [o for o in d["ops"] if o["api"] == "cudnnBackendExecute"]
bad = []
if [o["plan"] for o in runs] != [1] + [2] * 5:
    bad.append("plans executed: %r, expected 1 once then 2 five times" % [o["plan"] for o in runs])
if any("graph unknown" in o["desc"] or "restored from" in o["desc"] for o in runs):
    bad.append("a plan without its graph")
keys = ("kind", "flops", "bytes", "engine", "knobs", "workspace")
# the tensors in any order: a program sets an operation's in its own
seen = {json.dumps([o[k] for k in keys] + [sorted(o["tensors"], key=lambda t: (t["role"], t["uid"]))],
                   sort_keys=True) for o in runs}
if len(seen) != 1:
    bad.append("built and restored plans differ: %s" % "\n".join(seen))
if runs and runs[0]["kind"] != "matmul":
    bad.append("kind %r, expected matmul" % runs[0]["kind"])
plans = d["stats"].get("plans", {})
if (plans.get("built"), plans.get("restored"), plans.get("unknown_runs")) != (1, 1, 0):
    bad.append("plan stats %r" % plans)
print("%d executions; %s" % (len(runs), "; ".join(bad) or "built and restored agree"))
sys.exit(1 if bad else 0)
PY
