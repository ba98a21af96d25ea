#!/bin/sh
# test-dtt.sh - a library other than cuDNN, recorded end to end: dtt-prog
# calls the test library libdtt.so.1 and cuDNN under a shim built from
# both descriptions; dtt's calls must be read, shown and counted, and the
# cuDNN calls dtt makes inside its own calls (dttCheckBackend calls
# cudnnGetVersion) must be recorded nested: shown, but not counted as the
# program's. DNNTRACE is the tests' dnntrace, whose table of decoders
# holds dtt's (dtt-decoder.c): dttScale must be an op of dtt's, with its
# recipe, in ops, report and the exports.
#
# usage: test-dtt.sh DNNTRACE SHIM DTT-PROG
set -u
dnntrace=$1 shim=$2 prog=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() {
	echo "FAIL: $*"
	fail=1
}
# has FILE REGEX WHAT
has() {
	grep -Eq -- "$2" "$1" || {
		bad "$3: no line matches '$2' in:"
		cat "$1"
	}
}

DNNTRACE_LIB=$shim "$dnntrace" record -o "$tmp/t.dnnt" -- "$prog" \
	>"$tmp/out" 2>&1 || { bad "record failed"; cat "$tmp/out"; exit 1; }
has "$tmp/out" '^dtt 10200, workspace 16, cuDNN ([0-9]+) = \1$' "the program's output"

"$dnntrace" info "$tmp/t.dnnt" >"$tmp/info" 2>&1 || bad "info failed"
has "$tmp/info" '^format: +1\.10$' "info: format"
has "$tmp/info" '^DTT: +10200, built against 10200, loaded .*/libdtt\.so\.1\.2\.0$' "info: dtt"
has "$tmp/info" '^cuDNN: +[0-9.]+, built against [0-9.]+, loaded .*libcudnn\.so' "info: cuDNN"
# 10 dtt calls and 3 cuDNN calls the program made; 2 cuDNN calls dtt made
has "$tmp/info" "^calls: +13 the program's, 2 made by one library inside another's call" "info: calls"

"$dnntrace" dump "$tmp/t.dnnt" >"$tmp/dump" 2>&1 || bad "dump failed"
has "$tmp/dump" 'dttScale\(handle=0x[0-9a-f]+, n=4, alpha=(2|2\.0+|.*2\.0.*), x=0x[0-9a-f]+, y=0x[0-9a-f]+\)' "dump: dttScale"
has "$tmp/dump" 'dttGetWorkspaceSize\(.*size=>16\) = 0$' "dump: an output, a status"
has "$tmp/dump" 'dttSetStream\(handle=0x[0-9a-f]+, stream=0x2\)' "dump: a stream"
[ "$(grep -c 'cudnnGetVersion.*\[nested\]' "$tmp/dump")" = 2 ] ||
	bad "dump: two cudnnGetVersion calls marked nested: $(grep cudnnGetVersion "$tmp/dump")"
[ "$(grep -c 'API_CALL.*\[nested\]' "$tmp/dump")" = 2 ] ||
	bad "dump: only those nested"

# dttScale, twice one problem: ops of dtt's decoder, with their recipe
"$dnntrace" ops "$tmp/t.dnnt" >"$tmp/ops" 2>&1 || bad "ops failed"
[ "$(grep -Ec ' dttScale scale n=4 alpha=2 float$' "$tmp/ops")" = 2 ] ||
	bad "ops: two dttScale ops: $(cat "$tmp/ops")"
has "$tmp/ops" ' 16 B dttScale ' "ops: the workspace dtt said, once asked"
has "$tmp/ops" "^# 2 op executions; 0 kernels ran outside the libraries' calls$" \
	"ops: the totals"
"$dnntrace" ops --format json "$tmp/t.dnnt" >"$tmp/ops.json" 2>&1 ||
	bad "ops --format json failed"
python3 - "$tmp/ops.json" <<'PY' || fail=1
import json, sys
ops = json.load(open(sys.argv[1]))["ops"]
want = {"api": "dttScale", "operation": "scale", "kind": "pointwise",
        "params": {"n": 4, "alpha": 2}, "math": "fp32", "stream": "0x2"}
for op in ops:
    got = {k: op.get(k) for k in want}
    if got != want:
        print("FAIL: ops json: %s, want %s" % (got, want))
        sys.exit(1)
if len(ops) != 2:
    print("FAIL: ops json: %d ops, want 2" % len(ops))
    sys.exit(1)
PY

"$dnntrace" report "$tmp/t.dnnt" >"$tmp/report" 2>&1 || bad "report failed"
has "$tmp/report" '^totals +13 calls \(0 failed\), 2 op executions \(DTT 2, cuDNN 0\)' \
	"report: the program's calls, op executions by library"
