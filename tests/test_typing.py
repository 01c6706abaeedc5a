"""Type checkers see that an op returns the array type it was given."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent / "typing"

pytest.importorskip("mypy")
pytest.importorskip("torch")


def _mypy(path: Path) -> str:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--follow-imports=silent",
            "--ignore-missing-imports",
            str(path),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    return result.stdout


def test_pass_file_type_checks() -> None:
    output = _mypy(HERE / "pass_types.py")
    assert "Success" in output, output


def test_fail_file_reports_each_marked_line() -> None:
    path = HERE / "fail_types.py"
    output = _mypy(path)
    expected = {i for i, line in enumerate(path.read_text().splitlines(), 1) if "# E:" in line}
    reported = {int(m.group(1)) for m in re.finditer(r"fail_types\.py:(\d+): error", output)}
    assert reported == expected, output
