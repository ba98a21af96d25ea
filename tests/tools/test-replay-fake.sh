#!/bin/sh
# dnntrace replay end to end without a GPU: a stand-in for CUDA's driver
# and cuDNN (fake-gpu.c, where engine or algorithm FAKE_FAST runs in 5 us
# and every other in 10 us) under the names replay loads. On the bundled
# sample's trace: a GPU of another model refused (3) unless --any-gpu;
# both convolutions rebuilt and measured, and its softmax, activation and
# pooling (the recorded call, their one candidate),
# the fast engine and algorithm found best and the recorded ones' replays
# uncertain against the trace; report's two engine choices; a replay
# stopped half way continued; --op, --top, --cold-cache, --engines all
# (every engine, and each knob over its range: TILE_SIZE at 3 runs in
# 4 us; two knobs that do better together than either alone found);
# --budget a bound when plans, engine configs, heuristics or runs
# are slow, or an engine never returns, what it left out said; a short
# budget shared by the problems' recorded GPU time, each problem's
# recorded engine timed before its others are asked for; the
# recorded time of an execution whose kernels ran side by side;
# calibration by the recorded engine's kernels, as the trace timed them
# (the stand-in linked as libcupti.so.13 too), or by the events where
# CUPTI does not load.
# A batch normalization made again from a call as the decoder keeps it
# (test-replay-legacy-ops.c); a layer normalization built as a backend
# graph (synth-trace's norm scenario) rebuilt and measured.
# The fusion what-if of the CUDA-graph trace's chain: measured,
# continued, refused (other heads: test-replay-fuse-fake.sh).
# usage: test-replay-fake.sh DNNTRACE FAKE_GPU_LIBRARY SOURCE_ROOT
#                            LEGACY_OPS_TEST SYNTH_TRACE
set -u
abs() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
dnntrace=$(abs "$1") fake=$(abs "$2") root=$3 legacy_ops=$(abs "$4") synth=$(abs "$5")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. "$(dirname "$0")/fake-gpu-env.sh"
cp "$root/tests/data/h200-sample.dnnt" "$dir/" || exit 2
t=$dir/h200-sample.dnnt
fail=0
failed() { echo "FAIL: $*"; fail=1; }
# check RESULTS PYTHON: the results file's lines as `lines`, the
# convolutions measured as `m` (the legacy one, then the backend one), the
# other legacy calls measured as `o`, the fusion what-ifs as `f`
check() {
	python3 - "$1" "$2" <<'PY' || failed "$1: $2"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
conv = lambda p: "Convolution" in p["api"] or not p["legacy"]
probs = [p for p in lines[1:] if "problem" in p]
m = sorted((p for p in probs if p["status"] == "measured" and conv(p)), key=lambda p: not p["legacy"])
o = sorted((p["api"] for p in probs if p["status"] == "measured" and not conv(p)))
f = [p for p in lines[1:] if "fusion" in p]
assert eval(sys.argv[2]), [(p.get("problem", p.get("fusion", ""))[:40], p["status"], p.get("best")) for p in lines[1:]]
PY
}

FAKE_GPU_NAME="NVIDIA H100 80GB HBM3" "$dnntrace" replay -q "$t" 2>"$dir/err"
[ $? = 3 ] || failed "another GPU model: exit status $?, not 3"
grep -q "recorded on an NVIDIA H200, this GPU is an NVIDIA H100" "$dir/err" ||
	failed "another GPU model said: $(cat "$dir/err")"
FAKE_GPU_NAME="NVIDIA H100 80GB HBM3" "$dnntrace" replay -q --any-gpu -o "$dir/any.jsonl" "$t" ||
	failed "--any-gpu: exit status $?"
check "$dir/any.jsonl" 'lines[0]["any_gpu"] and lines[0]["gpu"].startswith("NVIDIA H100")'

