#!/bin/sh
# `report --format html` and `diff --format html` as a browser and a reader
# get them: well-formed (xmllint, else Python's html.parser), self-contained
# (no script, no link, nothing fetched), every picture with a title and a
# description, text escaped, NO_COLOR honoured, an incomplete trace said at
# the top as the text report says it, and the pictures' numbers those of the
# text report.
# usage: test-html.sh DNNTRACE SYNTH_TRACE API_LIST
set -u
dnntrace=$1 synth=$2 api=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset NO_COLOR
fail=0
no() { echo "FAIL: $*"; fail=1; }

"$synth" "$api" "$tmp" --ranks 2 --steps 4 >/dev/null || exit 1
mkdir "$tmp/changed" "$tmp/long"
"$synth" "$api" "$tmp/changed" --ranks 2 --steps 4 --variant changed >/dev/null || exit 1
# long enough for the busy histogram to widen its bins many times
"$synth" "$api" "$tmp/long" --scenario fusion --steps 2000 >/dev/null || exit 1

# well-formed, self-contained, and each <svg> opens with <title> and <desc>
check_page() { # check_page FILE
	if command -v xmllint >/dev/null 2>&1; then
		xmllint --noout "$1" || no "$1 is not well-formed (xmllint)"
	fi
	python3 - "$1" <<'EOF' || no "$1 fails the HTML checks above"
import sys
from html.parser import HTMLParser

VOID = {"meta", "br", "hr", "img", "input", "link", "col", "wbr"}

class Check(HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.errors, self.svgs = [], [], 0
        self.want = []  # what must open next, inside an <svg>

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("script", "link", "iframe", "img", "object", "embed"):
            self.errors.append("a <%s>" % tag)
        for k in ("src", "href"):
            if k in a:
                self.errors.append("%s=%r" % (k, a[k]))
        if self.want:
            if tag != self.want[0]:
                self.errors.append("<svg> #%d: <%s> before <%s>"
                                   % (self.svgs, tag, self.want[0]))
                self.want = []
            else:
                self.want.pop(0)
        if tag == "svg":
            self.svgs += 1
            self.want = ["title", "desc"]
            if a.get("role") != "img" or "viewbox" not in a:
                self.errors.append("<svg> #%d lacks role or viewBox" % self.svgs)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append("</%s> closes <%s>" % (tag, self.stack[-1:]))
        else:
            self.stack.pop()

text = open(sys.argv[1], encoding="utf-8").read()
c = Check()
c.feed(text)
c.close()
if c.stack:
    c.errors.append("unclosed: %s" % c.stack)
for bad in ("http://", "https://", "@import", "url("):
    rest = text.replace('xmlns="http://www.w3.org/2000/svg"', "")
    if bad in rest:
        c.errors.append("%r in the page" % bad)
if not text.startswith("<!DOCTYPE html>") or c.svgs == 0:
    c.errors.append("no doctype, or no picture")
for e in c.errors:
    print(sys.argv[1] + ": " + e)
sys.exit(1 if c.errors else 0)
EOF
}

r=$tmp/report.html
"$dnntrace" report --format html -o "$r" "$tmp" || no "report --format html exited $?"
check_page "$r"
d=$tmp/diff.html
"$dnntrace" diff --format html --fail-on regression -o "$d" "$tmp" "$tmp/changed"
[ $? = 1 ] || no "diff --format html: the gate's exit status is not 1, as in text"
check_page "$d"
grep -q '<tr class="slower">' "$d" || no "diff: slower operations are not marked"
grep -q 'class="failed">gate --fail-on regression: FAILED' "$d" ||
	no "diff: the verdict is not said as the text diff says it"

# the pictures and their tables are there
for what in "GPU time by library" "GPU time by operation family" \
	"GPU busy over the run" \
	"GPU time per rank" "The problems against the roofline"; do
	grep -q "<title id=\"svg[0-9]*-t\">$what</title>" "$r" ||
		no "report: no picture of $what"
done

# NO_COLOR: the monochrome palette
NO_COLOR=1 "$dnntrace" report --format html "$tmp" | grep -q '^<html lang="en" class="mono">' ||
	no "NO_COLOR does not make the page monochrome"
grep -q 'class="mono"' "$r" && no "the page is monochrome without NO_COLOR"

# text is escaped: a file name with markup in it
odd="$tmp/odd"
mkdir "$odd" && cp "$tmp/rank0.dnnt" "$odd/a<b>&'c\".dnnt"
o=$tmp/odd.html
"$dnntrace" report --format html -o "$o" "$odd/a<b>&'c\".dnnt" || no "report of an odd name"
check_page "$o"
grep -qF "a&lt;b&gt;&amp;&#39;c&quot;.dnnt" "$o" || no "the file name is not escaped"

# an incomplete trace is said at the top, in the text report's words
l=$tmp/long/fusion-h100.dnnt
size=$(wc -c <"$l")
head -c $((size * 2 / 3)) "$l" >"$tmp/cut.dnnt"
"$dnntrace" report --format html -o "$tmp/cut.html" "$tmp/cut.dnnt"
check_page "$tmp/cut.html"
"$dnntrace" report "$tmp/cut.dnnt" 2>/dev/null | sed -n 's/^ended *//p; s/^ \{10\}\(what the trace lacks.*\)/\1/p' >"$tmp/said"
[ -s "$tmp/said" ] || no "the text report of a cut trace says nothing of it"
python3 - "$tmp/cut.html" "$tmp/said" <<'EOF' || no "the HTML report does not say what the text report says of a cut trace"
import html, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
head = page[:page.index("<h2>")]  # before the first section
warn = [html.unescape(m) for m in re.findall(r'<dd class="warn">(.*?)</dd>', head)]
for line in open(sys.argv[2], encoding="utf-8").read().splitlines():
    if line not in warn:
        print("not at the top, marked: " + line)
        sys.exit(1)
EOF

# the timeline's numbers are the summary's: one trace's busy time as the
# text report gives it, and its bins bounded however long the trace
busy() { # busy FILE: the text report's "GPU busy" time, of the whole run
	"$dnntrace" report --with-warmup "$1" | sed -n 's/^GPU busy (any activity) *\([0-9.]* [mun]*s\) .*/\1/p'
}
"$dnntrace" report --format html -o "$tmp/long.html" "$l"
row=$(sed -n '/<figcaption>GPU busy over time/,/<\/table>/p' "$tmp/long.html" |
	grep '^<tr><td' | sed 's/<[^>]*>/|/g; s/||*/|/g')
want=$(busy "$l")
case "$row" in
*"|$want|"*) ;;
*) no "timeline table '$row' lacks the report's busy time '$want'" ;;
esac
bins=$(echo "$row" | cut -d'|' -f6)
[ -n "$bins" ] && [ "$bins" -le 128 ] && [ "$bins" -gt 64 ] ||
	no "the busy histogram uses $bins bins (want 65 to 128 once widened)"

# the roofline plots each problem with FLOPs and says how many it did not
sentence=$(grep -o '[0-9]* of [0-9]* problems plotted; [0-9]* not plotted' "$r")
plotted=$(echo "$sentence" | cut -d' ' -f1)
points=$(grep -c '^<g><title>[0-9]*: ' "$r")
[ -n "$sentence" ] && [ "$plotted" = "$points" ] ||
	no "roofline: '$sentence' but $points points"

[ $fail = 0 ] && echo "HTML pages well-formed, self-contained and complete"
exit $fail
