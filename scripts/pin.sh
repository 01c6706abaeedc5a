#!/usr/bin/env bash
# Regenerate requirements/constraints.txt, the pinned test, docs and benchmark environment
# that the README's test command and CI install with `pip install -c requirements/constraints.txt`.
#
#   bash scripts/pin.sh           # everything resolved afresh (newest releases)
#   bash scripts/pin.sh --keep    # the current pins kept; only what is new is resolved
#
# A fresh virtualenv gets torch==2.13.0 (the CPU build) and then every extra of tensorops;
# `pip freeze` of it, less tensorops itself, becomes the constraints file. Run
# scripts/check_newest.sh first to see what the newest versions change and break.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/_venv.sh
source scripts/_venv.sh
if [ "${1:-}" = --keep ]; then
  full_venv -c requirements/constraints.txt
else
  full_venv
fi
out=requirements/constraints.txt
{
  echo "# The pinned test, docs and benchmark environment (Python $("$py" -c 'import platform; print(platform.python_version())'), Linux x86-64)."
  echo "# Made by \`bash scripts/pin.sh\`: a fresh venv, torch==2.13.0 (CPU), then .[$extras],"
  echo "# then paddlepaddle (scripts/_venv.sh), \`pip freeze\` less tensorops. Edit by regenerating, never by hand."
  echo "# Use: python -m pip install -c requirements/constraints.txt \"torch==2.13.0\" -e \".[torch,test]\""
  # The local label (+cpu) is dropped: torch==2.13.0 matches the CPU build and the default one.
  "$py" -m pip freeze --exclude tensorops | sed -E 's/^(torch[a-z]*==[^+]+)\+[a-z0-9]+$/\1/'
} >"$out"
echo "wrote $out ($(grep -vc '^#' "$out") pins)"
