#!/bin/sh
# test-core-neutral.sh - the analyzer's core names no library: what a
# library's calls mean is its decoder's (analyzer/analyzer-decoder.h), so a
# new library costs a decoder, not changes to the core.
#
# Usage: test-core-neutral.sh SRCDIR
#
# Fails when a core file (the model's core, CUDA-graph replays, kernel
# names, the session, the decoder interface) names cuDNN in any spelling,
# code or comment, or when a core file is missing (renamed without this
# list). The decoders, their table (analyzer-decoders.c) and the views are
# not core.
set -u

src=$1/analyzer
core="analyzer-model.c analyzer-model.h analyzer-model-internal.h
analyzer-knames.c analyzer-graphs.c analyzer-decoder.h analyzer-session.c"
fail=0
for f in $core; do
	if [ ! -f "$src/$f" ]; then
		echo "test-core-neutral.sh: $src/$f is missing" >&2
		fail=1
	elif grep -n -i 'cudnn' "$src/$f"; then
		echo "test-core-neutral.sh: $f names cuDNN (above)" >&2
		fail=1
	fi
done
exit $fail