"$dnntrace" replay --budget 30 "$t" 2>"$dir/err" || failed "replay: exit status $?: $(cat "$dir/err")"
r=$dir/h200-sample.replay.jsonl
check "$r" 'len(lines) == 6 and len(m) == 2 and all(p.get("reason") for p in lines[1:] if p["status"] != "measured")'
# the recorded engine first; the fast one best; 10 us against 9.8 and 6.6
check "$r" '[p["candidates"][0]["source"] for p in m] == ["recorded"] * 2 and [p["candidates"][p["best"]]["engine"] for p in m] == [1, 1]'
check "$r" '[p["replayed_ns"] for p in m] == [10000, 10000] and [p["uncertain"] for p in m] == [False, True]'
check "$r" 'all(c["agrees"] for p in m for c in p["candidates"][1:]) and m[1]["candidates"][m[1]["best"]]["workspace"] == 256'
# softmax, activation and pooling made again: the recorded call, timed
check "$r" 'o == ["cudnnActivationForward", "cudnnPoolingForward", "cudnnSoftmaxForward"]'
check "$r" 'all(len(p["candidates"]) == 1 and p["replayed_ns"] == 10000 and p["best"] == 0 for p in lines[1:] if p["api"] in o)'
grep -q '^replay: \[2/5\]' "$dir/err" || failed "no progress on stderr"
"$dnntrace" report "$t" >"$dir/report" || failed "report: exit status $?"
[ "$(grep -c 'engine choice' "$dir/report")" = 2 ] || failed "report has not 2 engine choices"

# stopped while writing the third line: continued from the second
head -n 2 "$r" >"$dir/cut" && sed -n 3p "$r" | head -c 50 >>"$dir/cut" && mv "$dir/cut" "$r"
"$dnntrace" replay --budget 30 "$t" 2>"$dir/err" || failed "continuing: exit status $?"
grep -q "continuing .*: 1 problems measured before" "$dir/err" || failed "continuing said: $(cat "$dir/err")"
check "$r" 'len(lines) == 6 and len(m) == 2'

# calibration as the trace measured: each execution two kernels of half
# its time with 2 us between them; the events see 12 us of the recorded
# engines, CUPTI's kernels 10 us, which calibration holds against the
# trace's 9.8 and 6.6 us
FAKE_GAP_US=2 "$dnntrace" replay -q --top 2 -o "$dir/gap.jsonl" "$t" || failed "kernels with gaps: exit status $?"
check "$dir/gap.jsonl" '[p["replayed_ns"] for p in m] == [12000, 12000] and [p.get("replayed_kernels_ns") for p in m] == [10000, 10000]'
check "$dir/gap.jsonl" '[p["calibration_by"] for p in m] == ["kernels"] * 2 and [p["uncertain"] for p in m] == [False, True] and abs(m[0]["calibration"] - 10000 / m[0]["recorded_ns"]) < 1e-9'
check "$dir/gap.jsonl" '[p["candidates"][p["best"]]["median_ns"] for p in m] == [7000, 7000]'
# the report's calibration, the same
cp "$dir/gap.jsonl" "$r" && "$dnntrace" report "$t" >"$dir/report" || failed "report, by kernels: exit status $?"
grep -q "calibration: the recorded engine replayed in 10.0 us of kernels, 9792 ns in the trace (1.02x)$" "$dir/report" ||
	failed "the report's calibration: $(grep calibration "$dir/report")"
# a libcupti.so.13 without CUPTI's functions: calibration by the events,
# said on stderr and in the results
libc=$(grep -m1 -o '/[^ ]*/libc\.so\.6' /proc/self/maps)
mkdir "$dir/nocupti" && ln -s "$fake" "$dir/nocupti/libcuda.so.1" && ln -s "$fake" "$dir/nocupti/libcudnn.so.9" &&
	ln -s "$libc" "$dir/nocupti/libcupti.so.13" || exit 2
LD_LIBRARY_PATH=$dir/nocupti FAKE_GAP_US=2 "$dnntrace" replay --top 2 -o "$dir/nocupti.jsonl" "$t" 2>"$dir/err" ||
	failed "no CUPTI: exit status $?"
