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

Most of a module is never visited: regular expressions find where the followed
libraries are imported and where a name they bind is called, and only the nodes
whose text holds one of those places are entered (`_Descent`). A scope's bindings
are read from its statements (`bound_names`), and not at all where its text shows
the name only before ``.`` or ``(``.
"""

from __future__ import annotations

import ast
import bisect
import functools
import re
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

__all__ = ["UNKNOWN", "FoundCall", "Scopes", "bound_names", "find_calls"]

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


Scopes = tuple[ast.AST, ...]  # the functions, classes, lambdas and comprehensions around a node

#: An import statement of a followed library starts on such a line.
_IMPORT = re.compile(
    r"^[ \t]*((?:from[ \t]+(?:tensorops|einops|numpy|torch|jax|opt_einsum)\b"
    r"|import[ \t][^\n]*\b(?:tensorops|einops|numpy|torch|jax|opt_einsum)\b))",
    re.M,
)
_NEWLINE = re.compile("\n")
_NESTED = (ast.Lambda, *_COMPREHENSIONS)
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_CONTEXTS = (ast.Load, ast.Store, ast.Del)
#: Nodes that hold no call and no import: never entered.
_LEAVES = frozenset({ast.Name, ast.Constant, ast.Load, ast.Store, ast.Del, ast.arg, ast.alias})


def _positions(source: str, lines: list[int], pattern: re.Pattern[str]) -> list[tuple[int, int]]:
    """Where `pattern`'s group 1 starts, as the AST counts: (line from 1, UTF-8 byte column).

    `lines` holds the offset at which each line starts.
    """
    found: list[tuple[int, int]] = []
    ascii_only = source.isascii()
    for match in pattern.finditer(source):
        start = match.start(1)
        line = bisect.bisect_right(lines, start)
        first = lines[line - 1]
        found.append((line, start - first if ascii_only else len(source[first:start].encode())))
    return found


def _start(node: ast.AST) -> tuple[int, int]:
    """Where `node`'s text starts; a decorated definition starts at its first decorator."""
    start = (node.lineno, node.col_offset)  # type: ignore[attr-defined]
    decorators = getattr(node, "decorator_list", None)
    if decorators:
        start = min(start, *((d.lineno, d.col_offset) for d in decorators))
    return start


class _Descent:
    """Finds the nodes of some kinds that start at given positions, with their scopes.

    Only nodes whose text holds one of the positions are entered: most of a module's
    nodes are never visited.
    """

    def __init__(self, kinds: tuple[type[ast.AST], ...], positions: list[tuple[int, int]]) -> None:
        self.kinds = kinds
        self.positions = positions
        self.targets = frozenset(positions)
        self.found: list[tuple[ast.AST, Scopes]] = []

    def visit(self, tree: ast.Module) -> None:
        # The hot loop of the linter: children are read through `_fields` and tested
        # inline (a bisect into the sorted positions), not through ast.iter_child_nodes.
        positions, count, bisect_left = self.positions, len(self.positions), bisect.bisect_left
        kinds, targets, found = self.kinds, self.targets, self.found
        stack: list[tuple[ast.AST, Scopes]] = [(tree, ())]
        while stack:
            node, scopes = stack.pop()
            if isinstance(node, kinds) and (node.lineno, node.col_offset) in targets:  # type: ignore[attr-defined]
                found.append((node, scopes))
            definition = isinstance(node, _DEFINITIONS)
            inner = (*scopes, node) if definition or isinstance(node, _NESTED) else scopes
            for field in node._fields:
                value = getattr(node, field, None)
                if type(value) is not list:
                    if not isinstance(value, ast.AST) or isinstance(value, _CONTEXTS):
                        continue
                    value = (value,)
                around = scopes if definition and field != "body" else inner
                for child in value:
                    if type(child) in _LEAVES:
                        continue
                    end_line = getattr(child, "end_lineno", None)
                    if end_line is not None:
                        if isinstance(child, _DEFINITIONS):
                            start = _start(child)
                        else:
                            start = (child.lineno, child.col_offset)  # type: ignore[union-attr]
                        i = bisect_left(positions, start)
                        end = (end_line, child.end_col_offset)  # type: ignore[union-attr]
                        if i == count or positions[i] > end:
                            continue
                    elif not isinstance(child, ast.AST):
                        continue
                    stack.append((child, around))


#: The statements whose targets bind names, and the fields that hold those targets.
_TARGETS = {
    ast.Assign: ("targets",),
    ast.AugAssign: ("target",),
    ast.AnnAssign: ("target",),
    ast.For: ("target",),
    ast.AsyncFor: ("target",),
    ast.Delete: ("targets",),
}


def _bound_parts(node: ast.stmt | ast.excepthandler) -> Iterator[ast.AST]:
    """A statement's inner statements and handlers, and the expressions it binds names to."""
    targets = _TARGETS.get(type(node), ())
    for name, value in ast.iter_fields(node):
        for child in value if isinstance(value, list) else (value,):
            if isinstance(child, ast.stmt | ast.excepthandler) or name in targets:
                yield child
            elif isinstance(child, ast.withitem) and child.optional_vars is not None:
                yield child.optional_vars
            elif isinstance(child, ast.match_case):
                yield child.pattern
                yield from child.body


def bound_names(scope: ast.AST, walrus: bool = True) -> frozenset[str]:
    """Every name `scope` binds other than by an import, its nested functions left out.

    Statements are read, not expressions: an expression binds a name only with ``:=``
    (`walrus`: the source has one; then every node is read).
    """
    names: set[str] = set()
    if isinstance(scope, ast.Lambda | ast.FunctionDef | ast.AsyncFunctionDef):
        arguments = scope.args
        every = (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)
        names.update(arg.arg for arg in (*every, arguments.vararg, arguments.kwarg) if arg)
    if isinstance(scope, _COMPREHENSIONS):
        stack: list[ast.AST] = [g.target for g in scope.generators]
    elif isinstance(scope, ast.Lambda):
        stack = [scope.body] if walrus else []
    else:
        stack = list(scope.body)  # type: ignore[attr-defined]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name):
            if not isinstance(node.ctx, ast.Load):
                names.add(node.id)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            names.update(node.names)
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
        if isinstance(node, (*_SCOPES, ast.Import, ast.ImportFrom)):
            continue
        if walrus or isinstance(node, ast.Starred | ast.Tuple | ast.List | ast.pattern):
            stack.extend(ast.iter_child_nodes(node))
        elif isinstance(node, ast.stmt | ast.excepthandler):
            stack.extend(_bound_parts(node))
    return frozenset(names)


class _Resolver:
    """Looks names up scope by scope, as described in the module docstring."""

    def __init__(self, tree: ast.Module, source: str, lines: list[int]) -> None:
        self.tree = tree
        self.source = source
        self.walrus = ":=" in source
        self.line_starts = lines
        # scope node (the module itself for the module) -> name -> the paths imports bind it to
        self.imports: dict[ast.AST, dict[str, set[str | None]]] = {}
        self.bound: dict[ast.AST, frozenset[str]] = {}
        self.may_bind: dict[tuple[ast.AST, str], bool] = {}

    def add_import(self, node: ast.Import | ast.ImportFrom, scopes: Scopes) -> None:
        table = self.imports.setdefault(scopes[-1] if scopes else self.tree, {})
        for name, path in _import_bindings(node):
            table.setdefault(name, set()).add(path)

    def binds_otherwise(self, scope: ast.AST, name: str) -> bool:
        """Whether `scope` binds `name` by anything but an import."""
        if scope is not self.tree:
            key = (scope, name)
            may = self.may_bind.get(key)
            if may is None:
                may = self.may_bind[key] = self._may_bind(scope, name)
            if not may:
                return False
        bound = self.bound.get(scope)
        if bound is None:
            bound = self.bound[scope] = bound_names(scope, self.walrus)
        return name in bound

    def _may_bind(self, scope: ast.AST, name: str) -> bool:
        # Where a scope's text has `name` only as `name.` or `name(`, none of its statements
        # binds it (`def name(` and `class name(` aside): its statements need not be read.
        starts = self.line_starts
        first = starts[scope.lineno - 1] + scope.col_offset  # type: ignore[attr-defined]
        last = starts[scope.end_lineno - 1] + scope.end_col_offset  # type: ignore[attr-defined]
        return _binding_text(name).search(self.source, first, last) is not None

    def _visible(self, scopes: Scopes) -> list[ast.AST]:
        """The scopes a name is looked up in, innermost first; a class only when innermost."""
        inner = [s for i, s in enumerate(scopes) if i == len(scopes) - 1 or not _is_class(s)]
        return [*reversed(inner), self.tree]

    def shadows(self, scopes: Scopes, name: str) -> bool:
        """Whether a function or class around a call binds `name` (by anything)."""
        return any(
            name in self.imports.get(scope, {}) or self.binds_otherwise(scope, name)
            for scope in self._visible(scopes)[:-1]
        )

    def resolve(self, func: ast.expr, scopes: Scopes) -> str | None:
        rooted = _root_and_path(func)
        if rooted is None:
            return None
        root, rest = rooted
        for scope in self._visible(scopes):
            paths = self.imports.get(scope, {}).get(root)
            other = self.binds_otherwise(scope, root)
            if paths is None and not other:
                continue
            if other or paths is None or len(paths) != 1:
                return None
            (path,) = paths
            return None if path is None else ".".join([path, *rest])
        return None


@functools.lru_cache(maxsize=1024)
def _binding_text(name: str) -> re.Pattern[str]:
    """Where `name` may be bound: anywhere but before ``.`` or ``(``, or after def / class."""
    name = re.escape(name)
    return re.compile(rf"(?<![\w.]){name}\b(?!\s*[.(])|\b(?:def|class)\s+{name}\b")


def _is_class(node: ast.AST) -> bool:
    return isinstance(node, ast.ClassDef)


@functools.lru_cache(maxsize=4096)
def _rests(path: str, wanted: frozenset[str]) -> tuple[tuple[str, ...], ...]:
    """The attribute chains that lead from `path` to a `wanted` path (``()``: it is one)."""
    return tuple(
        tuple(target[len(path) :].split(".")[1:])
        for target in wanted
        if target == path or target.startswith(path + ".")
    )


def _callee_pattern(
    imports: dict[ast.AST, dict[str, set[str | None]]], wanted: frozenset[str]
) -> re.Pattern[str] | None:
    """A regex of the calls that may reach a `wanted` path: a bound name and its attributes."""
    alternatives: set[str] = set()
    for table in imports.values():
        for name, paths in table.items():
            for path in paths:
                for rest in _rests(path, wanted) if path is not None else ():
                    alternatives.add(r"\s*\.\s*".join([re.escape(name), *rest]))
    if not alternatives:
        return None
    either = "|".join(sorted(alternatives, key=len, reverse=True))
    return re.compile(rf"(?<![\w.])((?:{either})\s*\()")


def find_calls(tree: ast.Module, source: str, wanted: frozenset[str]) -> list[FoundCall]:
    """Every call in `tree` whose callee resolves to one of the `wanted` paths, in source order."""
    lines = [0, *(match.end() for match in _NEWLINE.finditer(source))]
    import_positions = _positions(source, lines, _IMPORT)
    if not import_positions:
        return []
    resolver = _Resolver(tree, source, lines)
    wanted_imports = set(import_positions)
    for statement in tree.body:  # most imports are at the top: found without a descent
        if isinstance(statement, ast.Import | ast.ImportFrom):
            position = (statement.lineno, statement.col_offset)
            if position in wanted_imports:
                wanted_imports.discard(position)
                resolver.add_import(statement, ())
    if wanted_imports:
        imports = _Descent((ast.Import, ast.ImportFrom), sorted(wanted_imports))
        imports.visit(tree)
        for node, scopes in imports.found:
            resolver.add_import(node, scopes)  # type: ignore[arg-type]
    callee = _callee_pattern(resolver.imports, wanted)
    if callee is None:
        return []
    calls = _Descent((ast.Call,), _positions(source, lines, callee))
    calls.visit(tree)
    found = []
    for node, scopes in calls.found:
        assert isinstance(node, ast.Call)
        path = resolver.resolve(node.func, scopes)
        if path in wanted:
            found.append(FoundCall(path, node, functools.partial(resolver.shadows, scopes)))
    found.sort(key=lambda item: (item.node.lineno, item.node.col_offset))
    return found
