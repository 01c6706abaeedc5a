# Sourced by scripts/pin.sh and scripts/check_newest.sh (run from the repository root).
# full_venv [pip install options]: a fresh virtualenv in a temporary folder, removed on exit,
# with torch==2.13.0 (the CPU build), then tensorops with every extra, then Paddle (as
# scripts/install_frameworks.sh installs it); sets $tmp and $py.
extras="torch,progress,plot,partition,bench,test,docs,tensorflow,mlx,tinygrad,pytensor,flax,keras,equinox"
full_venv() {
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  python3 -m venv "$tmp/venv"
  py="$tmp/venv/bin/python"
  "$py" -m pip install --quiet --upgrade pip
  "$py" -m pip install --quiet "torch==2.13.0"
  "$py" -m pip install --quiet "$@" ".[$extras]"
  # paddlepaddle pins opt_einsum==3.3.0; the suites run opt_einsum's own tests on 3.4
  "$py" -m pip install --quiet "$@" httpx safetensors Pillow protobuf networkx typing_extensions
  "$py" -m pip install --quiet --no-deps "$@" paddlepaddle
}