check "$dir/nocupti.jsonl" '[p["calibration_by"] for p in m] == ["events"] * 2 and not any("replayed_kernels_ns" in p for p in m) and [p["replayed_ns"] for p in m] == [12000, 12000] and [p["uncertain"] for p in m] == [True, True]'
grep -q "^replay: CUPTI cannot be loaded .*: calibration compares the events' times" "$dir/err" ||
	failed "no CUPTI, not said: $(head -2 "$dir/err")"

"$dnntrace" replay -q --op 120 -o "$dir/op.jsonl" "$t" || failed "--op: exit status $?"
check "$dir/op.jsonl" 'len(lines) == 2 and m[0]["engine"] == 70'
"$dnntrace" replay -q --top 2 --cold-cache -o "$dir/cold.jsonl" "$t" || failed "--cold-cache: exit status $?"
check "$dir/cold.jsonl" 'lines[0]["cold_cache"] and len(lines) == 3 and [p["replayed_ns"] for p in m] == [10000, 10000]'
"$dnntrace" replay -q --op 120 --engines all -o "$dir/all.jsonl" "$t" || failed "--engines all: exit status $?"
# every engine, and each one's knob over its range: TILE_SIZE=3 best
check "$dir/all.jsonl" 'lines[0]["engines"] == "all" and sum(c["source"] == "all" for c in m[0]["candidates"]) > 50'
check "$dir/all.jsonl" 'm[0]["candidates"][m[0]["best"]].get("knobs") == "TILE_SIZE=3" and m[0]["candidates"][m[0]["best"]]["median_ns"] == 4000'
# engine 5 of two knobs (FAKE_PAIR): 8 us at its defaults, each knob
# alone no better (9 us at 2, 12 otherwise), both at 2 3 us: found by
# the combinations of its knobs, said as such
FAKE_PAIR=5 "$dnntrace" replay -q --op 120 --engines all -o "$dir/pair.jsonl" "$t" || failed "two knobs: exit status $?"
check "$dir/pair.jsonl" '[(c["engine"], c["knobs"], c["source"], c["median_ns"], c["agrees"]) for c in [m[0]["candidates"][m[0]["best"]]]] == [(5, "TILE_SIZE=2 STAGES=2", "combination", 3000, True)]'
check "$dir/pair.jsonl" 'sorted(c["median_ns"] for c in m[0]["candidates"] if c["engine"] == 5 and c["source"] == "all") == [8000, 8000, 8000, 9000, 9000, 12000, 12000, 12000, 12000]'
# The fusion what-if: cuda-graph.dnnt's convolution + bias add + ReLU
# (recorded on an H100) built as one graph, which the fake runs in 5 us
# (engine 1) + 1 us a pointwise node; unfused, the recorded engine's
# 10 us and the two kernels' times in the trace (5288 and 2307 ns), each
# also timed alone as a pointwise graph (2 us).
h100="NVIDIA H100 80GB HBM3"
cp "$root/tests/data/cuda-graph.dnnt" "$dir/" || exit 2
g=$dir/cuda-graph.dnnt
FAKE_GPU_NAME=$h100 "$dnntrace" replay --budget 30 "$g" 2>"$dir/err" ||
	failed "replay of the CUDA-graph trace: exit status $?: $(cat "$dir/err")"
