"""Helpers for asserting error messages: where the caret line of a TensorOpsError points."""

from __future__ import annotations

#: The caret line is indented past '  pattern: "' (12 characters).
INDENT = 12


def caret(pattern: str, fragment: str, occurrence: int = 0) -> str:
    """The caret line under the `occurrence`-th `fragment` of `pattern` ("": past its end)."""
    if not fragment:
        return " " * (INDENT + len(pattern)) + "^"
    start = -1
    for _ in range(occurrence + 1):
        start = pattern.index(fragment, start + 1)
    return " " * (INDENT + start) + "^" * len(fragment)
