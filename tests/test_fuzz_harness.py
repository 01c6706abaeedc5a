"""Run the atheris harness of ``tests/fuzz`` for a bounded time."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

HARNESS = Path(__file__).parent / "fuzz" / "fuzz_patterns.py"


def test_atheris_harness_finds_no_crash(tmp_path: Path) -> None:
    if importlib.util.find_spec("atheris") is None:
        pytest.skip("atheris is not installed (pip install atheris)")
    result = subprocess.run(
        [sys.executable, str(HARNESS), "-max_total_time=4", "-rss_limit_mb=4096"],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,  # crash-* artifacts land here, not in the repository
    )
    assert result.returncode == 0, result.stderr[-4000:]
