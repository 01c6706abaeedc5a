#!/usr/bin/env bash
# Test the wheel users install, with the oldest supported dependencies: a clean virtualenv
# gets the built wheel with its torch and test extras under requirements/minimum.txt, and
# the suite (without the peers' suites in tests/compat) runs from a copy of tests/, docs/,
# examples/ and benchmarks/
# so that the installed package, not the checkout, is imported (tests/test_installed.py
# checks that, the version, py.typed, tensorops.layers and the tensorops command).
#
#   bash scripts/test_wheel.sh DIST_DIR [pytest arguments]
#   bash scripts/test_wheel.sh --pin DIST_DIR [pytest arguments]
#
# --pin resolves against requirements/minimum.in instead and rewrites requirements/minimum.txt
# from the result (`pip freeze`), then runs the suite the same way.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
pin=0
if [ "${1:-}" = --pin ]; then
  pin=1
  shift
fi
wheels=("${1:?usage: test_wheel.sh [--pin] DIST_DIR [pytest arguments]}"/tensorops-*.whl)
shift
wheel=$(realpath "${wheels[0]}")
constraints=requirements/minimum.txt
[ "$pin" = 1 ] && constraints=requirements/minimum.in
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m venv "$tmp/venv"
py="$tmp/venv/bin/python"
"$py" -m pip install --quiet --upgrade pip
"$py" -m pip install --quiet -c "$constraints" "$wheel[torch,test]"
if [ "$pin" = 1 ]; then
  {
    sed -n '/^#/p' requirements/minimum.in | sed 's/^# The oldest/# Made from requirements\/minimum.in: the oldest/'
    "$py" -m pip freeze --exclude tensorops | sed -E 's/^(torch[a-z]*==[^+]+)\+[a-z0-9]+$/\1/'
  } >requirements/minimum.txt
  echo "wrote requirements/minimum.txt"
fi
"$py" -c 'import importlib.metadata as m
print("minimum-versions run:", ", ".join(f"{n} {m.version(n)}" for n in
      ("tensorops", "numpy", "array-api-compat", "torch", "jax", "dask", "array-api-strict")))'
suite="$tmp/suite"
mkdir "$suite"
cp -r tests docs examples benchmarks README.md mkdocs.yml pyproject.toml .pre-commit-hooks.yaml "$suite"/
cd "$suite"
set +e
TENSOROPS_TEST_INSTALLED=1 "$py" -m pytest -p no:cacheprovider --ignore=tests/compat "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests" >&2
  exit 1
fi
cd "$root"
exit "$status"