has "$tmp/report" '^DTT +10200, .*/libdtt\.so\.1\.2\.0$' "report: a line for DTT"
has "$tmp/report" '^cuDNN +[0-9.]+, .*libcudnn\.so' "report: a line for cuDNN"
has "$tmp/report" '^DTT functions by host time: 8 of 8$' "report: DTT's functions"
has "$tmp/report" '^cuDNN functions by host time: 3 of 3$' "report: cuDNN's functions"
has "$tmp/report" ' pointwise fp32 scale n=4 alpha=2 float$' "report: dtt's problem"
has "$tmp/report" '^count +GPU time +of libraries ' "report: ops' share of every library's"
"$dnntrace" report --format json "$tmp/t.dnnt" >"$tmp/report.json" 2>&1 ||
	bad "report --format json failed"
python3 - "$tmp/report.json" <<'PY' || fail=1
import json, sys
r = json.load(open(sys.argv[1]))
libs = {l["library"]: l for l in r["wrapped"]}
got = {k: (libs[k]["display"], libs[k]["calls"], libs[k]["ops"]) for k in libs}
want = {"dtt": ("DTT", 10, 2), "cudnn": ("cuDNN", 3, 0)}
if got != want:
    print("FAIL: report json: wrapped %s, want %s" % (got, want))
    sys.exit(1)
apis = {a["name"]: a["library"] for a in r["apis"]}
if apis.get("dttScale") != "dtt" or apis.get("cudnnGetVersion") != "cudnn":
    print("FAIL: report json: apis' libraries %s" % apis)
    sys.exit(1)
ops = [(o["api"], o["count"]) for o in r["ops"]]
if ops != [("dttScale", 2)]:
    print("FAIL: report json: ops %s" % ops)
    sys.exit(1)
PY

"$dnntrace" export --format sqlite -o "$tmp/t.sqlite" "$tmp/t.dnnt" ||
	bad "export failed"
python3 - "$tmp/t.sqlite" <<'PY' || fail=1
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("""SELECT s.value, e.nested, COUNT(*) FROM CUDNN_EVENTS e
    JOIN StringIds s ON s.id = e.nameId GROUP BY 1, 2""").fetchall()
libs = db.execute("""SELECT s.value, e.library FROM CUDNN_EVENTS e
    JOIN StringIds s ON s.id = e.nameId""").fetchall()
for name, lib in libs:
    if lib != ("dtt" if name.startswith("dtt") else "cudnn"):
        print("FAIL: sqlite: %s of library %s" % (name, lib))
        sys.exit(1)
ops = db.execute("""SELECT s.value, o.library, o.kind, b.value FROM CUDNN_OPS o
    JOIN StringIds s ON s.id = o.nameId
    JOIN StringIds b ON b.id = o.briefId""").fetchall()
if ops != [("dttScale", "dtt", "pointwise", "scale n=4 alpha=2 float")] * 2:
    print("FAIL: sqlite: ops %s" % ops)
    sys.exit(1)
got = {(name, nested): n for name, nested, n in rows}
want = {("dttCreate", 0): 1, ("dttSetStream", 0): 1, ("dttGetStream", 0): 1,
        ("dttScale", 0): 2, ("dttGetWorkspaceSize", 0): 1,
        ("dttCheckBackend", 0): 2, ("dttDestroy", 0): 1, ("dttGetVersion", 0): 1,
        ("cudnnGetVersion", 1): 2, ("cudnnGetVersion", 0): 1,
        ("cudnnCreateTensorDescriptor", 0): 1,
        ("cudnnDestroyTensorDescriptor", 0): 1}
for k in sorted(set(got) | set(want)):
    if got.get(k) != want.get(k):
        print("FAIL: sqlite: %s nested=%s: %s calls, want %s" % (k + (got.get(k), want.get(k))))
        sys.exit(1)
PY

# the timelines: dtt's calls carry their library
for f in chrome perfetto; do
	"$dnntrace" export --format $f -o "$tmp/t.$f" "$tmp/t.dnnt" ||
		bad "export --format $f failed"
done
python3 - "$tmp/t.chrome" <<'PY' || fail=1
import json, sys
ev = json.load(open(sys.argv[1]))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
calls = [(e["name"], e["args"].get("library")) for e in ev
         if e.get("cat") == "cpu_op"]
bad = [c for c in calls if c[1] != ("dtt" if c[0].startswith("dtt") else None)]
if bad or not calls:
    print("FAIL: chrome: calls and their library arguments: %s" % calls)
    sys.exit(1)
PY
python3 "$(dirname "$0")/../../tools/check-perfetto.py" --text \
	"$tmp/t.perfetto" >"$tmp/perfetto.txt" || bad "perfetto: unreadable"
[ "$(grep -c "'dttScale' seq=[0-9]* library='dtt' " "$tmp/perfetto.txt")" = 2 ] ||
	bad "perfetto: dttScale's calls without their library: $(grep dttScale "$tmp/perfetto.txt")"
if grep "'cudnn[A-Za-z]*' .*library=" "$tmp/perfetto.txt"; then
	bad "perfetto: a cuDNN call has a library argument"
fi
exit $fail
