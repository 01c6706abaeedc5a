"""einsum's keywords: axis lengths and options told apart, without arrays.

`read_keywords` splits a call's keywords into the lengths of input axes and the
options (`OPTIONS`); the run time and the linter call it alike. Imports no framework.
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any

from tensorops._einsum.equations._notation import plain_input_names
from tensorops._errors import ArgumentError, TensorOpsError
from tensorops._grammar import Axis, is_spaced, items_of, parse_pattern

__all__ = ["OPTIONS", "input_axes", "read_keywords"]

#: The keywords einsum takes besides axis lengths.
OPTIONS = (
    "strategy",
    "memory_limit",
    "max_time",
    "minimize",
    "optimize",
    "out",
    "dtype",
    "order",
    "casting",
    "use_blas",
    "backend",
    "shapes",
    "progress",
    "semiring",
    "argmax",
)
_OPTION_NAMES = frozenset(OPTIONS)


@functools.lru_cache(maxsize=256)
def input_axes(equation: str, spaced: bool | None) -> frozenset[str]:
    """The names that are input axes of `equation` (a keyword with one of them is a length)."""
    plain = plain_input_names(equation, spaced)
    if plain is not None:
        return plain
    pattern = parse_pattern(equation)
    if spaced is None:
        spaced = is_spaced(pattern)
    names: set[str] = set()
    for term in pattern.inputs:
        for _, item in items_of(term):
            if isinstance(item, Axis):
                names.update((item.name,) if spaced else tuple(item.name))
    return frozenset(names)


def read_keywords(
    op: str, equation: str, spaced: bool | None, keywords: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split `keywords` into axis lengths and options (see the module docstring).

    Raises:
        ArgumentError: a keyword that is neither (also a TypeError, as Python raises).
    """
    if not keywords:
        return {}, {}
    if len(keywords) == 1:  # one option (semiring=, strategy=): no axis has its name
        for name in keywords:
            if name in _OPTION_NAMES and name not in equation:
                return {}, dict(keywords)
    axes: frozenset[str] = frozenset()
    for name in keywords:
        if name in equation:  # else no keyword can name an axis
            # a bad equation: its own error comes when it is planned
            with contextlib.suppress(TensorOpsError):
                axes = input_axes(equation, spaced)
            break
    lengths, options = {}, {}
    for name, value in keywords.items():
        if name in axes:
            lengths[name] = value
        elif name in _OPTION_NAMES:
            options[name] = value
        elif type(value) is int:  # meant as a length: the message of every pattern op
            raise ArgumentError(
                f"axis length {name}={value} is given but {name!r} is not an input axis",
                hint=f"the options of {op} are {', '.join(OPTIONS)}",
            )
        else:
            raise ArgumentError(
                f"{op}() got an unexpected keyword argument {name!r}: it is neither an "
                "input axis of the equation nor an option",
                hint=f"options: {', '.join(OPTIONS)}",
            )
    return lengths, options
