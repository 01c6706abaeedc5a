"""A Griffe extension: the API page shows each layer's docstring as the class has it.

A layer class gets its docstring when it is defined, made from the one it is written
with and the table of ``layers/_docs.py`` (`tensorops.layers._family.Layer`).
mkdocstrings reads the source without running it, so this extension makes the same
text with the same function, for each class a family module exports (mkdocs.yml).
"""

from __future__ import annotations

from typing import Any

import griffe
from tensorops.layers._docs import layer_docstring


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
