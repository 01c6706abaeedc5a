"""The values of expressions that are known without running anything.

A value is known when it is a literal (a string, an integer, ``None``, a tuple or
list of known values), an f-string whose parts are all known, ``+`` of two known
strings, ``-`` of a known integer, or a name assigned exactly once at module level to
such a value and bound nowhere else (not in the function that reads it, not by a
``global`` statement). Everything else is `UNKNOWN`: the linter never guesses.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from tensorops._lint.calls import UNKNOWN, bound_names

__all__ = ["Constants"]

_MISSING = object()


#: An f-string's conversions: none, !s, !r, !a.
_CONVERSIONS: dict[int, Callable[[object], str]] = {-1: str, 115: str, 114: repr, 97: ascii}


def _nowhere(name: str) -> bool:
    return False


class Constants:
    """Evaluates expressions of one module; module-level constants are read once."""

    def __init__(self, tree: ast.Module, source: str) -> None:
        self.tree = tree
        self.globals = "global" in source
        self.walrus = ":=" in source
        self._assigned: dict[str, ast.expr | None] | None = None

    def _module_values(self) -> dict[str, ast.expr | None]:
        """Each name assigned at module level -> its value's node (None: bound otherwise too)."""
        if self._assigned is not None:
            return self._assigned
        assigned: dict[str, ast.expr | None] = {}
        rebound: set[str] = set()
        for statement in self.tree.body:
            if isinstance(statement, ast.Assign | ast.AnnAssign) and statement.value is not None:
                targets = (
                    statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                )
                for target in targets:
                    if isinstance(target, ast.Name):
                        name = target.id
                        assigned[name] = None if name in assigned else statement.value
                    else:
                        rebound.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
            elif isinstance(statement, ast.Import | ast.ImportFrom):
                rebound.update((a.asname or a.name).partition(".")[0] for a in statement.names)
            elif isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                rebound.add(statement.name)
            elif self.walrus or not isinstance(
                statement, ast.Expr | ast.Pass
            ):  # a loop, an if, ...
                rebound.update(bound_names(ast.Module(body=[statement], type_ignores=[])))
        if self.globals:  # a function may assign a module name: `global NAME`
            rebound.update(
                name
                for node in ast.walk(self.tree)
                if isinstance(node, ast.Global)
                for name in node.names
            )
        for name in rebound:
            assigned[name] = None
        self._assigned = assigned
        return assigned

    def value(self, node: ast.expr | None, shadowed: Callable[[str], bool] = _nowhere) -> Any:
        """The value of `node`, or `UNKNOWN`.

        `shadowed` says whether a name is bound where `node` is read (then it is not
        the module's constant).
        """
        if node is None:
            return UNKNOWN
        kind = type(node)
        if kind is ast.Constant:
            value = node.value  # type: ignore[attr-defined]
            return value if isinstance(value, str | int | float | type(None)) else UNKNOWN
        if kind is ast.Name:
            return self._name(node.id, shadowed)  # type: ignore[attr-defined]
        if kind is ast.JoinedStr:
            return self._joined(node, shadowed)  # type: ignore[arg-type]
        if kind is ast.Tuple or kind is ast.List:
            items = [self.value(item, shadowed) for item in node.elts]  # type: ignore[attr-defined]
            return UNKNOWN if any(item is UNKNOWN for item in items) else tuple(items)
        if kind is ast.BinOp and isinstance(node.op, ast.Add):  # type: ignore[attr-defined]
            left = self.value(node.left, shadowed)  # type: ignore[attr-defined]
            right = self.value(node.right, shadowed)  # type: ignore[attr-defined]
            if isinstance(left, str) and isinstance(right, str):
                return left + right
            return UNKNOWN
        if kind is ast.UnaryOp and isinstance(node.op, ast.USub):  # type: ignore[attr-defined]
            operand = self.value(node.operand, shadowed)  # type: ignore[attr-defined]
            return -operand if type(operand) is int else UNKNOWN
        return UNKNOWN

    def _name(self, name: str, shadowed: Callable[[str], bool]) -> Any:
        node = self._module_values().get(name, _MISSING)
        if node is _MISSING or node is None or shadowed(name):
            return UNKNOWN
        assert isinstance(node, ast.expr)
        # a module constant defined by other module constants: read without locals
        return self.value(node)

    def _joined(self, node: ast.JoinedStr, shadowed: Callable[[str], bool]) -> Any:
        parts: list[str] = []
        for part in node.values:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                parts.append(part.value)
                continue
            if not isinstance(part, ast.FormattedValue) or part.format_spec is not None:
                return UNKNOWN
            value = self.value(part.value, shadowed)
            if not isinstance(value, str | int) or isinstance(value, bool):
                return UNKNOWN
            conversion = _CONVERSIONS[part.conversion]
            parts.append(conversion(value))
        return "".join(parts)
