#!/bin/sh
# Every reading command says how each input ended, in every format, and
# `diff --fail-on` trips on an incomplete input unless told otherwise: a
# trace cut short (truncated), one with a damaged frame in the middle and
# one whose writer lost records, against the clean trace they were made
# from.
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
has "diff text" "cut.dnnt is incomplete: ended truncated" diff "$t" "$cut"
has "diff verdict" "FAILED (exit status 1): a trace is incomplete" diff --fail-on regression "$t" "$cut"
json "diff json" "not d['new']['complete'] and d['new']['files'][0]['ended'] == 'truncated' and d['gate']['tripped'] and d['gate']['incomplete_input'] and d['base']['complete']" diff --format json --fail-on regression "$t" "$cut"
has "diff markdown" "is incomplete" diff --format markdown "$t" "$dam"

# report, fusion, ops, info, dump: each says so, in each format
for f in cut damaged; do
	p=$tmp/$f.dnnt
	word=$([ $f = cut ] && echo truncated || echo damaged)
	has "report $f" "^ended     $word" report "$p"
	has "report $f, markdown" "\\*\\*ended\\*\\*: $word" report --format markdown "$p"
	json "report $f, json" "not d['complete'] and d['files'][0]['ended'] == '$word' and d['files'][0]['ended_how']" report --format json "$p"
	has "fusion $f" "is incomplete: ended $word" fusion "$p"
	json "fusion $f, json" "not d['complete'] and d['files'][0]['ended'] == '$word'" fusion --format json "$p"
	has "ops $f" "^# the trace is incomplete: ended $word" ops "$p"
	json "ops $f, json" "d['stats']['file_end'].startswith('$word') and d['stats']['file_end_how']" ops --format json "$p"
	has "info $f" "^ended: *$word" info "$p"
	has "dump $f" "warning: .*$word" dump "$p"
done
# several traces: the report names the one that did not end cleanly
mkdir "$tmp/job" && cp "$t" "$tmp/job/a.dnnt" && cp "$cut" "$tmp/job/b.dnnt"
has "report of a job" "^ended     1 of 2 cleanly" report "$tmp/job"
has "report of a job" "b.dnnt: incomplete, truncated" report "$tmp/job"
# what the damaged trace skipped, and what a cut one cannot count
has "info lists what was skipped" "^skipped: " info "$dam"
has "lost is unknown without an end" "^lost: *records: unknown" info "$cut"
json "clean report" "d['complete'] and d['files'][0]['complete'] and d['files'][0]['lost_exact']" report --format json "$t"

# traces whose every frame decodes but which are not what was written
# (tests/trace/corpus, from test-integrity): a frame removed, one copied,
# two files joined; on the recorded 1.5 trace they were made from, and on
# a sealed one, with END counting more calls than the file holds
root=$(dirname "$(dirname "$(dirname "$listing")")")
corpus=$root/tests/trace/corpus old=$root/tests/data/h200-sample.dnnt
for m in frame-removed frame-repeated joined; do
	p=$corpus/integrity-unsealed-$m.damaged.dnnt
	rc "gate on $m" 1 diff --fail-on regression "$old" "$p"
	rc "gate on $m, any" 1 diff --fail-on any "$old" "$p"
	has "info on $m" "^ended: *damaged" info "$p"
	json "report json on $m" "not d['complete'] and d['files'][0]['ended'] == 'damaged' and d['files'][0]['ended_how'] and not d['files'][0]['sealed']" report --format json "$p"
	has "info on sealed $m" "^ended: *damaged" info "$corpus/integrity-sealed-$m.damaged.dnnt"
done
has "END counting more calls" "^ended: *damaged.*counts 27 calls, 26 were read" info "$corpus/integrity-sealed-end-calls.damaged.dnnt"
has "a copied frame is read once" "^records: .*(26 calls" info "$corpus/integrity-sealed-frame-repeated.damaged.dnnt"
has "files joined" "another trace starts at offset 37606" info "$corpus/integrity-unsealed-joined.damaged.dnnt"
has "header checksum" "the header does not match its checksum" info "$corpus/integrity-sealed-header-flip.damaged.dnnt"
has "END lost 0, its LOSS records 5" "^lost: *at least 5 records" info "$corpus/integrity-sealed-end-lost.damaged.dnnt"
odd=$corpus/integrity-odd-names-statuses.clean.dnnt
has "sealed" "^sealed: *yes" info "$odd"
# a sound trace naming functions shorter than cuDNN's prefix, and returning
# statuses cuDNN never named: read whole, names printed as they are and
# statuses as their numbers
has "ops, a name shorter than 'cudnn'" "? cudn  FAILED$" ops "$odd"
has "ops, a status without a name" "= 9999$" ops --call 5 "$odd"
has "dump, a status without a name" ") = 2000000000$" dump "$odd"
has "report, a status without a name" "cu: 3 of 4 calls failed (last: 9999)" report --with-warmup "$odd"
has "unsealed" "^sealed: *no" info "$old"
rc "the recorded trace still gates clean" 0 diff --fail-on regression "$old" "$old"

# records the writer lost, counted exactly: the file ended cleanly, but
# what they held is missing all the same
"$synth" "$listing" "$tmp/lossy" --ranks 1 --steps 3000 --lose 5 >/dev/null || exit 1
lossy=$tmp/lossy/rank0.dnnt
rc "gate on a run with lost records" 1 diff --fail-on regression "$t" "$lossy"
rc "lost records, --incomplete error" 2 diff --fail-on regression --incomplete error "$lossy" "$t"
rc "lost records, --incomplete allow" 0 diff --fail-on regression --incomplete allow "$t" "$lossy"
has "diff names the lossy trace" "rank0.dnnt is incomplete: ended clean; 5 records lost" diff "$t" "$lossy"
json "diff json, lost records" "not d['new']['complete'] and not d['new']['files'][0]['complete'] and d['new']['files'][0]['lost'] == 5 and d['gate']['incomplete_input']" diff --format json "$t" "$lossy"
has "report, lost records" "the trace is incomplete, 5 records lost (5 buffers full)" report "$lossy"
json "report json, lost records" "not d['complete'] and not d['files'][0]['complete'] and d['files'][0]['ended'] == 'clean' and d['files'][0]['lost'] == 5" report --format json "$lossy"
has "fusion, lost records" "is incomplete: ended clean; 5 records lost" fusion "$lossy"
json "fusion json, lost records" "not d['complete']" fusion --format json "$lossy"
has "ops, lost records" "^# the trace is incomplete: .*5 records lost" ops "$lossy"
json "ops json, lost records" "not d['stats']['complete'] and d['stats']['lost'] == 5" ops --format json "$lossy"
has "info, lost records" "^lost: *5 records (5 buffers full)" info "$lossy"
has "dump, lost records" "warning: .*5 records lost (5 buffers full) while recording" dump "$lossy"
# a call that is not there
has "ops --call" "no call 999999 in this trace" ops --call 999999 "$t"
rc "ops --call" 2 ops --call 999999 "$t"

[ $fail = 0 ] && echo "every command says how its inputs ended"
exit $fail
