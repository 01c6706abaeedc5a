"""Griffe extensions: the API page shows the docstrings that are completed at run time.

Two kinds of public object get part of their docstring from a table when they are
defined: each layer class (``layers/_docs.py``, `tensorops.layers._family.Layer`) and
each two-operand element-wise function (`tensorops._elementwise._api`). mkdocstrings
reads the source without running it, so these extensions make the same text with the
same functions (mkdocs.yml).
"""

from __future__ import annotations

from typing import Any

import griffe
from tensorops.layers._docs import layer_docstring

from tensorops._elementwise._api import two_operand_docstring


class LayerDocstrings(griffe.Extension):
    """Make the docstrings of the layer families' classes, as they are made at run time."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        """Rewrite the docstring of every class exported by a module of the ``layers`` package."""
        if pkg.path != "layers":
            return
        for family in pkg.modules.values():
            if family.name.startswith("_"):
                continue
            for name in family.exports or ():
                docstring = family.members[name].docstring
                if docstring is None:
                    raise ValueError(f"layers.{family.name}.{name} has no docstring")
                docstring.value = layer_docstring(name, family.name, docstring.value)


class TwoOperandDocstrings(griffe.Extension):
    """Make the docstrings of the two-operand element-wise functions, as at run time."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        """Complete the docstring of every function of the module decorated ``_two_operands``."""
        if pkg.path != "tensorops":
            return
        module = pkg.modules["_elementwise"].modules["_api"]
        for function in module.functions.values():
            if any(d.callable_path.endswith("_two_operands") for d in function.decorators):
                assert function.docstring is not None  # the decorator needs its examples
                function.docstring.value = two_operand_docstring(
                    function.name, function.docstring.value
                )