rg=$dir/cuda-graph.replay.jsonl
check "$rg" 'len(f) == 1 and f[0]["status"] == "measured" and f[0]["pattern"] == "convolution forward + pointwise epilogue"'
check "$rg" '(f[0]["fused_ns"], f[0]["unfused_ns"], f[0]["saving_ns"]) == (7000, 17595, 10595) and f[0]["fused"]["engine"] == 1'
check "$rg" '[(s["what"], s["source"], s["ns"], s.get("graph_ns")) for s in f[0]["steps"]] == [("convolution forward", "replayed", 10000, None), ("bias add", "recorded", 5288, 2000), ("ReLU", "recorded", 2307, 2000)]'
check "$rg" 'f[0]["count"] == 54 and f[0]["priced_ns"] == 7596 and f[0]["engines_tried"] == 3'
# right after its head's problem, before the smaller problems
check "$rg" 'lines[1]["problem"] == f[0]["head"] and "fusion" in lines[2]'
grep -q "fusion what-if: convolution forward + pointwise epilogue" "$dir/err" || failed "no what-if progress: $(cat "$dir/err")"
# the replay reads the whole run (54 times): so does fusion here
"$dnntrace" fusion --with-warmup "$g" >"$dir/fusion" || failed "fusion: exit status $?"
grep -q "^   measured:   saving 10.6 us per time (priced: 7596 ns), 572.1 us in all: unfused 17.6 us, fused 7000 ns" "$dir/fusion" ||
	failed "fusion does not show the measured saving: $(grep -A2 measured "$dir/fusion")"
# continued: the what-if is not measured again
FAKE_GPU_NAME=$h100 "$dnntrace" replay --budget 30 "$g" 2>"$dir/err" || failed "continuing the CUDA-graph replay: exit status $?"
grep -q "fusion what-if" "$dir/err" && failed "the what-if was measured again"
check "$rg" 'len(f) == 1'
# a fused graph cuDNN refuses: not measured, with cuDNN's words
FAKE_GPU_NAME=$h100 FAKE_NO_FUSION=1 "$dnntrace" replay -q -o "$dir/no.jsonl" "$g" || failed "replay, no fusion: exit status $?"
check "$dir/no.jsonl" 'f[0]["status"] == "not_built" and f[0]["reason"].startswith("the fused graph: OPERATIONGRAPH_DESCRIPTOR cannot be built again: CUDNN_STATUS_BAD_PARAM") and "fused_ns" not in f[0]'
cp "$dir/no.jsonl" "$rg"
"$dnntrace" fusion "$g" | grep -q "^   measured:   not measured: the fused graph: OPERATIONGRAPH_DESCRIPTOR cannot be built again" ||
	failed "fusion does not say why the what-if was not measured"
# The budget bounds the whole replay: each check below takes the wall
# time of a 1 s budget, in ms (past 1.5 s: not a bound)
ms() { echo $(($(date +%s%N) / 1000000)); }
bounded() { # NAME START [MS]: elapsed since START within MS (1500)
	took=$(($(ms) - $2))
	[ "$took" -le "${3:-1500}" ] || failed "$1 took $took ms for a 1 s budget"
}
# plans that take 50 ms each to build: --engines all stops building them
# when the problem's budget is spent, and says so: each candidate not
# timed by its status, the problem by cut_short
start=$(ms)
FAKE_PLAN_US=50000 "$dnntrace" replay --op 120 --engines all --budget 1 -o "$dir/slow.jsonl" "$t" 2>"$dir/err" ||
	failed "--engines all with slow plans: exit status $?"
bounded "--engines all with slow plans" "$start"
check "$dir/slow.jsonl" 'm[0]["candidates"][0]["status"] == "ok" and any(c["status"] == "budget" for c in m[0]["candidates"])'
check "$dir/slow.jsonl" 'm[0]["cut_short"]["reason"] == "budget" and m[0]["cut_short"]["not_timed"] == sum(c["status"] == "budget" for c in m[0]["candidates"]) > 0'
# progress: each candidate, of how many, as it is timed
grep -q '^replay:   \[1\] eng70 (recorded): 10.0 us, ' "$dir/err" || failed "no progress of the recorded engine: $(head -5 "$dir/err")"
grep -q '^replay:   \[2/[0-9]*\] eng1 (heuristic_a): 5.0 us, ' "$dir/err" || failed "no progress of the candidates: $(head -5 "$dir/err")"
grep -q 'its budget was spent before every engine was timed' "$dir/err" || failed "the cut was not said: $(tail -3 "$dir/err")"
# engines that take 20 ms each to finalize (72 of them, a config per knob
# value): making their configs stops at half the budget, every engine
# with its default knobs before any knob moved, then the knobs of the
# fastest engines first; those not reached said
start=$(ms)
FAKE_ENGINE_US=20000 "$dnntrace" replay -q --op 120 --engines all --budget 1 -o "$dir/engines.jsonl" "$t" ||
	failed "--engines all with slow engines: exit status $?"
