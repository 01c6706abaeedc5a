"""Type checkers see that an op returns the array type it was given."""

from __future__ import annotations

import functools
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent / "typing"

pytest.importorskip("mypy")
pytest.importorskip("torch")


@functools.cache
def _mypy() -> str:
    """mypy's report on both files, from one run (each run takes about half a minute)."""
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--follow-imports=silent",
            "--ignore-missing-imports",
            str(HERE / "pass_types.py"),
            str(HERE / "fail_types.py"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    return result.stdout


def _reported(output: str, name: str) -> set[int]:
    return {int(m.group(1)) for m in re.finditer(rf"{name}\.py:(\d+): error", output)}


def test_pass_file_type_checks() -> None:
    output = _mypy()
    assert "pass_types.py" not in output, output
    assert re.search(r"Found \d+ errors? in 1 file \(checked 2 source files\)", output), output


def test_fail_file_reports_each_marked_line() -> None:
    path = HERE / "fail_types.py"
    output = _mypy()
    expected = {i for i, line in enumerate(path.read_text().splitlines(), 1) if "# E:" in line}
    assert _reported(output, "fail_types") == expected, output
