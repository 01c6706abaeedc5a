"""Shapes that fit a pattern's input terms as well as any shape can: stand-ins for arrays.

A layer checks its pattern when it is built, before any array exists, and the linter
checks a call without running it: both plan the op on probes, per input term a shape
in which every dimension fits. An integer is its length, a name has the
length the call gives it (when it gives a constant) or 1, a composition is their
product, a concatenation ``(a + b)`` the sum of its parts, ``...`` stands for no axes.
A mistake that the planner finds on such probes is in the pattern and the lengths:
the call fails whatever arrays it gets. Imports no framework. A term of a compact einsum equation
(``"ij"``) is one dimension per letter.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tensorops._errors import TensorOpsError
from tensorops._grammar import Anon, Axis, Bracket, Dots, Group, Term, parse_concat

__all__ = ["probe_shapes"]


def _size(items: tuple[Any, ...], lengths: Mapping[str, int]) -> int:
    size = 1
    for item in items:
        if isinstance(item, Anon):
            size *= item.length
        elif isinstance(item, Axis):
            size *= lengths.get(item.name, 1)
    return size


def _term_shape(term: Term, lengths: Mapping[str, int], compact: bool) -> tuple[int, ...]:
    shape: list[int] = []
    for element in term.elements:
        for inner in element.elements if isinstance(element, Bracket) else (element,):
            if isinstance(inner, Dots):
                continue
            if compact and isinstance(inner, Axis):
                shape.extend(1 for _ in inner.name)
            elif isinstance(inner, Group) and inner.parts:
                shape.append(sum(_size(part, lengths) for part in inner.parts))
            else:
                items = inner.items if isinstance(inner, Group) else (inner,)
                shape.append(_size(items, lengths))
    return tuple(shape)


def probe_shapes(
    text: str, lengths: Mapping[str, int], compact: bool = False
) -> tuple[tuple[int, ...], ...] | None:
    """One probe shape per input term of `text`; None when the text does not parse.

    Args:
        text: the pattern.
        lengths: the positive lengths the call gives (others are 1).
        compact: whether each letter of a name is one dimension (compact einsum).

    Examples:
        >>> probe_shapes("b (h w) c -> b h w c", {"h": 4})
        ((1, 4, 1),)
        >>> probe_shapes("ij,jk->ik", {}, compact=True)
        ((1, 1), (1, 1))
    """
    try:
        pattern = parse_concat(text)
    except TensorOpsError:
        return None
    return tuple(_term_shape(term, lengths, compact) for term in pattern.inputs)