bounded "--engines all with slow engines" "$start"
check "$dir/engines.jsonl" 'm[0]["candidates"][0]["status"] == "ok" and 1 < len(m[0]["candidates"]) < 100 and 0 < m[0]["cut_short"]["engines_not_listed"] <= 72'
check "$dir/engines.jsonl" '[bool(c.get("knobs")) for c in m[0]["candidates"] if c["source"] == "all"] == sorted(bool(c.get("knobs")) for c in m[0]["candidates"] if c["source"] == "all")'
# then the knobs of the fastest engine (1, FAKE_FAST) first
check "$dir/engines.jsonl" '[c["engine"] for c in m[0]["candidates"] if c.get("knobs")][0] == 1'
# configs cuDNN refuses (TILE_SIZE=2): each said with its engine and knob
FAKE_REFUSE_TILE=2 "$dnntrace" replay -q --op 120 --engines all --budget 5 -o "$dir/refused.jsonl" "$t" ||
	failed "--engines all with refused configs: exit status $?"
check "$dir/refused.jsonl" 'len([c for c in m[0]["candidates"] if c["status"] == "cuDNN refused the engine config" and c["knobs"] == "TILE_SIZE=2" and c["engine"] >= 0]) > 10'
# heuristics that take 600 ms each: the second and third not asked
start=$(ms)
FAKE_HEUR_US=600000 "$dnntrace" replay -q --op 120 --budget 1 -o "$dir/heur.jsonl" "$t" ||
	failed "slow heuristics: exit status $?"
bounded "slow heuristics" "$start"
check "$dir/heur.jsonl" 'm[0]["candidates"][0]["status"] == "ok" and m[0]["cut_short"]["heuristics_not_asked"] == 2'
# one heuristic longer than the whole budget: the recorded engine timed
# before any heuristic is asked, so that the problem has its calibration
FAKE_HEUR_US=1200000 "$dnntrace" replay -q --op 120 --budget 1 -o "$dir/heur1.jsonl" "$t" ||
	failed "a heuristic longer than the budget: exit status $?"
check "$dir/heur1.jsonl" 'm[0]["candidates"][0]["status"] == "ok" and m[0]["replayed_kernels_ns"] == 10000 and "calibration" in m[0] and m[0]["cut_short"]["heuristics_not_asked"] == 2'
# a budget too short for every problem (heuristics of 400 ms, the legacy
# convolution's too; 1.5 s for five problems): shared by their recorded
# GPU time, the largest (the legacy convolution, 45 %) has its recorded
# algorithm timed and calibrated, and every algorithm cuDNN offers; the
# backend one, next, its recorded engine before its first heuristic
FAKE_HEUR_US=400000 "$dnntrace" replay --budget 1.5 -o "$dir/short.jsonl" "$t" 2>"$dir/err" ||
	failed "a short budget: exit status $?"
check "$dir/short.jsonl" 'm[0]["legacy"] and m[0]["candidates"][0]["status"] == "ok" and "calibration" in m[0] and len(m[0]["candidates"]) == 3 and "cut_short" not in m[0]'
check "$dir/short.jsonl" 'not m[1]["legacy"] and m[1]["candidates"][0]["status"] == "ok" and "calibration" in m[1]'
# the recorded engine's config longer than the whole budget: no engine
# timed, so the problem is not said to be measured
FAKE_ENGINE_US=1200000 "$dnntrace" replay -q --op 120 --budget 1 -o "$dir/heur2.jsonl" "$t" ||
	failed "an engine config longer than the budget: exit status $?"
