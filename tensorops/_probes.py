"""Shapes that fit a pattern's input terms as well as any shape can: stand-ins for arrays.

A layer checks its pattern when it is built, before any array exists, and the linter
checks a call without running it: both plan the op on probes, per input term a shape
in which every dimension fits. An integer is its length, a name has the
length the call gives it (when it gives a constant) or 1, a composition is their
product, a concatenation ``(a + b)`` the sum of its parts, ``...`` stands for no axes
(one inside brackets, which must hold an axis).
A mistake that the planner finds on such probes is in the pattern and the lengths:
the call fails whatever arrays it gets. Imports no framework. A term of a compact einsum equation
(``"ij"``) is one dimension per letter.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tensorops._errors import TensorOpsError
from tensorops._grammar import Anon, Axis, Bracket, Dots, Group, Term, parse_concat

__all__ = ["dimension_size", "probe_shapes"]


def _size(items: tuple[Any, ...], lengths: Mapping[str, Any], unknown: int) -> int:
    size, missing = 1, False
    for item in items:
        if isinstance(item, Anon):
            size *= item.length
        elif isinstance(item, Axis) and type(lengths.get(item.name)) is int:
            size *= lengths[item.name]
        else:  # an axis of unknown length, or '...' inside a group
            missing = True
    return size * unknown if missing else size


def dimension_size(element: Any, lengths: Mapping[str, Any], unknown: int = 1) -> int:
    """The length a probe gives one element of a term (a dimension, not '...').

    Known lengths (integers in the pattern, `lengths`) multiply; an axis of unknown
    length counts `unknown`; a concatenation ``(a + b)`` is its parts' lengths added.

    Examples:
        >>> from tensorops._grammar import parse_pattern
        >>> group = parse_pattern("(h 2) c").inputs[0].elements[0]
        >>> dimension_size(group, {}), dimension_size(group, {"h": 3}, unknown=5)
        (2, 6)
    """
    if isinstance(element, Group) and element.parts:
        return sum(_size(part, lengths, unknown) for part in element.parts)
    return _size(element.items if isinstance(element, Group) else (element,), lengths, unknown)


def _term_shape(
    term: Term, lengths: Mapping[str, Any], compact: bool, unknown: int
) -> tuple[int, ...]:
    shape: list[int] = []
    for element in term.elements:
        bracket = isinstance(element, Bracket)
        for inner in element.elements if isinstance(element, Bracket) else (element,):
            if isinstance(inner, Dots):
                if bracket:  # '...' to normalize over: one axis, so that there is one
                    shape.append(unknown)
                continue
            if compact and isinstance(inner, Axis):
                shape.extend(_letter(letter, lengths, unknown) for letter in inner.name)
            else:
                shape.append(dimension_size(inner, lengths, unknown))
    return tuple(shape)


def probe_shapes(
    text: str, lengths: Mapping[str, Any], compact: bool = False, unknown: int = 1
) -> tuple[tuple[int, ...], ...] | None:
    """One probe shape per input term of `text`; None when the text does not parse.

    Args:
        text: the pattern.
        lengths: the lengths the call gives (a length that is not a positive int counts as
            unknown).
        compact: whether each letter of a name is one dimension (compact einsum).
        unknown: the length of an axis whose length is not known.

    Examples:
        >>> probe_shapes("b (h w) c -> b h w c", {"h": 4})
        ((1, 4, 1),)
        >>> probe_shapes("ij,jk->ik", {"j": 3}, compact=True)
        ((1, 3), (3, 1))
    """
    try:
        pattern = parse_concat(text)
    except TensorOpsError:
        return None
    given = {name: n for name, n in lengths.items() if type(n) is int and n > 0}
    return tuple(_term_shape(term, given, compact, unknown) for term in pattern.inputs)


def _letter(letter: str, lengths: Mapping[str, Any], unknown: int) -> int:
    """The length of one axis of a compact einsum term: the call's, or `unknown`."""
    given = lengths.get(letter)
    return given if type(given) is int else unknown
