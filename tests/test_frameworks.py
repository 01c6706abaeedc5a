"""The op and layer tests on each framework of ``tests/_frameworks.py``, one process each.

Each framework gets a pytest process of its own (TensorFlow and Paddle cannot share one:
the interpreter crashes), running ``SUITE`` with ``TENSOROPS_TEST_FRAMEWORK`` set, and,
for the frameworks einops supports, einops' own suite on that framework (and opt_einsum's
tests of TensorFlow as a backend in TensorFlow's process). A framework that
is not installed is skipped with the extra that installs it.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import _frameworks

ROOT = Path(__file__).resolve().parents[1]


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


#: Seconds one test of a framework's process may take (pytest-timeout fails it and names
#: it), and the whole process: a hang inside a framework fails the test instead of
#: stalling the run.
TEST_TIMEOUT = 300
PROCESS_TIMEOUT = 1500


def _run(name: str, arguments: list[str], environment: dict[str, str]) -> None:
    command = [
        *(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"),
        f"--timeout={TEST_TIMEOUT}",
        *arguments,
    ]
    try:
        done = subprocess.run(
            command,
            cwd=ROOT,
            env={**os.environ, _frameworks.ENV: name, **environment},
            capture_output=True,
            text=True,
            check=False,
            timeout=PROCESS_TIMEOUT,
        )
    except subprocess.TimeoutExpired as expired:
        output = expired.stdout or b""  # bytes, though text=True (a subprocess quirk)
        if isinstance(output, bytes):
            output = output.decode(errors="replace")
        pytest.fail(
            f"{' '.join(command)} on {name} ran past {PROCESS_TIMEOUT} s:\n{output[-20000:]}",
            pytrace=False,
        )
    if done.returncode != 0:
        pytest.fail(
            f"{' '.join(command)} on {name} exited {done.returncode}:\n"
            f"{done.stdout[-20000:]}\n{done.stderr[-5000:]}",
            pytrace=False,
        )


def _require(name: str) -> _frameworks.Framework:
    framework = _frameworks.FRAMEWORKS[name]
    if not _installed(framework.module):
        pytest.skip(
            f'{name} is not installed: pip install "tensorops[{framework.extra}]" '
            "(the CI's framework step installs every framework)"
        )
    return framework


@pytest.mark.parametrize("name", sorted(_frameworks.FRAMEWORKS))
def test_suite_on_framework(name: str) -> None:
    framework = _require(name)
    own = [f"tests/frameworks/{file}" for file in framework.tests]
    if framework.modules:
        own.append("tests/frameworks/test_docstrings.py")
    suite = list(_frameworks.SUITE) if framework.family else []
    _run(name, [*suite, *own], framework.environment)


@pytest.mark.parametrize(
    "name", sorted(name for name, f in _frameworks.FRAMEWORKS.items() if f.einops)
)
def test_einops_suite_on_framework(name: str) -> None:
    framework = _require(name)
    assert framework.einops is not None
    _run(
        name,
        ["tests/compat/test_einops.py"],
        {**framework.environment, "EINOPS_TEST_BACKENDS": framework.einops},
    )


@pytest.mark.parametrize(
    "name", sorted(name for name, f in _frameworks.FRAMEWORKS.items() if f.opt_einsum)
)
def test_opt_einsum_backend_tests_on_framework(name: str) -> None:
    """opt_einsum's tests of ``backend=<framework>``, against tensorops' expressions."""
    framework = _require(name)
    assert framework.opt_einsum is not None
    _run(
        name,
        ["tests/compat/test_opt_einsum.py", "-k", framework.opt_einsum],
        framework.environment,
    )
