"""Every example in every public docstring runs and prints what it says."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import tensorops


def _modules() -> list[str]:
    names = ["tensorops"]
    for info in pkgutil.walk_packages(tensorops.__path__, "tensorops."):
        if info.name.endswith("__main__"):
            continue
        names.append(info.name)
    return sorted(names)


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name: str) -> None:
    if name.startswith("tensorops.layers") or name.endswith("_torch"):
        pytest.importorskip("torch")
    module = importlib.import_module(name)
    result = doctest.testmod(
        module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False
    )
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
