"""Every example in every public docstring runs and prints what it says."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest
import tensorops.layers

import tensorops


def _modules() -> list[str]:
    names = ["tensorops"]
    # the layers are installed from their own folder (package-dir), so walk them too
    for package in (tensorops, tensorops.layers):
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if not info.name.endswith("__main__"):
                names.append(info.name)
    return sorted(set(names))


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name: str) -> None:
    if name.startswith("tensorops.layers") or name.endswith("_torch"):
        pytest.importorskip("torch")
    module = importlib.import_module(name)
    result = doctest.testmod(
        module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False
    )
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
