#!/bin/sh
# test-layers.sh - dependencies between components point down only:
# trace <- cupti <- shim; trace <- analyzer <- replay <- tools (README.md,
# Layout).
#
# Usage: test-layers.sh SRCDIR NAME=TARGET...
#   NAME is a component (trace, cupti, shim, analyzer, replay, tools) and TARGET the
#   library or program meson builds from it; its objects are in TARGET.p/.
#
# Fails when a component's sources include a header of a component that is
# not below it, or when its objects use a symbol that only such a component
# defines (one the libraries the targets link against do not define too:
# the C library functions the shim interposes are the C library's).
# It checks what the build holds, not how the code behaves.
set -u
export LC_ALL=C # one collation for sort and comm

src=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/system.libs"

# What each component may use besides itself.
below() {
	case $1 in
	trace) echo "" ;;
	cupti) echo "trace" ;;
	shim) echo "cupti trace" ;;
	analyzer) echo "trace" ;;
	replay) echo "analyzer trace" ;;
	tools) echo "replay analyzer trace" ;;
	*) echo "test-layers.sh: unknown component $1" >&2; exit 2 ;;
	esac
}

# The global symbols some objects define (what=defined) or use undefined
# (what=undefined), without their versions, one a line, sorted.
symbols() {
	what=$1
	shift
	nm -P "$@" 2>/dev/null |
		awk -v what="$what" '
		$2 == "U" { if (what == "undefined") { sub(/@.*/, "", $1); print $1 } next }
		$2 ~ /^[A-Z]$/ { if (what == "defined") { sub(/@.*/, "", $1); print $1 } }' |
		sort -u
}

names=""
for arg; do
	name=${arg%%=*}
	target=${arg#*=}
	below "$name" >/dev/null || exit 2
	names="$names $name"
	# its headers: in its source folder, and those the build generates
	find "$src/$name" "$(dirname "$target")" -maxdepth 2 -name '*.h' |
		sed 's|.*/||' | sort -u >"$tmp/$name.headers"
	symbols defined "$target.p"/*.o >"$tmp/$name.defined"
	symbols undefined "$target.p"/*.o |
		comm -23 - "$tmp/$name.defined" >"$tmp/$name.undefined"
	case $target in
	*.a) ;;
	*) ldd "$target" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' >>"$tmp/system.libs" ;;
	esac
done

# Symbols the system libraries define: never a component's alone.
sort -u "$tmp/system.libs" | while read -r lib; do
	nm -D --defined-only "$lib" | awk '{ sub(/@.*/, "", $3); print $3 }'
done | sort -u >"$tmp/system.defined"

# What each component uses that neither it, nor one below it, nor a
# system library defines.
for name in $names; do
	cp "$tmp/$name.undefined" "$tmp/$name.needed"
	for other in $(below "$name") system; do
		[ -f "$tmp/$other.defined" ] || continue
		comm -23 "$tmp/$name.needed" "$tmp/$other.defined" >"$tmp/needed"
		mv "$tmp/needed" "$tmp/$name.needed"
	done
done

fail=0
for name in $names; do
	allowed=" $name $(below "$name") "
	for other in $names; do
		case $allowed in *" $other "*) continue ;; esac
		# (a) #include lines naming the other's headers
		find "$src/$name" -name '*.[ch]' | sort | while read -r f; do
			sed -n 's/^[ \t]*#[ \t]*include[ \t]*["<]\([^">]*\)[">].*/\1/p' "$f" |
				sed 's|.*/||' | grep -Fxf "$tmp/$other.headers" |
				sed "s|^|${f#"$src"/} includes |; s|\$| of $other/|"
		done >"$tmp/found"
		# (b) symbols used that only the other defines
		comm -12 "$tmp/$name.needed" "$tmp/$other.defined" |
			sed "s|^|$name/ uses |; s|\$|, defined in $other/|" >>"$tmp/found"
		if [ -s "$tmp/found" ]; then
			cat "$tmp/found"
			fail=1
		fi
	done
done
[ $fail = 0 ] && echo "components point down only:$names"
exit $fail
