#!/bin/sh
# Installs what is missing, builds, runs the CPU test suite (and the GPU
# suite, which skips without a GPU), and ends with one line:
# "N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/.."
sh tools/setup.sh || exit 1
meson test -C build --print-errorlogs "$@"
rc=$?
python3 - build/meson-logs/testlog.json <<'PY'
import json, sys
counts = {"OK": 0, "FAIL": 0, "SKIP": 0}
for line in open(sys.argv[1]):
    r = json.loads(line).get("result", "")
    if r in ("OK", "EXPECTEDFAIL"):
        counts["OK"] += 1
    elif r == "SKIP":
        counts["SKIP"] += 1
    else:
        counts["FAIL"] += 1
print(f"{counts['OK']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped")
PY
exit $rc
