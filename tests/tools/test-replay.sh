#!/bin/sh
# dnntrace replay where there is no GPU, and what a replay measured as the
# report shows it. tests/tools/replay/h200-sample.replay.jsonl is what
# `dnntrace replay --any-gpu` measured of tests/data/h200-sample.dnnt on
# an H200: its backend convolution timed with the recorded engine and the
# 38 other configurations cuDNN's heuristics offered, its legacy one with
# the recorded algorithm and the 5 others cuDNN offered.
# tests/tools/replay/cuda-graph.replay.jsonl, of tests/data/cuda-graph.dnnt
# on the H100 it was recorded on: `fusion` shows its what-if.
# usage: test-replay.sh DNNTRACE SOURCE_ROOT [--update]
set -u
abs() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
dnntrace=$(abs "$1") root=$2 update=${3:-}
cd "$root" || exit 2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
failed() { echo "FAIL: $*"; fail=1; }
golden() { # golden NAME FILE: FILE must be tests/tools/golden/NAME
	if [ "$update" = --update ]; then
		cp "$2" "tests/tools/golden/$1"
	elif ! diff -u "tests/tools/golden/$1" "$2"; then
		failed "differs from tests/tools/golden/$1"
	fi
}
cp tests/data/h200-sample.dnnt "$dir/" || exit 2
t=$dir/h200-sample.dnnt

# which problems can be built again, without a GPU
"$dnntrace" replay --list "$t" >"$dir/list" 2>&1 || failed "replay --list exited $?"
golden replay.list "$dir/list"
# --op: the problem of that call (120: the backend convolution's third run)
"$dnntrace" replay --list --op 120 "$t" >"$dir/list" 2>&1
[ "$(grep -c '^ *[0-9]' "$dir/list")" = 1 ] && grep -q ' eng70 ' "$dir/list" ||
	failed "replay --list --op 120 listed: $(cat "$dir/list")"

# restored plans can be built again; the handles' set-up kernels are no
# problem to build
"$dnntrace" replay --list tests/data/jax-attn-restored.dnnt >"$dir/list" 2>&1 ||
	failed "replay --list of restored plans exited $?"
[ "$(grep -c '^ *[0-9]' "$dir/list")" = 2 ] && [ "$(grep -c 'can be rebuilt' "$dir/list")" = 2 ] ||
	failed "replay --list of restored plans listed: $(cat "$dir/list")"

# no GPU here: a sentence, exit status 3, nothing written
if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
	echo "a CUDA driver is installed: the refusal is not checked"
else
	"$dnntrace" replay "$t" >"$dir/out" 2>"$dir/err"
	rc=$?
	[ "$rc" = 3 ] || failed "replay without a GPU exited $rc, not 3"
	grep -q '^dnntrace: cannot replay here: no CUDA driver here' "$dir/err" ||
		failed "replay without a GPU said: $(cat "$dir/err")"
	[ -e "$dir/h200-sample.replay.jsonl" ] && failed "replay without a GPU wrote results"
	[ "$(wc -l <"$dir/err")" = 1 ] || failed "replay without a GPU said more than one line"
fi

# options it refuses
for bad in "--engines some" "--budget 0" "--op x" "--top 2 --op 5"; do
	# shellcheck disable=SC2086
	"$dnntrace" replay $bad "$t" >/dev/null 2>&1
	rc=$?
	[ "$rc" = 2 ] || failed "replay $bad exited $rc, not 2"
done

# the report reads the results beside the trace: an engine-choice finding
cp tests/tools/replay/h200-sample.replay.jsonl "$dir/" || exit 2
"$dnntrace" report "$t" >"$dir/report" 2>&1 || failed "report exited $?"
sed -n '/engine choice/,/to choose it/p' "$dir/report" >"$dir/finding"
[ "$(grep -c 'engine choice' "$dir/finding")" = 2 ] || failed "report has not the 2 engine choices"
golden replay.finding "$dir/finding"
"$dnntrace" report --format json "$t" >"$dir/json" 2>&1 || failed "report --format json exited $?"
python3 - "$dir/json" tests/tools/replay/h200-sample.replay.jsonl <<'PY' || failed "the JSON report's engine choices are not the results'"
import json, sys
got = sorted(x["cost_ns"] for x in json.load(open(sys.argv[1]))["findings"]
             if x["type"] == "engine_choice")
