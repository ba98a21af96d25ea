#!/bin/sh
# The main job, from a fresh clone: install what is missing, build, record
# the bundled cuDNN sample program and show its trace; without a GPU, also
# the sample's trace as a GPU recorded it.
set -eu
cd "$(dirname "$0")/.."
sh tools/setup.sh >&2
exec build/tools/dnntrace demo "$@"
