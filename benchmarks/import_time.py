"""Import time of tensorops against its unavoidable base, numpy + array_api_compat.

Usage: python benchmarks/import_time.py [--runs N] [--quick]

Each measurement is a fresh interpreter, so nothing is cached in the process.
Two numbers per import: the wall time of ``python -c "import ..."`` (interpreter
start-up included, as users feel it) and the cumulative microseconds that
``python -X importtime`` attributes to the imported top-level modules. The
target is tensorops at most 1.5x the base.

Before timing, each case runs once with bytecode writing allowed, so the timed
interpreters import from ``__pycache__`` as an installed package does, rather
than compiling a source checkout on every run (which ``PYTHONDONTWRITEBYTECODE``
would otherwise cause).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = 1.5

CASES = {
    "python (empty)": "pass",
    "numpy, array_api_compat": "import numpy, array_api_compat",
    "tensorops": "import tensorops",
}
TOP_LEVEL = {
    "python (empty)": (),
    "numpy, array_api_compat": ("numpy", "array_api_compat"),
    "tensorops": ("tensorops",),
}


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


def warm_bytecode_cache(code: str) -> None:
    """Run ``code`` once with bytecode writing allowed: later runs load, not compile."""
    env = _env()
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def wall_time(code: str) -> float:
    """Seconds for a fresh interpreter to run ``code``."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=_env())
    return time.perf_counter() - start


def import_time(code: str, modules: tuple[str, ...]) -> float:
    """Microseconds ``-X importtime`` reports for the top-level ``modules`` (cumulative)."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        check=True,
        capture_output=True,
        text=True,
        env=_env(),
    )
    total = 0.0
    for line in result.stderr.splitlines():
        # "import time:   self [us] |  cumulative | imported package"
        if not line.startswith("import time:") or "|" not in line:
            continue
        parts = [part.strip() for part in line[len("import time:") :].split("|")]
        if len(parts) == 3 and parts[2] in modules:
            total += float(parts[1])
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="fresh interpreters per case")
    parser.add_argument("--quick", action="store_true", help="3 interpreters per case")
    args = parser.parse_args(argv)
    runs = 3 if args.quick else args.runs
    for code in CASES.values():
        warm_bytecode_cache(code)
    wall_runs: dict[str, list[float]] = {name: [] for name in CASES}
    import_runs: dict[str, list[float]] = {name: [] for name in CASES}
    # Round-robin over the cases, so a change in machine load hits every case alike.
    for _ in range(runs):
        for name, code in CASES.items():
            wall_runs[name].append(wall_time(code))
            import_runs[name].append(import_time(code, TOP_LEVEL[name]))
    walls = {name: statistics.median(times) for name, times in wall_runs.items()}
    imports = {name: statistics.median(times) for name, times in import_runs.items()}
    base = "numpy, array_api_compat"
    print(f"Median of {runs} fresh interpreters; Python {sys.version.split()[0]}.\n")
    print("| import | wall time (ms) | -X importtime (ms) | ratio to base (importtime) |")
    print("|---|---:|---:|---:|")
    for name in CASES:
        shown = f"{imports[name] / imports[base]:.2f}x" if TOP_LEVEL[name] else "-"
        wall_ms, import_ms = walls[name] * 1e3, imports[name] / 1e3
        print(f"| `{CASES[name]}` | {wall_ms:.1f} | {import_ms:.1f} | {shown} |")
    ratio = imports["tensorops"] / imports[base]
    verdict = "meets" if ratio <= TARGET else "misses"
    print(f"\ntensorops / base = {ratio:.2f}x: {verdict} the target of {TARGET}x.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
