#!/bin/sh
# The HTML report and diff in a browser: headless Chromium loads each page
# at a wide and a narrow width, with no console error, every picture in the
# rendered document, and keeps a screenshot of each width in OUT_DIR
# (html-*.png) for a person to look at. At 1280 and 1920 px, a copy of each
# page with html-layout.js added is measured as laid out: no label of a
# picture under 11 px or cut off by its edge, no empty section, a row's name
# in the first column. Skipped (77) without Chromium.
# usage: test-html-render.sh DNNTRACE SYNTH_TRACE API_LIST OUT_DIR [DATA_DIR]
set -u
dnntrace=$1 synth=$2 api=$3 out=$4 data=${5:-}
here=$(cd "$(dirname "$0")" && pwd)
browser=
for b in chromium chromium-browser google-chrome; do
	if command -v "$b" >/dev/null 2>&1; then
		browser=$b
		break
	fi
done
if [ -z "$browser" ]; then
	echo "no Chromium: skipped"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset NO_COLOR
fail=0
no() { echo "FAIL: $*"; fail=1; }

"$synth" "$api" "$tmp" --ranks 2 --steps 4 >/dev/null || exit 1
mkdir "$tmp/changed" "$tmp/fusion" "$tmp/metrics"
# three times the steps: the totals' values grow long ("20.0 ms (+127.8%)")
"$synth" "$api" "$tmp/changed" --ranks 2 --steps 12 --variant changed >/dev/null || exit 1
"$synth" "$api" "$tmp/metrics" --scenario metrics --steps 10 >/dev/null || exit 1
"$synth" "$api" "$tmp/fusion" --scenario fusion --steps 3 >/dev/null || exit 1
"$dnntrace" report --format html -o "$tmp/report.html" "$tmp" || no "report"
"$dnntrace" report --format html -o "$tmp/fusion.html" "$tmp/fusion/fusion-h100.dnnt" ||
	no "fusion report"
"$dnntrace" diff --format html -o "$tmp/diff.html" "$tmp" "$tmp/changed" || no "diff"
"$dnntrace" report --format html -o "$tmp/metrics.html" "$tmp/metrics/metrics.dnnt" ||
	no "report with DRAM samples"
pages="report fusion diff metrics"
# recorded traces: a cuDNN sample on an H200, llama.cpp (no cuDNN call)
for t in h200-sample llama; do
	[ -n "$data" ] || break
	"$dnntrace" report --format html -o "$tmp/$t.html" "$data/$t.dnnt" || no "report of $t"
	pages="$pages $t"
done
cp "$here/html-layout.js" "$tmp/"

run() { # run LOG ARGS...: the browser on a page, its log in LOG
	log=$1
	shift
	timeout 120 "$browser" --headless --disable-gpu --no-sandbox \
		--user-data-dir="$tmp/profile" --hide-scrollbars \
		--enable-logging=stderr --v=0 "$@" 2>"$log"
}

for page in $pages; do
	f=$tmp/$page.html
	svgs=$(grep -c '^<svg ' "$f")
	run "$tmp/$page.log" --dump-dom "file://$f" >"$tmp/$page.dom" ||
		no "$page: $browser failed: $(tail -3 "$tmp/$page.log")"
	got=$(grep -o '<svg ' "$tmp/$page.dom" | wc -l)
	[ "$svgs" -gt 0 ] && [ "$got" = "$svgs" ] ||
		no "$page: $got pictures in the rendered page, $svgs written"
	grep -q '</main>' "$tmp/$page.dom" || no "$page: the page did not render whole"
	for w in 1920 1280 420; do
		png=$out/html-$page-$w.png
		rm -f "$png"
		run "$tmp/$page-$w.log" --window-size=$w,2400 \
			--screenshot="$png" "file://$f" >/dev/null
		[ -s "$png" ] || no "$page: no screenshot at $w px"
	done
	# measured as laid out, at the widths of a laptop and a desktop
	sed 's|</body>|<script src="html-layout.js"></script></body>|' "$f" >"$tmp/$page-layout.html"
	for w in 1280 1920; do
		run "$tmp/$page-layout-$w.log" --window-size=$w,2400 --virtual-time-budget=5000 \
			--dump-dom "file://$tmp/$page-layout.html" >"$tmp/$page-layout.dom"
		got=$(sed -n '/<pre id="layout">/,/<\/pre>/p' "$tmp/$page-layout.dom" |
			sed 's/<[^>]*>//g')
		[ "$got" = ok ] || no "$page at $w px: ${got:-the layout was not measured}"
	done
	# what the page itself does wrong (not the sandbox's own complaints)
	if grep -hiE 'CONSOLE|Uncaught|Refused to|ERR_FILE|net::' \
		"$tmp/$page.log" "$tmp/$page"-*.log; then
		no "$page: errors in the browser's log"
	fi
done
[ $fail = 0 ] && echo "rendered in $browser; screenshots in $out/html-*.png"
exit $fail
