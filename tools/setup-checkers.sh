#!/bin/sh
# Installs the programs the tests open dnntrace's outputs with, none of
# them needed to build or use dnntrace: the sqlite3 client, headless
# Chromium, protobuf's protoc, zsh (which parses its completion), cmark-gfm
# (GitHub's Markdown renderer, for the Markdown outputs), and from
# npm Chrome DevTools' trace engine and DuckDB
# (tests/checkers/package.json, into build/checkers). Tests whose checker
# is missing are skipped. Safe to run again.
set -eu
cd "$(dirname "$0")/.."

# command:package; node and npm may come from elsewhere than Debian
missing=""
for cp in sqlite3:sqlite3 chromium:chromium protoc:protobuf-compiler node:nodejs npm:npm zsh:zsh cmark-gfm:cmark-gfm; do
	command -v "${cp%%:*}" >/dev/null || missing="$missing ${cp#*:}"
done
sh tools/apt-install.sh setup-checkers $missing

mkdir -p build/checkers
if ! cmp -s tests/checkers/package.json build/checkers/package.json; then
	cp tests/checkers/package.json build/checkers/package.json
	(cd build/checkers && npm install --no-audit --no-fund --loglevel=error >/dev/null)
fi
