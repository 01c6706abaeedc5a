"""Python source -> the calls of known pattern functions, each callee resolved through its imports.

Nothing of the checked code is imported or run: the file is parsed with `ast` and
each name is resolved the way Python would, scope by scope:

* an import binds a name to a dotted path (``import einops as E`` binds ``E`` to
  ``einops``; ``from einops.layers.torch import Rearrange as R`` binds ``R`` to
  ``einops.layers.torch.Rearrange``); an attribute chain on it extends the path
  (``E.rearrange`` is ``einops.rearrange``);
* a name is looked up in the function it is used in, then in the enclosing
  functions, then in the module (class bodies are skipped, as Python skips them);
* a name bound in a scope by anything but an import of the same path (an
  assignment, a parameter, a ``def``, a second import of another path) is not
  resolved there: the linter never guesses what a call runs.

Constants are read the same way (`Constants`): string and integer literals, tuples
of them, f-strings whose parts are all constants, ``+`` of two strings, and names
assigned once at module level to such a value.
"""

from __future__ import annotations

import ast
import bisect
import functools
import re
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

__all__ = ["UNKNOWN", "Constants", "FoundCall", "find_calls"]

#: What `Constants.value` returns for an expression whose value cannot be known statically.
UNKNOWN: Any = type("Unknown", (), {"__repr__": lambda self: "UNKNOWN"})()

#: The top-level packages whose imports are followed; others are never resolved.
_LIBRARIES = frozenset({"tensorops", "einops", "numpy", "torch", "jax", "opt_einsum"})

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


class FoundCall(NamedTuple):
    """A call whose callee resolves to a dotted path of one of the followed libraries.

    Attributes:
        path: e.g. ``"einops.rearrange"``, ``"tensorops.layers.torch.EinMix"``.
        node: the call.
        shadowed: whether a name is bound in a function around the call (then a
            module constant of that name is not what the call reads).
    """

    path: str
    node: ast.Call
    shadowed: Callable[[str], bool]


class _Scope(NamedTuple):
    """A function, lambda, comprehension or class, by where its text starts and ends."""

    start: tuple[int, int]
    end: tuple[int, int]
    node: ast.AST


def _span(node: ast.AST) -> tuple[tuple[int, int], tuple[int, int]]:
    return (node.lineno, node.col_offset), (  # type: ignore[attr-defined]
        node.end_lineno,  # type: ignore[attr-defined]
        node.end_col_offset,  # type: ignore[attr-defined]
    )


def _root_and_path(func: ast.expr) -> tuple[str, list[str]] | None:
    """``a.b.c`` -> (``"a"``, ``["b", "c"]``); None for anything but a dotted name."""
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        return func.id, parts[::-1]
    return None


