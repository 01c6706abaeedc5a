"""The patterns of pack, unpack and parse_shape, read and checked from their text alone.

``"b * c"`` (pack, unpack: axis names and one ``*``) and ``"b c _ _"`` (parse_shape:
names, ``_``, ``...``, integers and ``()``) are read with the shared grammar. What
depends on no array is checked here, for `tensorops._pack` and for the linter; the
arrays' shapes are matched in `tensorops._pack`. Imports no framework.
"""

from __future__ import annotations

import functools
from typing import Any

from tensorops._errors import PatternError, not_a_pattern
from tensorops._grammar import (
    Anon,
    Axis,
    Dots,
    Group,
    Skip,
    Star,
    Term,
    check_names,
    is_axis_name,
    parse_pattern,
)

__all__ = ["axis_positions", "pack_positions", "pack_term", "shape_term", "single_term"]


def single_term(op: str, pattern: Any) -> Term:
    """The one term of a pack, unpack or parse_shape pattern (no ``->``, no ``,``).

    Raises:
        TensorOpsError: the pattern is not a str, is malformed, or has several terms.
    """
    if not isinstance(pattern, str):
        raise not_a_pattern(pattern, f"{op}(x, 'b * c')")
    parsed = parse_pattern(pattern)
    check_names(parsed)
    if parsed.outputs is not None or len(parsed.inputs) != 1:
        span = parsed.arrow if parsed.arrow is not None else parsed.inputs[1].span
        raise PatternError(
            f"{op} takes a single term without '->' or ','",
            pattern=pattern,
            span=span,
            hint="separate axes with spaces, not commas",
        )
    return parsed.inputs[0]


@functools.lru_cache(maxsize=256)
def pack_term(op: str, pattern: str) -> tuple[int, int]:
    """(position of ``*``, number of other axes) of a pack / unpack pattern; cached.

    Examples:
        >>> pack_term("pack", "b * c")
        (1, 2)

    Raises:
        PatternError: not one ``*``, an axis twice, or an element other than names.
    """
    plain = plain_pack_term(pattern)
    return plain if plain is not None else grammar_pack_term(op, pattern)


def plain_pack_term(pattern: str) -> tuple[int, int] | None:
    """`pack_term` of names and one ``*``, each alone between spaces (most patterns); else None.

    What the grammar finds for them (`grammar_pack_term`), read from the words alone.
    """
    words = pattern.split() if type(pattern) is str else []
    if words.count("*") == 1 and len(set(words)) == len(words):
        position = words.index("*")
        names = words[:position] + words[position + 1 :]
        if all(map(str.isidentifier, names)) and (
            "_" not in pattern or all(map(is_axis_name, names))
        ):
            return position, len(names)
    return None


def grammar_pack_term(op: str, pattern: str) -> tuple[int, int]:
    """`pack_term` through the grammar: every pattern, every error."""
    term = single_term(op, pattern)
    stars = [i for i, e in enumerate(term.elements) if isinstance(e, Star)]
    if len(stars) != 1:
        span = term.elements[stars[1]].span if stars else term.span
        raise PatternError(
            f"{op} needs exactly one '*' in the pattern, got {len(stars)}",
            pattern=pattern,
            span=span,
            hint="e.g. 'b * c': '*' marks the axes that are packed",
        )
    seen: set[str] = set()
    for element in term.elements:
        if isinstance(element, Axis):
            if element.name in seen:
                raise PatternError(
                    f"axis '{element.name}' appears twice", pattern=pattern, span=element.span
                )
            seen.add(element.name)
        elif not isinstance(element, Star):
            raise PatternError(
                f"{op} patterns hold axis names and one '*' only",
                pattern=pattern,
                span=element.span,
            )
    return stars[0], len(term.elements) - 1


def pack_positions(pattern: str) -> tuple[int, int]:
    """Where ``*`` stands in a pack pattern and how many axes follow it.

    Examples:
        >>> pack_positions("b * c d")
        (1, 2)

    Raises:
        TensorOpsError: the pattern is not one of pack's.
    """
    position, n_other = pack_term("pack", pattern)
    return position, n_other - position


def shape_term(pattern: str) -> Term:
    """The term of a parse_shape pattern, its elements checked.

    Raises:
        PatternError: an element parse_shape does not take, or ``...`` twice.
    """
    term = single_term("parse_shape", pattern)
    for element in term.elements:
        unit = isinstance(element, Group) and not element.items
        if not (isinstance(element, (Axis, Skip, Dots, Anon)) or unit):
            raise PatternError(
                "parse_shape patterns hold axis names, '_', '...', integers and '()' only",
                pattern=pattern,
                span=element.span,
                hint="a composed axis (a b) has no single length to name",
            )
    dots = [element.span for element in term.elements if isinstance(element, Dots)]
    if len(dots) > 1:
        raise PatternError("'...' appears twice", pattern=pattern, span=dots[1])
    return term


def axis_positions(pattern: str, ndim: int) -> tuple[tuple[str, int], ...]:
    """The dimension each name of a parse_shape pattern reads, for `ndim` dimensions.

    Examples:
        >>> axis_positions("b ... _ w", 5)
        (('b', 0), ('w', 4))

    Raises:
        TensorOpsError: the pattern is not one of parse_shape's.
    """
    elements = single_term("parse_shape", pattern).elements
    positions: list[tuple[str, int]] = []
    seen: set[str] = set()
    dim = 0
    for element in elements:
        if isinstance(element, Dots):
            dim += ndim - (len(elements) - 1)
            continue
        if isinstance(element, Axis) and element.name not in seen:
            seen.add(element.name)
            positions.append((element.name, dim))
        dim += 1
    return tuple(positions)
