"""The docstring examples of the modules that import this process's framework.

``tests/test_frameworks.py`` runs this file in each framework's process; the main process
runs every other module's examples (``tests/test_doctests.py``).
"""

from __future__ import annotations

import doctest
import importlib

import pytest

from tests import _frameworks

_SELECTED = _frameworks.selected()
MODULES = _frameworks.FRAMEWORKS[_SELECTED].modules if _SELECTED else ()


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    result = doctest.testmod(module, optionflags=flags, verbose=False)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
