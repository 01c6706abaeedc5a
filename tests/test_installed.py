"""The package as users install it: run by CI against the built wheel.

With ``TENSOROPS_TEST_INSTALLED=1`` (set by ``scripts/test_wheel.sh``), the suite must be
testing an installed tensorops, not the checkout: these tests check where it was imported
from, its version, ``py.typed``, ``tensorops.layers`` and the ``tensorops`` command.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

import tensorops

pytestmark = pytest.mark.skipif(
    os.environ.get("TENSOROPS_TEST_INSTALLED") != "1",
    reason="checks an installed wheel; set TENSOROPS_TEST_INSTALLED=1 (scripts/test_wheel.sh does)",
)

PACKAGE = Path(tensorops.__file__).resolve().parent
PURELIB = Path(sysconfig.get_paths()["purelib"]).resolve()


def test_tensorops_is_imported_from_site_packages() -> None:
    assert PACKAGE.parent == PURELIB, f"tensorops imported from {PACKAGE}, not {PURELIB}"
    assert not (PACKAGE.parent / "pyproject.toml").exists()


def test_the_installed_distribution_is_a_wheel_not_an_editable_checkout() -> None:
    dist = metadata.distribution("tensorops")
    direct_url = dist.read_text("direct_url.json") or ""
    assert "editable" not in direct_url, direct_url


def test_version_matches_the_project_metadata() -> None:
    expected = os.environ.get("TENSOROPS_EXPECTED_VERSION")
    if expected is None:
        pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
        expected = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"]
    assert tensorops.__version__ == expected == metadata.version("tensorops")


def test_py_typed_is_shipped() -> None:
    assert (PACKAGE / "py.typed").is_file()


def test_layers_are_shipped_inside_the_package() -> None:
    import tensorops.layers

    assert Path(tensorops.layers.__file__).resolve().parent == PACKAGE / "layers"
    assert (PACKAGE / "layers" / "torch.py").is_file()
    torch_layers = pytest.importorskip("tensorops.layers.torch")
    assert Path(torch_layers.__file__).resolve().parent == PACKAGE / "layers"


def test_the_tensorops_command_is_installed() -> None:
    command = shutil.which("tensorops", path=str(Path(sys.executable).parent))
    assert command is not None, "the tensorops console script is not installed"
    result = subprocess.run([command, "--version"], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == f"tensorops {tensorops.__version__}"
    explained = subprocess.run(
        [command, "explain", "a b -> b a", "--shape", "2,3"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert explained.stdout