want = []
for p in [json.loads(l) for l in open(sys.argv[2])][1:]:
    if p.get("best", -1) not in (-1, p.get("chosen", -1)):
        c = p["candidates"]
        runs = 3  # each convolution ran three times in the sample
        want.append(runs * (c[p["chosen"]]["median_ns"] - c[p["best"]]["median_ns"]))
assert got == sorted(want) and len(got) == 2, (got, want)
PY
# two ranks of one job, each replayed: a finding per problem, its cost
# over both
mkdir "$dir/job" && cp "$t" "$dir/job/r0.dnnt" && cp "$t" "$dir/job/r1.dnnt" || exit 2
for r in r0 r1; do cp tests/tools/replay/h200-sample.replay.jsonl "$dir/job/$r.replay.jsonl" || exit 2; done
"$dnntrace" report --format json "$dir/job" >"$dir/json2" 2>&1 || failed "report of two ranks exited $?"
python3 - "$dir/json" "$dir/json2" <<'PY' || failed "two ranks' engine choices are not one rank's twice"
import json, sys
one, two = ([x["cost_ns"] for x in json.load(open(f))["findings"] if x["type"] == "engine_choice"]
            for f in sys.argv[1:])
assert sorted(two) == sorted(2 * c for c in one), (one, two)
PY
# diff of two replayed runs: per problem, the recorded engine's replayed
# time and the best engine of each; the legacy convolution's recorded
# algorithm 20 % slower in the new replay, the backend one's within 2 %
# with another knob choice best
mkdir "$dir/base" "$dir/new" && cp "$t" "$dir/base/" && cp "$t" "$dir/new/" || exit 2
cp tests/tools/replay/h200-sample.replay.jsonl "$dir/base/" &&
	cp tests/tools/replay/h200-sample.next.replay.jsonl "$dir/new/h200-sample.replay.jsonl" || exit 2
for f in text markdown; do
	(cd "$dir" && "$dnntrace" diff --format $f base new) >"$dir/diff.$f" 2>&1 || failed "diff --format $f of replays exited $?"
	sed -n '/Replays:/,/Verdict/p' "$dir/diff.$f" >"$dir/replays.$f"
	golden "replay.diff.$f" "$dir/replays.$f"
done
(cd "$dir" && "$dnntrace" diff --format json base new) >"$dir/diff.json" 2>&1 || failed "diff --format json of replays exited $?"
python3 - "$dir/diff.json" <<'PY' || failed "diff's JSON replays are not the two results files'"
import json, sys
d = json.load(open(sys.argv[1]))
r = {x["legacy"]: x for x in d["replays"]}
assert len(d["replays"]) == 2 and d["counts"]["replay_moves"] == 1 and d["counts"]["best_changes"] == 1, d["counts"]
assert r[True]["verdict"] == "slower" and not r[True]["best_changed"], r[True]
assert r[True]["base"]["median_ns"] == 10372 and r[True]["new"]["median_ns"] == 12446, r[True]
assert r[False]["verdict"] == "same" and r[False]["best_changed"], r[False]
assert r[False]["new"]["best_knobs"] == "TILE_SIZE=12 IDX_MODE=1", r[False]
PY
# one run without a replay: nothing said of replays
rm "$dir/new/h200-sample.replay.jsonl"
(cd "$dir" && "$dnntrace" diff --format json base new) >"$dir/diff.json" 2>&1
grep -q '"replays"' "$dir/diff.json" && failed "diff with one run replayed compared replays"

