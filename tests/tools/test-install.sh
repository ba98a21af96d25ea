#!/bin/sh
# test-install.sh WHAT BUILD: dnntrace installed into a staging folder
# (DESTDIR), then moved elsewhere, works there. PREFIX, BINDIR, LIBDIR,
# LIBEXECDIR, MANDIR and DATADIR (meson's options) and CC come from the
# environment. WHAT is
#   record  it finds its shim from where it is, not from where it was
#           meant to be installed: it records the bundled sample (which
#           calls the real cuDNN, answering its descriptor calls without a
#           GPU), and its demo finds the sample, and the sample's
#           trace recorded on a GPU;
#   reader  a program that reads traces builds against the installed
#           library and headers with pkg-config, and counts what dnntrace
#           counts;
#   docs    every command has its manual page, naming every option its
#           --help does, and bash completes commands, options, their
#           values and trace files.
set -eu
what=$1 build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# an install folder option relative to the prefix
rel() {
	case $1 in
	/*) echo "${1#"$PREFIX"/}" ;;
	*) echo "$1" ;;
	esac
}

meson install -C "$build" --destdir "$tmp/stage" --no-rebuild --quiet
mv "$tmp/stage$PREFIX" "$tmp/moved"
rm -rf "$tmp/stage"
root=$tmp/moved
dnntrace=$root/$(rel "$BINDIR")/dnntrace
unset DNNTRACE_LIB LD_PRELOAD

fail() {
	echo "FAIL: $*"
	exit 1
}

test_record() {
	sample=$root/$(rel "$LIBEXECDIR")/dnntrace/dnntrace-sample
	"$dnntrace" record -q -o "$tmp/t.dnnt" -- "$sample" -n 1 >"$tmp/out" 2>&1 ||
		fail "the moved dnntrace could not record: $(cat "$tmp/out")"
	"$dnntrace" dump "$tmp/t.dnnt" >"$tmp/dump"
	calls=$(grep -c '^API_CALL .* cudnnSetTensor4dDescriptor(' "$tmp/dump" || true)
	[ "$calls" -ge 1 ] || fail "the trace holds no cudnnSetTensor4dDescriptor call"
	"$dnntrace" demo -o "$tmp/demo.dnnt" >"$tmp/out" 2>&1 ||
		fail "the moved dnntrace's demo: $(cat "$tmp/out")"
	bundled=$root/$(rel "$DATADIR")/dnntrace/h200-sample.dnnt
	[ -f "$bundled" ] || fail "the sample's GPU trace is not installed: $bundled"
	if grep -q '^The report above has no GPU time' "$tmp/out"; then
		grep -q "^\$ dnntrace report $bundled\$" "$tmp/out" ||
			fail "the moved dnntrace's demo does not report $bundled"
	fi
	echo "recorded with the moved tree: $calls cudnnSetTensor4dDescriptor calls"
}

test_reader() {
	trace=$(dirname "$0")/../data/h200-sample.dnnt
	cat >"$tmp/reader.c" <<'EOF'
#include <dt-trace.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	char why[256];
	const struct dt_rec_hdr *rec;
	unsigned long calls = 0;
	struct dt_reader *r;

	if (argc != 2 || !(r = dt_reader_open(argv[1], NULL, why, sizeof(why))))
		return fprintf(stderr, "%s\n", argc == 2 ? why : "usage"), 2;
	while (dt_reader_next(r, &rec) > 0)
		calls += rec->type == DT_REC_API_CALL;
	dt_reader_close(r);
	printf("%lu\n", calls);
	return 0;
}
EOF
	PKG_CONFIG_PATH="$root/$(rel "$LIBDIR")/pkgconfig"
	export PKG_CONFIG_PATH
	flags=$(pkg-config --cflags --libs dnntrace) || fail "no dnntrace.pc in $PKG_CONFIG_PATH"
	# shellcheck disable=SC2086 # pkg-config's flags are words
	$CC -std=c11 -Wall -Werror -o "$tmp/reader" "$tmp/reader.c" $flags ||
		fail "cannot build a reader with: $flags"
	got=$("$tmp/reader" "$trace")
	want=$("$dnntrace" dump "$trace" | grep -c '^API_CALL')
	[ "$got" = "$want" ] || fail "the reader counts $got calls, dnntrace $want"
	echo "built against the moved tree with pkg-config: $got calls, as dnntrace"
}

# complete WORDS...: COMPREPLY, one a line, for the last word, as bash
# would complete the command line (the last word empty when it ends in a
# space: pass '')
complete_words() {
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		cd "$CWD" && _dnntrace; printf "%s\n" "${COMPREPLY[@]}"' \
		_ "$completion" "$@"
}

expect_completion() {
	want=$1
	shift
	complete_words "$@" >"$tmp/got"
	grep -qx -- "$want" "$tmp/got" ||
		fail "completing '$*' offers no '$want': $(tr '\n' ' ' <"$tmp/got")"
}

test_docs() {
	man1=$root/$(rel "$MANDIR")/man1
	commands=$("$dnntrace" --help | sed -n '/^commands:/,/^$/s/^  \([a-z]*\) .*/\1/p')
	[ -n "$commands" ] || fail "dnntrace --help lists no commands"
	[ -f "$man1/dnntrace.1" ] || fail "no dnntrace.1 in $man1"
	for c in $commands; do
		page=$man1/dnntrace-$c.1
		[ -f "$page" ] || fail "no manual page for $c"
		for opt in $("$dnntrace" "$c" --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
			grep -q -- "$(echo "$opt" | sed 's/-/\\\\-/g')" "$page" ||
				fail "dnntrace-$c.1 lacks $opt"
		done
	done
	if command -v man >/dev/null; then
		MANWIDTH=80 man -l "$man1/dnntrace-report.1" 2>&1 | grep -q 'peak-bandwidth' ||
			fail "man cannot render dnntrace-report.1"
	fi

	completion=$root/$(rel "$DATADIR")/bash-completion/completions/dnntrace
	[ -f "$completion" ] || fail "no bash completion in $completion"
	mkdir "$tmp/run" "$tmp/run/job"
	: >"$tmp/run/a.dnnt"
	: >"$tmp/run/notes.txt"
	export CWD="$tmp/run"
	expect_completion report dnntrace re
	expect_completion --peak-bandwidth dnntrace report --pe
	expect_completion html dnntrace report --format ''
	expect_completion csv dnntrace export --format ''
	expect_completion engine-change dnntrace diff --fail-on ''
	expect_completion a.dnnt dnntrace info ''
	expect_completion job dnntrace report ''
	expect_completion --gpu-sample dnntrace record --gpu-s
	expect_completion bash dnntrace record -q -- bas
	complete_words dnntrace info '' >"$tmp/got"
	! grep -q notes.txt "$tmp/got" || fail "info completes notes.txt, no trace"
	zsh_completion=$root/$(rel "$DATADIR")/zsh/site-functions/_dnntrace
	[ -f "$zsh_completion" ] || fail "no zsh completion in $zsh_completion"
	if command -v zsh >/dev/null; then
		zsh -n "$zsh_completion" || fail "_dnntrace is no zsh script"
	fi
	echo "manual pages for $(echo "$commands" | wc -w) commands; bash completes them"
}

"test_$what"
