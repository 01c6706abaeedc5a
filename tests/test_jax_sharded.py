"""The ops on JAX arrays sharded over four host devices, under jax.jit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import _jax_sharded, _seed

pytest.importorskip("jax")


def test_ops_on_sharded_arrays_under_jit() -> None:
    env = dict(os.environ)
    env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={_jax_sharded.DEVICES}"
    env["JAX_PLATFORMS"] = "cpu"
    env[_seed.ENV] = str(_seed.seed())
    done = subprocess.run(
        [sys.executable, "-m", "tests._jax_sharded"],
        cwd=Path(__file__).parent.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 2 * len(_jax_sharded.CASES), lines
    assert all(line.startswith("ok ") for line in lines)
