#!/usr/bin/env bash
# The torch release matrix: one virtualenv per torch release, the torch tests in each.
#
#   bash scripts/torch_matrix.sh [--bench] [--fallback] VERSION [VERSION ...]
#   bash scripts/torch_matrix.sh 2.5.1 2.8.0 2.11.0 2.13.0 2.14.1 2.15.0
#
# For each VERSION: a virtualenv under $TORCH_MATRIX_DIR (default /tmp/torch-matrix), kept
# and reused by later runs; torch==VERSION installed first (releases this machine does not
# hold come from the index as CUDA builds, which run on a CPU-only machine; a pip cap on
# torch is lifted for that one command), then tensorops with the test extras against
# requirements/constraints.txt less the pins torch brings itself (torch, sympy, triton,
# the nvidia-* libraries), so an older torch keeps the sympy it requires. Then the compile,
# export, layers, einsum, autograd, ops and backend tests (`-n auto`), and with --bench
# `benchmarks/compile_time.py --quick --skip-inductor` (dynamo capture and recompiles
# against einops and plain torch). --fallback runs the compile tests with
# TENSOROPS_COMPILE=traced (the forced fallback: no stand-ins, Dynamo traces tensorops'
# Python). A summary line per release is printed at the end; logs go beside the venvs.
# TORCH_MATRIX_CLEAN=1 removes each venv once its tests ran (CI sets it). Each new venv needs
# about 6 GB of free disk (a CUDA build of torch); the script says so and stops when less is free.
# The exit status is 1 if anything failed (CI runs it for 2.14.1).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
dir=${TORCH_MATRIX_DIR:-/tmp/torch-matrix}
bench=0
fallback=0
versions=()
for arg in "$@"; do
  case "$arg" in
    --bench) bench=1 ;;
    --fallback) fallback=1 ;;
    -*) echo "unknown option $arg" >&2; exit 2 ;;
    *) versions+=("$arg") ;;
  esac
done
if [ "${#versions[@]}" -eq 0 ]; then
  echo "usage: bash scripts/torch_matrix.sh [--bench] [--fallback] VERSION [VERSION ...]" >&2
  exit 2
fi
mkdir -p "$dir"
constraints="$dir/constraints-without-torch.txt"
grep -v -E '^(torch|sympy|triton|nvidia-[a-z0-9-]+)==' requirements/constraints.txt >"$constraints"

tests=(
  tests/test_compile.py tests/test_stand_ins.py tests/test_export.py
  tests/test_planner_compile.py tests/test_layers.py tests/test_einsum.py
  tests/test_autograd.py tests/test_ops.py tests/test_backends.py tests/test_semiring.py
  tests/test_check.py tests/test_concat.py tests/test_elementwise.py tests/test_along.py
  tests/test_torch_trace.py tests/test_onnx.py tests/test_torchscript.py
)
compile_tests=(tests/test_compile.py tests/test_stand_ins.py tests/test_export.py)
failed=0
summary=()
for version in "${versions[@]}"; do
  venv="$dir/$version"
  log="$dir/$version.log"
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import torch, tensorops" 2>/dev/null; then
    echo "== torch $version: making $venv"
    free_kb=$(df -Pk "$dir" | awk 'NR==2 {print $4}')
    if [ "$free_kb" -lt 6000000 ]; then
      summary+=("$version: only $((free_kb / 1024)) MB free under $dir, a venv needs about 6 GB")
      failed=1
      continue
    fi
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --upgrade pip
    # PIP_CONSTRAINT=" " lifts a configured cap on torch for this one command
    PIP_CONSTRAINT=" " "$venv/bin/python" -m pip install --quiet --no-cache-dir "torch==$version" || {
      summary+=("$version: torch could not be installed"); failed=1; continue; }
    PIP_CONSTRAINT=" " "$venv/bin/python" -m pip install --quiet -c "$constraints" -e ".[torch,test]" || {
      summary+=("$version: tensorops' test extras could not be installed"); failed=1; continue; }
  else
    # the checkout may have moved on: reinstall tensorops itself, nothing else
    "$venv/bin/python" -m pip install --quiet --no-deps -e . >/dev/null
  fi
  actual=$("$venv/bin/python" -c "import torch; print(torch.__version__)")
  echo "== torch $actual: tests (log: $log)"
  "$venv/bin/python" -m pytest -q -n auto -p no:cacheprovider "${tests[@]}" >"$log" 2>&1 \
    || failed=1
  line=$(grep -E '^[0-9]+ (passed|failed)|^=+ .*(passed|failed)' "$log" | tail -1)
  result="$version ($actual): tests: ${line:-see $log}"
  if [ "$fallback" -eq 1 ]; then
    TENSOROPS_COMPILE=traced "$venv/bin/python" -m pytest -q -n auto -p no:cacheprovider \
      "${compile_tests[@]}" >"$log.fallback" 2>&1 || failed=1
    line=$(grep -E '^[0-9]+ (passed|failed)|^=+ .*(passed|failed)' "$log.fallback" | tail -1)
    result="$result | fallback: ${line:-see $log.fallback}"
  fi
  if [ "$bench" -eq 1 ]; then
    "$venv/bin/python" benchmarks/compile_time.py --quick --skip-inductor \
      --json "$dir/$version.json" >"$log.bench" 2>&1 || failed=1
    result="$result | bench: $(tail -3 "$log.bench" | tr '\n' ' ')"
  fi
  summary+=("$result")
  if [ "${TORCH_MATRIX_CLEAN:-0}" = 1 ]; then
    rm -rf "$venv"
  fi
done
printf '\n==== torch matrix (%s) ====\n' "$root"
printf '%s\n' "${summary[@]}"
exit "$failed"
