#!/bin/sh
# Installs what building dnntrace needs (Debian/Ubuntu packages), then
# configures and builds it in ./build. Safe to run again: installs only
# what is missing and rebuilds only what changed.
#
# The CUDA toolkit with cuDNN is expected in /usr/local/cuda (or $CUDA_HOME);
# without it everything but libdnntrace.so and the sample program builds.
set -eu
cd "$(dirname "$0")/.."

packages="meson ninja-build gcc pkg-config libzstd-dev libxxhash-dev libelf-dev libjson-c-dev libsqlite3-dev python3 python3-pycparser"
# the wheel (ninja -C build wheel), built offline, and its test's venv
packages="$packages python3-dev python3-setuptools python3-wheel python3-build python3-venv"
missing=""
for p in $packages; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
sh tools/apt-install.sh setup $missing

if [ ! -f build/build.ninja ]; then
	meson setup build
fi
ninja -C build
