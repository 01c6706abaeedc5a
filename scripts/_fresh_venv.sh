# Sourced by scripts/pin.sh and scripts/check_newest.sh from the repository root: a fresh
# virtualenv under $tmp (removed on exit) with pip upgraded and torch==2.13.0 (the CPU
# build); $py is its python and $extras the extras both scripts install.
extras="torch,progress,plot,partition,bench,test,docs"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m venv "$tmp/venv"
py="$tmp/venv/bin/python"
"$py" -m pip install --quiet --upgrade pip
"$py" -m pip install --quiet "torch==2.13.0"
