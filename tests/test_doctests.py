"""Every example in every public docstring runs and prints what it says.

The modules that import an optional framework (``modules`` in ``tests/_frameworks.py``)
run theirs in that framework's own test process (``tests/frameworks/``), where
``tests/frameworks/test_docstrings.py`` runs them.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest
import tensorops.layers

import tensorops
from tests import _frameworks

ELSEWHERE = {
    module: name
    for name, framework in _frameworks.FRAMEWORKS.items()
    for module in framework.modules
}


def _modules() -> list[str]:
    names = ["tensorops"]
    # the layers are installed from their own folder (package-dir), so walk them too
    for package in (tensorops, tensorops.layers):
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if not info.name.endswith("__main__") and info.name not in ELSEWHERE:
                names.append(info.name)
    return sorted(set(names))


def _run_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(
        module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False
    )
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name: str) -> None:
    if name.startswith("tensorops.layers") or name.endswith("_torch"):
        pytest.importorskip("torch")
    _run_examples(name)


def test_every_framework_module_is_run_elsewhere() -> None:
    walked = {
        info.name
        for package in (tensorops, tensorops.layers)
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}.")
    }
    assert set(ELSEWHERE) <= walked  # no stale name
    for module, name in ELSEWHERE.items():
        assert name in _frameworks.FRAMEWORKS, module
