#!/usr/bin/env bash
# Install every optional framework into the active environment, at the pinned versions:
#
#   bash scripts/install_frameworks.sh [pip install options]
#
# TensorFlow, MLX, tinygrad, PyTensor, Flax, Keras and Equinox come through tensorops'
# extras. paddlepaddle pins opt_einsum==3.3.0, which only its own einsum path search uses,
# while the test suites run opt_einsum's tests on 3.4: Paddle goes in without its pins,
# its other requirements named here. tinygrad's CPU device compiles with clang (a Debian
# package), installed when missing and possible.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install --quiet -c requirements/constraints.txt "$@" \
  -e ".[tensorflow,mlx,tinygrad,pytensor,flax,keras,equinox]"
python -m pip install --quiet -c requirements/constraints.txt "$@" \
  httpx safetensors Pillow protobuf networkx typing_extensions
python -m pip install --quiet -c requirements/constraints.txt --no-deps "$@" paddlepaddle
if ! command -v clang >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get install -y -q clang >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q clang >/dev/null; }
  else
    echo "clang is missing: tinygrad's tests run on its Python emulator (DEV=PYTHON)" >&2
  fi
fi
