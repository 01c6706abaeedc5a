"""Patterns with brackets read and checked: softmax, the ops along axes, get_at, set_at, add_at.

``[ ]`` marks the axes an op works along::

    softmax   "b h i [j]"                        normalize along j (jointly along several)
              "b h i [j] -> b i h [j]"           ... and rearrange the result
    roll      "b [t] c"                          flip, roll, sort, argsort, cumsum along t
    get_at    "b [t] c, b p -> b p c"            out[b, p, c] = x[b, index[b, p], c]
              "b [h w] c, b p [2] -> b p c"      k indexed axes: k coordinates per position
    set_at    "b [t] c, b p, b p c -> b [t] c"   a copy of x with the values written there

`read_pattern` parses a pattern with the shared grammar and checks what
does not depend on shapes, for every op; `plan_marked` resolves the pattern
of an op on one array (softmax, flip, roll, ...) against a shape. Indexing
patterns are resolved by `tensorops._index_plan`.

This module imports no framework; the axes are read by `tensorops._axes`.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from tensorops._axes import check_lengths, check_used, count_dots, resolve_dims, term_dims
from tensorops._errors import PatternError, Span
from tensorops._grammar import (
    Anon,
    Axis,
    Bracket,
    Dots,
    Pattern,
    Term,
    check_names,
    items_of,
    parse_pattern,
)
from tensorops._plan import Recipe, check_pattern, check_term, plan_recipe

__all__ = [
    "EXAMPLES",
    "INDEX_OPS",
    "LengthItems",
    "marked",
    "plan_marked",
    "read_pattern",
    "useful",
]

#: The indexing ops, by how many terms they take on the left.
INDEX_OPS = {"get_at": 2, "set_at": 3, "add_at": 3}

LengthItems = tuple[tuple[str, Any], ...]

#: A correct pattern of each op, for hints.
EXAMPLES = {
    "softmax": "'b h i [j]'",
    "log_softmax": "'b h i [j]'",
    "get_at": "'b [t] c, b p -> b p c'",
    "set_at": "'b [t] c, b p, b p c -> b [t] c'",
    "add_at": "'b [t] c, b p, b p c -> b [t] c'",
    "flip": "'b [t] c'",
    "roll": "'b [t] c'",
    "sort": "'b [t] c'",
    "argsort": "'b [t] c'",
    "cumsum": "'b [t] c'",
}

#: What the brackets mark, by op, for the message when there are none.
_MARKS = {
    "softmax": "the axes to normalize",
    "log_softmax": "the axes to normalize",
    "flip": "the axes to flip",
    "roll": "the axes to roll",
    "sort": "the axes to sort along",
    "argsort": "the axes to sort along",
    "cumsum": "the axes to sum along",
}


def _blank(text: str) -> str:
    """`text` with its brackets blanked out: every position stays where it was."""
    return text.replace("[", " ").replace("]", " ")


def marked(term: Term) -> list[Bracket]:
    """The bracketed elements of `term`, in order."""
    return [element for element in term.elements if isinstance(element, Bracket)]


@functools.lru_cache(maxsize=1024)
def read_pattern(op: str, text: str) -> Pattern:
    """Parse `text` and check that `op` accepts it; cached on (op, text).

    What depends on the shapes (how many axes ``...`` stands for, which axes the
    terms share) is checked by `plan_marked` and
    `tensorops._index_plan.plan_index`.

    Raises:
        PatternError: at the first element `op` does not accept.
    """
    pattern = parse_pattern(text)
    check_names(pattern)
    wanted = INDEX_OPS.get(op, 1)
    if len(pattern.inputs) != wanted:
        raise _term_count(op, pattern, wanted)
    if pattern.outputs is not None and len(pattern.outputs) != 1:
        span = (pattern.outputs[0].span[1], pattern.outputs[1].span[0])
        raise PatternError(
            f"{op} takes one term on the right, got {len(pattern.outputs)}",
            pattern=text,
            span=span,
            hint="separate axes with spaces, not commas",
        )
    for term in pattern.inputs:
        check_term(pattern, term, "left", op, brackets=True)
    for term in pattern.outputs or ():
        check_term(pattern, term, "right", op, brackets=True)
    first = pattern.inputs[0]
    if not marked(first):
        what = _MARKS.get(op, "the indexed axes")
        raise PatternError(
            f"{what} must be in brackets",
            pattern=text,
            span=first.span if first.elements else None,
            hint=f"e.g. {EXAMPLES[op]}",
        )
    if op in INDEX_OPS:
        _check_index_terms(op, pattern)
    elif pattern.outputs is not None:
        check_pattern(op, _blank(text))  # the output is a rearrangement of the input
        _check_same_marks(op, pattern, first, pattern.outputs[0])
    return pattern


def _term_count(op: str, pattern: Pattern, wanted: int) -> PatternError:
    terms = pattern.inputs
    what = {1: "one term", 2: "two terms (the array, the index)"}.get(
        wanted, "three terms (the array, the index, the values)"
    )
    hint = "separate axes with spaces, not commas" if wanted == 1 else f"e.g. {EXAMPLES[op]}"
    if op == "get_at" and len(terms) == 3:
        hint = "set_at and add_at take values as a third term; get_at takes two"
    span = (terms[1].span[0], terms[-1].span[1]) if len(terms) > 1 else terms[0].span
    return PatternError(
        f"{op} takes {what} on the left, got {len(terms)}",
        pattern=pattern.text,
        span=span,
        hint=hint,
    )


def _check_same_marks(op: str, pattern: Pattern, left: Term, right: Term) -> None:
    """Each axis marked on one side is marked on the other."""
    sides = []
    for term in (left, right):
        names: dict[str, Span] = {}
        for element in marked(term):
            for inner in element.elements:
                for item in getattr(inner, "items", (inner,)):
                    key = "..." if isinstance(item, Dots) else getattr(item, "name", None)
                    if key is not None:
                        names[key] = item.span
        sides.append(names)
    for names, other, side in ((sides[0], sides[1], "right"), (sides[1], sides[0], "left")):
        for name, span in names.items():
            if name not in other:
                raise PatternError(
                    f"axis '{name}' is in brackets on one side only: mark it on the {side} too",
                    pattern=pattern.text,
                    span=span,
                    hint=f"e.g. {EXAMPLES[op]}",
                )


def _check_index_terms(op: str, pattern: Pattern) -> None:
    text = pattern.text
    if pattern.outputs is None:
        end = len(text)
        raise PatternError(
            "the output is missing: '->' and its axes",
            pattern=text,
            span=(end, end + 1),
            hint=f"e.g. {EXAMPLES[op]}",
        )
    index, output = pattern.inputs[1], pattern.outputs[0]
    coordinates = marked(index)
    if len(coordinates) > 1:
        raise PatternError(
            "the index has one coordinate axis at most, in brackets",
            pattern=text,
            span=coordinates[1].span,
            hint="e.g. 'b [h w] c, b p [2] -> b p c': [2] holds (row, column)",
        )
    if coordinates and not (
        len(coordinates[0].elements) == 1 and isinstance(coordinates[0].elements[0], (Axis, Anon))
    ):
        raise PatternError(
            "the coordinate axis of the index is one axis: a name or its length",
            pattern=text,
            span=coordinates[0].span,
            hint="e.g. [2] when two axes are indexed",
        )
    for term in pattern.inputs[2:] + ((output,) if op == "get_at" else ()):
        for bracket in marked(term):
            what = "the values" if term is not output else "the output of get_at"
            raise PatternError(
                f"brackets are not allowed in {what}",
                pattern=text,
                span=bracket.span,
                hint=f"only the array's indexed axes are marked: {EXAMPLES[op]}",
            )
    if op != "get_at":
        _check_same_marks(op, pattern, pattern.inputs[0], output)
    for term in (*pattern.inputs, output):
        for element, item in items_of(term):
            if isinstance(item, Anon) and item.length != 1 and not isinstance(element, Bracket):
                raise PatternError(
                    f"an anonymous axis of length {item.length} is only allowed in brackets",
                    pattern=text,
                    span=item.span,
                    hint="name the axis and pass its length as a keyword",
                )
    dots = [_dots(term) for term in (*pattern.inputs, output)]
    if dots[-1] is not None and not any(span is not None for span in dots[:-1]):
        raise PatternError(
            "'...' on the right stands for no input's axes", pattern=text, span=dots[-1]
        )


def _dots(term: Term) -> Span | None:
    return next((item.span for _, item in items_of(term) if isinstance(item, Dots)), None)


def plan_marked(
    op: str, text: str, shape: Sequence[int], lengths: LengthItems
) -> tuple[tuple[int, ...], Recipe | None]:
    """The bracketed dims of `op`'s one array, and the rearrangement after it (None: none).

    Raises:
        PatternError: the pattern is malformed.
        ShapeError: it does not fit the shape or the lengths.
    """
    pattern = read_pattern(op, text)
    term = pattern.inputs[0]
    dims = term_dims(term, count_dots(text, term, len(shape)))
    axes = tuple(i for i, dim in enumerate(dims) if dim.marked)
    if pattern.outputs is not None:
        # the same axes on both sides: the output is the input rearranged
        return axes, useful(plan_recipe(op, _blank(text), shape, lengths))
    given = check_lengths(lengths)
    resolve_dims(text, dims, shape, given)
    check_used(text, given, (slot.name or "" for dim in dims for slot in dim.slots))
    return axes, None


def useful(recipe: Recipe) -> Recipe | None:
    """`recipe`, or None when it would do nothing."""
    steps = (recipe.init_shape, recipe.perm, recipe.insert_shape, recipe.final_shape)
    if recipe.reduce_axes or any(step is not None for step in steps):
        return recipe
    return None