def _import_bindings(node: ast.Import | ast.ImportFrom) -> Iterator[tuple[str, str | None]]:
    """(name bound, dotted path or None when not a followed library) for each alias."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            top = alias.name.partition(".")[0]
            followed = top in _LIBRARIES
            if alias.asname is not None:
                yield alias.asname, alias.name if followed else None
            else:  # `import a.b` binds `a` to the package a
                yield top, top if followed else None
        return
    module = node.module or ""
    followed = node.level == 0 and module.partition(".")[0] in _LIBRARIES
    for alias in node.names:
        if alias.name == "*":
            continue
        yield alias.asname or alias.name, f"{module}.{alias.name}" if followed else None


def _bound_names(scope: ast.AST) -> Iterator[str]:
    """Every name `scope` binds other than by an import (over-approximated: nested scopes too)."""
    if isinstance(scope, ast.Lambda | ast.FunctionDef | ast.AsyncFunctionDef):
        arguments = scope.args
        for arg in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs):
            yield arg.arg
        for arg in (arguments.vararg, arguments.kwarg):
            if arg is not None:
                yield arg.arg
    bodies = scope.body if isinstance(scope.body, list) else [scope.body]  # type: ignore[attr-defined]
    if isinstance(scope, _COMPREHENSIONS):
        bodies = list(scope.generators)
    for statement in bodies:
        for node in ast.walk(statement):
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                yield node.id
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                yield node.name
            elif isinstance(node, ast.arg):
                yield node.arg
            elif isinstance(node, ast.Global | ast.Nonlocal):
                yield from node.names
            elif isinstance(node, ast.ExceptHandler) and node.name:
                yield node.name
            elif isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
                yield node.name
            elif isinstance(node, ast.MatchMapping) and node.rest:
                yield node.rest


def _module_bound_names(tree: ast.Module) -> set[str]:
    """Names the module binds other than by an import, without entering functions or classes."""
    names: set[str] = set()
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
            stack.extend(node.decorator_list)
            continue
        if isinstance(node, ast.Lambda | ast.Import | ast.ImportFrom):
            continue
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            names.update(node.names)
        stack.extend(ast.iter_child_nodes(node))
    return names


class _Resolver:
    """Looks names up scope by scope, as described in the module docstring."""

    def __init__(self, tree: ast.Module, source: str, scopes: list[_Scope]) -> None:
        self.tree = tree
        self.lines = source.splitlines()
        self.scopes = sorted(scopes, key=lambda scope: scope.start)
        self.starts = [scope.start for scope in self.scopes]
        # scope node (None: the module) -> name -> the paths its imports bind it to
        self.imports: dict[ast.AST | None, dict[str, set[str | None]]] = {}
        self.module_names: set[str] | None = None
        self.local_names: dict[ast.AST, frozenset[str]] = {}

    def enclosing(self, node: ast.AST) -> list[ast.AST]:
        """The scopes around `node`, innermost first."""
        start, end = _span(node)
        found = []
        for i in range(bisect.bisect_right(self.starts, start) - 1, -1, -1):
            scope = self.scopes[i]
            if scope.start <= start and end <= scope.end and scope.node is not node:
                found.append(scope.node)
        found.sort(key=lambda s: _span(s)[0], reverse=True)
        return found

    def add_import(self, node: ast.Import | ast.ImportFrom) -> None:
        around = self.enclosing(node)
        scope = around[0] if around else None
        table = self.imports.setdefault(scope, {})
        for name, path in _import_bindings(node):
            table.setdefault(name, set()).add(path)

    def binds_otherwise(self, scope: ast.AST | None, name: str) -> bool:
        """Whether `scope` binds `name` by anything but an import."""
        if scope is None:
            if self.module_names is None:
                self.module_names = _module_bound_names(self.tree)
            return name in self.module_names
        if not self._may_bind(scope, name):
            return False
        names = self.local_names.get(scope)
        if names is None:
            names = self.local_names[scope] = frozenset(_bound_names(scope))
        return name in names

    def _may_bind(self, scope: ast.AST, name: str) -> bool:
        # A name used only as `name.` or `name(` in the scope's text is bound by none of
        # its statements: then its subtree need not be walked (the common case).
        start, end = _span(scope)
        text = _strip_literals("\n".join(self.lines[start[0] - 1 : end[0]]))
        return re.search(rf"(?<![\w.]){re.escape(name)}\b(?!\s*[.(])", text) is not None

    def shadows(self, scopes: list[ast.AST], name: str) -> bool:
        """Whether a function or class around a call binds `name` (by anything)."""
        for scope in scopes:
            if isinstance(scope, ast.ClassDef) and scope is not scopes[0]:
                continue
            if name in self.imports.get(scope, {}) or self.binds_otherwise(scope, name):
                return True
        return False

    def resolve(self, func: ast.expr, scopes: list[ast.AST]) -> str | None:
        rooted = _root_and_path(func)
        if rooted is None:
            return None
        root, rest = rooted
        for scope in [*scopes, None]:
            if isinstance(scope, ast.ClassDef) and scope is not scopes[0]:
                continue  # a class body's names are not visible inside its methods
            paths = self.imports.get(scope, {}).get(root)
            other = self.binds_otherwise(scope, root)
            if paths is None and not other:
                continue
            if other or paths is None or len(paths) != 1:
                return None
            (path,) = paths
            return None if path is None else ".".join([path, *rest])
        return None


_LITERAL = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|#[^\n]*")


def _strip_literals(text: str) -> str:
    """`text` without one-line string literals and comments (their words bind nothing)."""
    return _LITERAL.sub("''", text)


def find_calls(tree: ast.Module, source: str) -> list[FoundCall]:
    """Every call in `tree` whose callee resolves into a followed library, in source order."""
    scopes: list[_Scope] = []
    imports: list[ast.Import | ast.ImportFrom] = []
    calls: list[ast.Call] = []
    for node in ast.walk(tree):
        kind = type(node)
        if kind is ast.Call:
            calls.append(node)  # type: ignore[arg-type]
        elif kind is ast.Import or kind is ast.ImportFrom:
            imports.append(node)  # type: ignore[arg-type]
        elif isinstance(node, _SCOPES) or isinstance(node, _COMPREHENSIONS):
            start, end = _span(node)
            scopes.append(_Scope(start, end, node))
    if not imports:
        return []
    resolver = _Resolver(tree, source, scopes)
    for node in imports:
        resolver.add_import(node)
    names = {name for table in resolver.imports.values() for name, paths in table.items()}
    found = []
    for call in calls:
        rooted = _root_and_path(call.func)
        if rooted is None or rooted[0] not in names:
            continue
        scopes = resolver.enclosing(call)
        path = resolver.resolve(call.func, scopes)
        if path is not None:
            shadowed = functools.partial(resolver.shadows, scopes)
            found.append(FoundCall(path, call, shadowed))
    found.sort(key=lambda item: (item.node.lineno, item.node.col_offset))
    return found
