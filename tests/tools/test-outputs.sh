#!/bin/sh
# Where the reading commands write: -o never follows a symbolic link and
# never replaces a file unless told to (--force); a new file gets 0666 less
# the umask and appears whole or not at all; -o - is standard output. A
# write that fails (a full disk, a closed standard output) is said in one
# sentence, with exit status 2, by every command.
# usage: test-outputs.sh DNNTRACE
set -u
dnntrace=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "$(dirname "$0")/expect.sh"
t=$(cd "$(dirname "$0")/../data" && pwd)/h200-sample.dnnt
# same CONTENT FILE: FILE holds CONTENT, as it was
same() {
	[ "$(cat "$2")" = "$1" ] || { echo "FAIL: $2 was changed: $(head -c 80 "$2")"; fail=1; }
}

# --- an existing file, a link -----------------------------------------------
echo precious >"$tmp/kept"
ln -s "$tmp/kept" "$tmp/link"
for cmd in "report" "report --format html" "fusion" "diff $t" \
	"export --format chrome" "export --format perfetto"; do
	# shellcheck disable=SC2086 # words of the command
	expect 2 'kept exists: dnntrace does not overwrite it unless told to (--force)' -- \
		$cmd -o "$tmp/kept" "$t"
	same precious "$tmp/kept"
	# shellcheck disable=SC2086
	expect 2 'link is a symbolic link' -- $cmd -o "$tmp/link" "$t"
	same precious "$tmp/kept"
done
for force in "" --force; do
	expect 2 'exists; dnntrace export does not overwrite it' -- \
		export --format sqlite $force -o "$tmp/link" "$t"
	same precious "$tmp/kept"
	[ -L "$tmp/link" ] || { echo "FAIL: export $force replaced a link"; fail=1; }
done
mkdir "$tmp/csvlink.target"
ln -s "$tmp/csvlink.target" "$tmp/csvlink"
expect 2 'exists and is no folder' -- export --format csv -o "$tmp/csvlink" "$t"
[ -z "$(ls "$tmp/csvlink.target")" ] || { echo "FAIL: csv wrote through a link"; fail=1; }

# --force replaces a file, never a link (/dev/stdout is one) nor what it
# points to
expect 2 'link is a symbolic link' -- report --force -o "$tmp/link" "$t"
same precious "$tmp/kept"
expect 0 '' -- report --force -o "$tmp/kept" "$t"
grep -q 'Operations by problem' "$tmp/kept" ||
	{ echo "FAIL: report --force did not replace the file"; fail=1; }
expect 0 '' -- export --format sqlite --force -o "$tmp/kept" "$t"

# --- a new file: 0666 less the umask, nothing else left in the folder -------
mkdir "$tmp/new"
(umask 027 && "$dnntrace" report -o "$tmp/new/r.txt" "$t") || { echo "FAIL: report -o"; fail=1; }
mode=$(stat -c %a "$tmp/new/r.txt")
[ "$mode" = 640 ] || { echo "FAIL: a new report has mode $mode under umask 027"; fail=1; }
[ "$(ls -A "$tmp/new")" = r.txt ] || { echo "FAIL: left beside it: $(ls -A "$tmp/new")"; fail=1; }

# -o - is standard output
expect 0 'Operations by problem' -- report -o - "$t"
[ ! -e ./- ] || { echo "FAIL: -o - made a file named -"; rm -f ./-; fail=1; }

# --- a write that fails --------------------------------------------------------
# a file too large (the size limit, its signal ignored): nothing left behind
mkdir "$tmp/full"
for cmd in "report --format html" "export --format chrome" "export --format perfetto"; do
	# shellcheck disable=SC2086
	(trap '' XFSZ; ulimit -f 1; exec "$dnntrace" $cmd -o "$tmp/full/out" "$t") \
		>/dev/null 2>"$tmp/err"
	rc=$?
	[ "$rc" = 2 ] || { echo "FAIL: $cmd to a full disk: exit $rc"; fail=1; }
	grep -q 'cannot write .*full/out: ' "$tmp/err" ||
		{ echo "FAIL: $cmd to a full disk said:"; cat "$tmp/err"; fail=1; }
	[ "$(wc -l <"$tmp/err")" = 1 ] || { echo "FAIL: $cmd: more than one sentence:"; cat "$tmp/err"; fail=1; }
	[ -z "$(ls -A "$tmp/full")" ] || { echo "FAIL: $cmd to a full disk left $(ls -A "$tmp/full")"; fail=1; }
done
# a device that is full, named or as standard output; a closed stdout
for cmd in "info" "dump" "ops" "report" "report --format json" "fusion" "diff $t" \
	"export --format chrome"; do
	# shellcheck disable=SC2086
	"$dnntrace" $cmd "$t" >/dev/full 2>"$tmp/err"
	rc=$?
	[ "$rc" = 2 ] && grep -q 'cannot write to standard output: ' "$tmp/err" &&
		[ "$(wc -l <"$tmp/err")" = 1 ] ||
		{ echo "FAIL: $cmd >/dev/full: exit $rc, said:"; cat "$tmp/err"; fail=1; }
	# shellcheck disable=SC2086
	"$dnntrace" $cmd "$t" >&- 2>"$tmp/err"
	rc=$?
	[ "$rc" = 2 ] && grep -q 'cannot write to standard output' "$tmp/err" ||
		{ echo "FAIL: $cmd >&-: exit $rc, said:"; cat "$tmp/err"; fail=1; }
done
# (not the exports: a build that removes a failed output would remove the
# device, as root)
for cmd in "report" "fusion" "diff $t"; do
	# shellcheck disable=SC2086
	expect 2 'cannot write /dev/full: No space left on device' -- $cmd -o /dev/full "$t"
done
expect 0 '' -- report -o /dev/null "$t"

[ $fail = 0 ] && echo "outputs behave"
exit $fail
