#!/bin/sh
# Every reading command says how each input ended, in every format, and
# `diff --fail-on` trips on an input that did not end cleanly unless told
# otherwise: a trace cut short (truncated) and one with a damaged frame in
# the middle, against the clean trace they were made from.
# usage: test-incomplete.sh DNNTRACE SYNTH_TRACE API_LISTING
set -u
dnntrace=$1 synth=$2 listing=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() {
	echo "FAIL: $*"
	fail=1
}
# has NAME PATTERN ARGS...: dnntrace ARGS prints a line matching PATTERN
has() {
	name=$1 pat=$2
	shift 2
	"$dnntrace" "$@" >"$tmp/out" 2>&1
	grep -q -- "$pat" "$tmp/out" || {
		bad "$name: 'dnntrace $*' does not say '$pat'"
		sed 's/^/    /' "$tmp/out" | head -20
	}
}
# rc NAME STATUS ARGS...: dnntrace ARGS exits with STATUS
rc() {
	name=$1 want=$2
	shift 2
	"$dnntrace" "$@" >/dev/null 2>&1
	got=$?
	[ "$got" = "$want" ] || bad "$name: 'dnntrace $*' exited $got, expected $want"
}
# json NAME EXPR ARGS...: the JSON dnntrace ARGS prints makes EXPR true (d)
json() {
	name=$1 expr=$2
	shift 2
	"$dnntrace" "$@" 2>/dev/null | python3 -c "import json, sys
d = json.load(sys.stdin)
sys.exit(0 if ($expr) else 1)" || bad "$name: 'dnntrace $*': not ($expr)"
}

"$synth" "$listing" "$tmp" --ranks 1 --steps 3000 >/dev/null || exit 1
t=$tmp/rank0.dnnt
size=$(wc -c <"$t")
head -c $((size * 2 / 3)) "$t" >"$tmp/cut.dnnt"
# three bytes flipped half way into the file: inside a data frame
python3 - "$t" "$tmp/damaged.dnnt" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
for i in range(3):
    b[len(b) // 2 + i * 7] ^= 0x5a
open(sys.argv[2], "wb").write(b)
PY
cut=$tmp/cut.dnnt dam=$tmp/damaged.dnnt

# the CI gate
rc "clean diff" 0 diff --fail-on regression "$t" "$t"
rc "gate on a truncated new run" 1 diff --fail-on regression "$t" "$cut"
rc "gate on a truncated base run" 1 diff --fail-on regression "$cut" "$t"
rc "gate on a damaged run" 1 diff --fail-on engine-change "$t" "$dam"
rc "--incomplete error" 2 diff --fail-on regression --incomplete error "$t" "$cut"
rc "--incomplete allow" 0 diff --fail-on regression --incomplete allow "$t" "$cut"
rc "no gate, no trip" 0 diff "$t" "$cut"
rc "bad --incomplete" 2 diff --incomplete maybe "$t" "$cut"
has "diff text" "cut.dnnt did not end cleanly: truncated" diff "$t" "$cut"
has "diff verdict" "FAILED (exit status 1): a trace did not end cleanly" diff --fail-on regression "$t" "$cut"
json "diff json" "not d['new']['complete'] and d['new']['files'][0]['ended'] == 'truncated' and d['gate']['tripped'] and d['gate']['incomplete_input'] and d['base']['complete']" diff --format json --fail-on regression "$t" "$cut"
has "diff markdown" "did not end cleanly" diff --format markdown "$t" "$dam"

# report, fusion, ops, info, dump: each says so, in each format
for f in cut damaged; do
	p=$tmp/$f.dnnt
	word=$([ $f = cut ] && echo truncated || echo damaged)
	has "report $f" "^ended     $word" report "$p"
	has "report $f, markdown" "\\*\\*ended\\*\\*: $word" report --format markdown "$p"
	json "report $f, json" "not d['complete'] and d['files'][0]['ended'] == '$word' and d['files'][0]['ended_how']" report --format json "$p"
	has "fusion $f" "did not end cleanly: $word" fusion "$p"
	json "fusion $f, json" "not d['complete'] and d['files'][0]['ended'] == '$word'" fusion --format json "$p"
	has "ops $f" "^# the trace did not end cleanly: $word" ops "$p"
	json "ops $f, json" "d['stats']['file_end'].startswith('$word') and d['stats']['file_end_how']" ops --format json "$p"
	has "info $f" "^ended: *$word" info "$p"
	has "dump $f" "warning: .*$word" dump "$p"
done
# several traces: the report names the one that did not end cleanly
mkdir "$tmp/job" && cp "$t" "$tmp/job/a.dnnt" && cp "$cut" "$tmp/job/b.dnnt"
has "report of a job" "^ended     1 of 2 cleanly" report "$tmp/job"
has "report of a job" "b.dnnt: truncated" report "$tmp/job"
# what the damaged trace skipped, and what a cut one cannot count
has "info lists what was skipped" "^skipped: " info "$dam"
has "lost is unknown without an end" "^lost: *records: unknown" info "$cut"
json "clean report" "d['complete'] and d['files'][0]['lost_exact']" report --format json "$t"
# a call that is not there
has "ops --call" "no call 999999 in this trace" ops --call 999999 "$t"
rc "ops --call" 2 ops --call 999999 "$t"

[ $fail = 0 ] && echo "every command says how its inputs ended"
exit $fail
