#!/usr/bin/env bash
# The CUDA tests and the torch benchmarks on a GPU machine, in one command.
#
# Usage: scripts/cuda_check.sh [RESULTS_DIR]
#   RESULTS_DIR (default: $OUT, else ./cuda_results) receives tests.txt, einsum.txt,
#   overhead.txt, torch_model.txt and env.txt. PYTHON picks the interpreter (python3).
# tensorops is installed from this checkout (editable, no dependencies, no network:
# the way the test venv has it, which maps layers/ to tensorops.layers). Needs torch with
# CUDA, numpy, pytest, hypothesis and einops; opt_einsum for benchmarks/einsum.py.
# Each step has its own time limit (STEP_TIMEOUT seconds, default 150); a failing
# step is reported and the next one still runs; the exit status is the tests'.
set -uo pipefail
cd "$(dirname "$0")/.."
results=${1:-${OUT:-cuda_results}}
python=${PYTHON:-python3}
limit=${STEP_TIMEOUT:-150}
mkdir -p "$results"
"$python" -m pip install -q --no-deps --no-build-isolation --no-index -e . \
    || { echo "installing tensorops failed"; exit 2; }
export PYTHONUNBUFFERED=1
{
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    "$python" -c 'import sys, torch, numpy, tensorops
print("python", sys.version.split()[0], "torch", torch.__version__, "numpy", numpy.__version__)
print("tensorops", tensorops.__version__, "from", tensorops.__file__)
assert torch.cuda.is_available(), "torch sees no CUDA device"
print("device", torch.cuda.get_device_name())'
} 2>&1 | tee "$results/env.txt" || { echo "no usable CUDA device"; exit 2; }

# The tests of every op, layer and einsum on cuda (and the conversions to/from cuda).
timeout "$limit" "$python" -m pytest tests/test_devices.py tests/test_convert.py \
    -k "cuda" -p no:cacheprovider -n 0 -q -rs 2>&1 | tee "$results/tests.txt"
status=${PIPESTATUS[0]}

run_benchmark() {
    local name=$1
    shift
    echo "== benchmarks/$name.py $*"
    timeout "$limit" "$python" "benchmarks/$name.py" "$@" 2>&1 | tee "$results/$name.txt" \
        || echo "benchmarks/$name.py failed or timed out (status ${PIPESTATUS[0]})"
}
run_benchmark einsum --quick --device cuda
run_benchmark overhead --quick --device cuda
run_benchmark torch_model --quick --device cuda
echo "tests exit status: $status (results in $results)"
exit "$status"
