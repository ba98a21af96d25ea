#!/bin/sh
# A plan restored from its JSON is decoded as the plan it was built as:
# gpu-plan-restore builds a matmul + bias + ReLU plan, executes it once,
# serializes it, destroys every descriptor and executes the restored plan.
# Both plans' executions must show the same graph, with no
# "graph unknown". Skips (77) without a GPU.
# usage: test-plan-restore.sh DNNTRACE GPU_PLAN_RESTORE
set -u
dnntrace=$1 prog=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$prog" 1 >/dev/null 2>&1
[ $? = 77 ] && { echo "no GPU: skipped"; exit 77; }
"$dnntrace" record -q -o "$tmp/%p.dnnt" -- "$prog" 5 || { echo "FAIL: the program failed"; exit 1; }
f=$(ls "$tmp"/*.dnnt | head -1)
"$dnntrace" ops "$f" | grep 'BackendExecute' >"$tmp/ops" || { echo "FAIL: no executions"; exit 1; }
cat "$tmp/ops" | cut -c1-200
fail=0
n=$(wc -l <"$tmp/ops")
[ "$n" = 6 ] || { echo "FAIL: $n executions, expected 6"; fail=1; }
grep -q 'graph unknown\|not finalized' "$tmp/ops" && { echo "FAIL: a plan without its graph"; fail=1; }
# what follows "plan=N": the graph, knobs and notes
sed 's/.* plan=[0-9]* //' "$tmp/ops" | sort -u >"$tmp/graphs"
[ "$(wc -l <"$tmp/graphs")" = 1 ] || { echo "FAIL: built and restored plans differ:"; cat "$tmp/graphs"; fail=1; }
grep -q 'MATMUL.*POINTWISE.*ADD.*RELU_FWD' "$tmp/graphs" || { echo "FAIL: not the graph built"; fail=1; }
exit $fail