# a replay stopped while writing a line: what comes before it is read
head -n 2 tests/tools/replay/h200-sample.replay.jsonl >"$dir/h200-sample.replay.jsonl"
sed -n 3p tests/tools/replay/h200-sample.replay.jsonl | head -c 100 >>"$dir/h200-sample.replay.jsonl"
"$dnntrace" report "$t" >"$dir/report" 2>"$dir/err" || failed "report with a line cut short exited $?"
[ -s "$dir/err" ] && failed "report with a line cut short said: $(cat "$dir/err")"
[ "$(grep -c 'engine choice' "$dir/report")" = 1 ] ||
	failed "report with a line cut short has not the legacy convolution's engine choice alone"
# a results file this build does not read: said, and left out
sed '1s/"version":1/"version":99/' tests/tools/replay/h200-sample.replay.jsonl >"$dir/h200-sample.replay.jsonl"
"$dnntrace" report "$t" >"$dir/report" 2>"$dir/err" || failed "report with a results file of another version exited $?"
grep -q 'its version 99 is not 1' "$dir/err" || failed "report said: $(cat "$dir/err")"
grep -q 'engine choice' "$dir/report" && failed "report used results of another version"

# the fusion what-if beside the price: tests/tools/replay/cuda-graph.replay.jsonl
# is what `dnntrace replay` measured of tests/data/cuda-graph.dnnt on the
# H100 it was recorded on: its convolution + bias add + ReLU built as one
# graph (11.3 us) against the convolution replayed (11.3 us) and the two
# kernels' times in the trace
cp tests/data/cuda-graph.dnnt tests/tools/replay/cuda-graph.replay.jsonl "$dir/" || exit 2
"$dnntrace" fusion "$dir/cuda-graph.dnnt" >"$dir/fusion" 2>&1 || failed "fusion exited $?"
golden replay.fusion "$dir/fusion"
"$dnntrace" fusion --format json "$dir/cuda-graph.dnnt" >"$dir/json" 2>&1 || failed "fusion --format json exited $?"
python3 - "$dir/json" tests/tools/replay/cuda-graph.replay.jsonl <<'PY' || failed "the JSON what-if is not the results'"
import json, sys
opp = json.load(open(sys.argv[1]))["fusion"]["opportunities"][0]
line = [json.loads(l) for l in open(sys.argv[2]) if '"fusion"' in l][0]
got = opp["measured"]
assert got["status"] == "measured" and got["gpu"] == "NVIDIA H100 80GB HBM3", got
assert (got["saving_ns"], got["unfused_ns"], got["fused_ns"]) == (line["saving_ns"], line["unfused_ns"], line["fused_ns"]), got
assert [s["ns"] for s in got["steps"]] == [s["ns"] for s in line["steps"]], got
PY
# --list, no GPU needed: each fusable chain and whether its what-if can be
# built (a convolution graph's can; so can cuBLAS GEMMs' epilogues and
# prologues, as cuDNN matmul graphs, but not a prologue of a ReLU
# backward)
"$dnntrace" replay --list "$dir/cuda-graph.dnnt" >"$dir/list" 2>&1 || failed "replay --list of the CUDA-graph trace exited $?"
sed -n '/^fusion what-ifs/,$p' "$dir/list" | grep -A1 "54 times, .*: convolution forward -> bias add -> ReLU" |
	grep -q "can be built fused" || failed "replay --list said: $(cat "$dir/list")"
"$dnntrace" replay --list tests/data/transformer-gemm.dnnt >"$dir/list" 2>&1 || failed "replay --list of the GEMM trace exited $?"
[ "$(sed -n '/^fusion what-ifs/,$p' "$dir/list" | grep -c "can be built fused")" = 6 ] ||
	failed "replay --list of the GEMM trace said: $(sed -n '/^fusion what-ifs/,$p' "$dir/list")"
exit $fail
