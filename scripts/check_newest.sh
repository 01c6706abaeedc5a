#!/usr/bin/env bash
# Try the newest versions of every dependency before updating the pins: a fresh virtualenv
# gets torch==2.13.0 (the CPU build) and every extra with no constraints file, then this
# prints each version that differs from requirements/constraints.txt and runs the suite.
#
#   bash scripts/check_newest.sh [pytest arguments]
#
# Exit status: the suite's. When it passes, `bash scripts/pin.sh` takes the new versions.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/_venv.sh
source scripts/_venv.sh
full_venv -e
"$py" -m pip freeze --exclude tensorops | sed -E 's/\+[a-z0-9]+$//' >"$tmp/newest.txt"
echo "==== versions that differ from requirements/constraints.txt (pinned -> newest) ===="
"$py" - requirements/constraints.txt "$tmp/newest.txt" <<'PY'
import re
import sys


def read(path):
    pins = {}
    for line in open(path):
        line = line.strip()
        if line and not line.startswith("#") and "==" in line:
            name, version = line.split("==", 1)
            pins[re.sub(r"[-_.]+", "-", name).lower()] = version
    return pins


pinned, newest = read(sys.argv[1]), read(sys.argv[2])
changed = 0
for name in sorted(pinned.keys() | newest.keys()):
    old, new = pinned.get(name, "-"), newest.get(name, "-")
    if old != new:
        changed += 1
        print(f"  {name}: {old} -> {new}")
print(f"  {changed} of {len(newest)} packages differ")
PY
echo "==== the suite with the newest versions ===="
set +e
"$py" -m pytest -p no:cacheprovider -q -rfE "$@" 2>&1 | tee "$tmp/pytest.log" | grep -E '^(FAILED|ERROR)|passed|failed'
status=${PIPESTATUS[0]}
set -e
echo "==== pytest exit status $status ===="
exit "$status"
