"""Code shape: no function of tensorops/ or layers/ is longer than 60 lines.

A function's length runs from its ``def`` line to its last line, its docstring
left out. The command-line parser (a table of options) is exempt by name.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import tensorops.layers

import tensorops

#: The package's source as imported: the checkout, or the installed wheel (where
#: ``layers/`` is ``tensorops/layers``).
SOURCES = {
    "tensorops": Path(tensorops.__file__).resolve().parent,
    "layers": Path(tensorops.layers.__file__).resolve().parent,
}
LIMIT = 60
EXEMPT = {("tensorops/__main__.py", "_build_parser")}


def function_lengths(source: str) -> list[tuple[str, int, int]]:
    """(name, first line, length without the docstring) of every function in `source`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        assert node.end_lineno is not None
        length = node.end_lineno - node.lineno + 1
        if ast.get_docstring(node, clean=False) is not None:
            first = node.body[0]
            assert first.end_lineno is not None
            length -= first.end_lineno - first.lineno + 1
        found.append((node.name, node.lineno, length))
    return found


def test_the_measure() -> None:
    source = "def f(x):\n    '''Doc.\n\n    More.\n    '''\n    y = x\n"
    source += "    return y\n\n\ndef g():\n    pass\n"
    assert function_lengths(source) == [("f", 1, 3), ("g", 10, 2)]


@pytest.mark.parametrize("package", ["tensorops", "layers"])
def test_no_function_is_longer_than_the_limit(package: str) -> None:
    root = SOURCES[package]
    files = sorted(root.rglob("*.py"))
    assert files
    long = []
    for path in files:
        relative = f"{package}/{path.relative_to(root).as_posix()}"
        for name, line, length in function_lengths(path.read_text(encoding="utf-8")):
            if length > LIMIT and (relative, name) not in EXEMPT:
                long.append(f"{relative}:{line} {name}: {length} lines")
    assert not long, f"functions over {LIMIT} lines (split them):\n" + "\n".join(long)
