"""Speed of ``tensorops lint`` on a 100,000-line codebase, one core, against its floor and a peer.

Usage: python benchmarks/lint_speed.py [--lines N] [--runs N] [--quick]

The codebase is the linter's corpus of model files (``tests/lint_corpus``: ViT,
Perceiver, MLP-Mixer, U-Net, tensor networks, JAX, Keras, every import style), copied
into packages until it holds at least ``--lines`` lines (default 100,000): model code
as dense in pattern calls as code gets (about one call in eight lines). Each command
is a whole fresh process, interpreter start and imports included, pinned to one core
(``taskset -c 0`` where it exists), the commands taking turns round by round:

* ``tensorops lint DIR``: the linter (it finds nothing: the corpus is clean);
* ``flake8 --select TOP -j 1 DIR``: the same checks through the flake8 plugin;
* ``ast.parse`` of every file: what any linter written in Python pays to read the code;
* ``pyflakes`` (``flake8 --select F -j 1``): a familiar Python linter on the same code.

Each row reports the wall time (fastest round and median) and the CPU time (user +
system, fastest round) of the process: on a machine shared with other jobs the wall
time includes the time the process waited for its core, the CPU time is the work it
did on it. The target is the linter under 5 s for 100,000 lines.
``--quick``: 20,000 lines, two rounds.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "lint_corpus"
TARGET_SECONDS = 5.0

PARSE = (
    "import ast, pathlib, sys\n"
    "for path in sorted(pathlib.Path(sys.argv[1]).rglob('*.py')):\n"
    "    ast.parse(path.read_text(encoding='utf-8'))\n"
)


def make_codebase(directory: Path, lines: int) -> int:
    """Copy the corpus into packages under `directory` until it has `lines` lines; the count."""
    files = sorted(CORPUS.glob("*.py"))
    per_copy = sum(len(f.read_text(encoding="utf-8").splitlines()) for f in files)
    copies = -(-lines // per_copy)
    for i in range(copies):
        package = directory / f"models_{i:03d}"
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("")
        for f in files:
            shutil.copy(f, package / f.name)
    return copies * per_copy


def commands(directory: Path) -> dict[str, list[str]]:
    python = sys.executable
    return {
        "tensorops lint": [python, "-m", "tensorops", "lint", str(directory)],
        "flake8 --select TOP": [
            python, "-m", "flake8", "--select", "TOP", "-j", "1", str(directory),
        ],
        "ast.parse only": [python, "-c", PARSE, str(directory)],
        "pyflakes (flake8 --select F)": [
            python, "-m", "flake8", "--select", "F", "-j", "1", str(directory),
        ],
    }  # fmt: skip


def _pinned(command: list[str]) -> list[str]:
    taskset = shutil.which("taskset")
    return [taskset, "-c", "0", *command] if taskset else command


def time_once(command: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system) of one fresh process running `command`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(_pinned(command), capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode not in (0, 1):
        raise RuntimeError(f"{command} failed:\n{result.stderr}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return elapsed, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    lines, runs = (20_000, 2) if args.quick else (args.lines, args.runs)
    with tempfile.TemporaryDirectory() as temporary:
        directory = Path(temporary) / "codebase"
        total = make_codebase(directory, lines)
        cases = commands(directory)
        subprocess.run(cases["tensorops lint"], capture_output=True, check=False)  # bytecode
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
        for _ in range(runs):
            for name, command in cases.items():
                times[name].append(time_once(command))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    files = len(sorted(CORPUS.glob("*.py")))
    print(f"{total:,} lines, {files} files a package; every process on one core;")
    print(f"load average {load:.1f}; {runs} rounds\n")
    print("| command | wall, fastest (s) | wall, median (s) | CPU (s) | CPU per 100k lines (s) |")
    print("|---|---:|---:|---:|---:|")
    scale = 100_000 / total
    for name, values in times.items():
        walls, cpus = [v[0] for v in values], [v[1] for v in values]
        wall, median, cpu = min(walls), statistics.median(walls), min(cpus)
        print(f"| {name} | {wall:.2f} | {median:.2f} | {cpu:.2f} | {cpu * scale:.2f} |")
    best = min(v[1] for v in times["tensorops lint"]) * scale
    verdict = "within" if best <= TARGET_SECONDS else "over"
    print(
        f"\ntensorops lint: {best:.2f} CPU s per 100,000 lines ({verdict} {TARGET_SECONDS:.0f} s)"
    )


if __name__ == "__main__":
    main()