check "$dir/heur2.jsonl" 'probs[0]["status"] == "failed" and "budget" in probs[0]["reason"] and probs[0]["best"] == -1 and all(c["status"] == "budget" for c in probs[0]["candidates"])'
# continued with time enough, that problem is measured again (its new
# line is the one read); a third run has nothing left to do for it
"$dnntrace" replay -q --op 120 --budget 30 -o "$dir/heur2.jsonl" "$t" ||
	failed "continuing a replay cut short: exit status $?"
check "$dir/heur2.jsonl" 'len(probs) == 2 and probs[1]["problem"] == probs[0]["problem"] and probs[1]["status"] == "measured" and probs[1]["best"] >= 0'
"$dnntrace" replay -q --op 120 --budget 30 -o "$dir/heur2.jsonl" "$t" ||
	failed "continuing a replay again: exit status $?"
check "$dir/heur2.jsonl" 'len(probs) == 2'
# runs that take 200 ms each: the recorded engine timed in the runs that
# fit (one at least), the rest left for the budget
start=$(ms)
FAKE_RUN_US=200000 "$dnntrace" replay -q --op 120 --budget 1 -o "$dir/runs.jsonl" "$t" ||
	failed "slow runs: exit status $?"
# (a run under way is not cut, 200 ms here, and the start-up counts: 1.4 s
# on an idle machine, up to 1.6 s on a loaded one)
bounded "slow runs" "$start" 2000
check "$dir/runs.jsonl" 'm[0]["candidates"][0]["status"] == "ok" and 1 <= m[0]["candidates"][0]["runs"] < 16 and m[0]["cut_short"]["not_timed"] >= 1'
# an engine whose runs never return (28, the heuristics' third): at the
# budget's end and its grace (5.1 s), what was measured is written, the
# engine in hand said, and the replay ends
start=$(ms)
FAKE_HANG=28 "$dnntrace" replay --op 120 --budget 1 -o "$dir/hang.jsonl" "$t" 2>"$dir/err" ||
	failed "an engine that never returns: exit status $?"
took=$(($(ms) - start))
[ "$took" -le 7000 ] || failed "an engine that never returns: took $took ms for a 1 s budget"
check "$dir/hang.jsonl" '[(c["engine"], c["status"]) for c in m[0]["candidates"]] == [(70, "ok"), (1, "ok"), (28, "budget: it had not ended when the budget was spent")] and m[0]["cut_short"]["not_timed"] == 1'
grep -q "had not returned when the budget was spent" "$dir/err" || failed "the stall was not said: $(tail -2 "$dir/err")"
# a convolution whose engine (eng1) runs four of its nine kernels beside
# the longest, recorded on an H200: the recorded time of an execution is
# their span, 461.9 us (the median), as replay times it, not their sum,
# 917.2 us
cp "$root/tests/tools/replay/h200-engine-choice.dnnt" "$dir/" || exit 2
"$dnntrace" replay -q --budget 2 -o "$dir/span.jsonl" "$dir/h200-engine-choice.dnnt" ||
	failed "replay of the engine-choice trace: exit status $?"
check "$dir/span.jsonl" 'lines[1]["recorded_ns"] == 461915 and lines[1]["engine"] == 1'
"$legacy_ops" || failed "a batch normalization was not made again"
# a backend normalization graph (recorded on an H100): rebuilt, its
# engine and the heuristics' timed, the fast one (1) best
"$synth" "$root/shim/libs/cudnn-api.txt" "$dir" --scenario norm --steps 4 || exit 2
"$dnntrace" replay -q --any-gpu "$dir/norm.dnnt" || failed "replay of a normalization graph: exit status $?"
check "$dir/norm.replay.jsonl" 'len(lines) == 2 and len(m) == 1 and m[0]["candidates"][0]["status"] == "ok" and m[0]["candidates"][m[0]["best"]]["engine"] == 1 and "NORM_FORWARD" in m[0]["problem"]'
exit $fail
