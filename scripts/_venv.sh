# Sourced by scripts/pin.sh and scripts/check_newest.sh (run from the repository root).
# full_venv [pip install options]: a fresh virtualenv in a temporary folder, removed on exit,
# with torch==2.13.0 (the CPU build) and then tensorops with every extra; sets $tmp and $py.
extras="torch,progress,plot,partition,bench,test,docs"
full_venv() {
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  python3 -m venv "$tmp/venv"
  py="$tmp/venv/bin/python"
  "$py" -m pip install --quiet --upgrade pip
  "$py" -m pip install --quiet "torch==2.13.0"
  "$py" -m pip install --quiet "$@" ".[$extras]"
}
