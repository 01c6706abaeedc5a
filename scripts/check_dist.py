"""Check what the built sdist and wheel hold before they are installed and tested.

Usage: ``python scripts/check_dist.py dist/``. The wheel must ship ``tensorops/py.typed``,
every module of ``tensorops/`` and ``layers/`` (as ``tensorops/layers``), the licence and
the console script, and no tests; the sdist must hold the sources, ``layers/``, the
licence and no tests.
Exits 1 with a list of the problems found.
"""

from __future__ import annotations

import sys
import tarfile
import zipfile
from pathlib import Path

#: The wheel's files besides the modules of the source tree (`source_modules`).
WHEEL_FILES = ["tensorops/py.typed"]
SDIST_FILES = ["pyproject.toml", "LICENSE", "README.md", "tensorops/py.typed", "layers/torch.py"]


def source_modules() -> list[str]:
    """Every module of the source tree as the wheel names it (``layers/``: ``tensorops/layers``)."""
    root = Path(__file__).resolve().parent.parent
    core = [str(p.relative_to(root)) for p in (root / "tensorops").rglob("*.py")]
    layers = [f"tensorops/layers/{p.name}" for p in (root / "layers").glob("*.py")]
    return sorted(core) + sorted(layers)


def wheel_problems(path: Path) -> list[str]:
    """What is wrong with the wheel at ``path``: a module of the source tree left out, ..."""
    names = zipfile.ZipFile(path).namelist()
    wanted = [*WHEEL_FILES, *source_modules()]
    problems = [f"missing {name}" for name in wanted if name not in names]
    if not any(name.endswith(".dist-info/licenses/LICENSE") for name in names):
        problems.append("missing the LICENSE in .dist-info/licenses")
    entry_points = [name for name in names if name.endswith(".dist-info/entry_points.txt")]
    if not entry_points:
        problems.append("missing entry_points.txt (the tensorops command)")
    elif "tensorops = tensorops.__main__:main" not in zipfile.ZipFile(path).read(
        entry_points[0]
    ).decode("utf-8"):
        problems.append("entry_points.txt has no tensorops console script")
    problems += [f"ships a test file {name}" for name in names if name.startswith("tests/")]
    return problems


def sdist_problems(path: Path) -> list[str]:
    """What is wrong with the sdist at ``path``."""
    with tarfile.open(path) as archive:
        names = [name.split("/", 1)[1] for name in archive.getnames() if "/" in name]
    problems = [f"missing {name}" for name in SDIST_FILES if name not in names]
    problems += [f"ships a test file {name}" for name in names if name.startswith("tests/")]
    return problems


def main(directory: str) -> int:
    """Check the one wheel and the one sdist in ``directory``; print the problems."""
    wheels = sorted(Path(directory).glob("tensorops-*.whl"))
    sdists = sorted(Path(directory).glob("tensorops-*.tar.gz"))
    if len(wheels) != 1 or len(sdists) != 1:
        print(f"expected one wheel and one sdist in {directory}: {wheels + sdists}")
        return 1
    problems = [f"{wheels[0].name}: {p}" for p in wheel_problems(wheels[0])]
    problems += [f"{sdists[0].name}: {p}" for p in sdist_problems(sdists[0])]
    for problem in problems:
        print(problem)
    if not problems:
        print(f"{wheels[0].name} and {sdists[0].name} hold what they should")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "dist"))
