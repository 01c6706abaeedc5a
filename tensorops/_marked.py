"""Patterns with brackets: softmax, log_softmax, get_at, set_at, add_at, planned against shapes.

``[ ]`` marks the axes an op works along::

    softmax   "b h i [j]"                        normalize along j (jointly along several)
              "b h i [j] -> b i h [j]"           ... and rearrange the result
    get_at    "b [t] c, b p -> b p c"            out[b, p, c] = x[b, index[b, p], c]
              "b [h w] c, b p [2] -> b p c"      k indexed axes: k coordinates per position
    set_at    "b [t] c, b p, b p c -> b [t] c"   a copy of x with the values written there

The axes of an indexing pattern fall into four groups: *indexed* (marked in the
array), *batch* (in the array and the index: each index row reads its own row of
the array), *positions* (in the index only) and *channels* (in the array only,
carried along). The plan brings the arrays to the layout of an
:class:`~tensorops._types.IndexSpec` with :class:`~tensorops._plan.Recipe` s, one
per array and one for the result, each None when it would do nothing.

This module imports no framework; the axes are read by :mod:`tensorops._axes`.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from tensorops._axes import (
    DOTS_PREFIX,
    Dim,
    Slot,
    check_lengths,
    check_used,
    count_dots,
    product,
    resolve_dims,
    term_dims,
)
from tensorops._errors import PatternError, ShapeError, Span
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
from tensorops._plan import Recipe, check_pattern, check_term, make_recipe, plan_recipe

__all__ = ["INDEX_OPS", "IndexPlan", "plan_index", "plan_softmax", "read_pattern"]

#: The indexing ops, by how many terms they take on the left.
INDEX_OPS = {"get_at": 2, "set_at": 3, "add_at": 3}

LengthItems = tuple[tuple[str, Any], ...]

_EXAMPLES = {
    "softmax": "'b h i [j]'",
    "log_softmax": "'b h i [j]'",
    "get_at": "'b [t] c, b p -> b p c'",
    "set_at": "'b [t] c, b p, b p c -> b [t] c'",
    "add_at": "'b [t] c, b p, b p c -> b [t] c'",
}


def _blank(text: str) -> str:
    """`text` with its brackets blanked out: every position stays where it was."""
    return text.replace("[", " ").replace("]", " ")


def _marked(term: Term) -> list[Bracket]:
    return [element for element in term.elements if isinstance(element, Bracket)]


@functools.lru_cache(maxsize=1024)
def read_pattern(op: str, text: str) -> Pattern:
    """Parse `text` and check that `op` accepts it; cached on (op, text).

    What depends on the shapes (how many axes ``...`` stands for, which axes the
    terms share) is checked by :func:`plan_softmax` and :func:`plan_index`.

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
    if not _marked(first):
        what = "the axes to normalize" if op not in INDEX_OPS else "the indexed axes"
        raise PatternError(
            f"{what} must be in brackets",
            pattern=text,
            span=first.span if first.elements else None,
            hint=f"e.g. {_EXAMPLES[op]}",
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
    hint = "separate axes with spaces, not commas" if wanted == 1 else f"e.g. {_EXAMPLES[op]}"
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
        marked: dict[str, Span] = {}
        for element in _marked(term):
            for inner in element.elements:
                for item in getattr(inner, "items", (inner,)):
                    key = "..." if isinstance(item, Dots) else getattr(item, "name", None)
                    if key is not None:
                        marked[key] = item.span
        sides.append(marked)
    for marked, other, side in ((sides[0], sides[1], "right"), (sides[1], sides[0], "left")):
        for name, span in marked.items():
            if name not in other:
                raise PatternError(
                    f"axis '{name}' is in brackets on one side only: mark it on the {side} too",
                    pattern=pattern.text,
                    span=span,
                    hint=f"e.g. {_EXAMPLES[op]}",
                )


def _check_index_terms(op: str, pattern: Pattern) -> None:
    text = pattern.text
    if pattern.outputs is None:
        end = len(text)
        raise PatternError(
            "the output is missing: '->' and its axes",
            pattern=text,
            span=(end, end + 1),
            hint=f"e.g. {_EXAMPLES[op]}",
        )
    index, output = pattern.inputs[1], pattern.outputs[0]
    coordinates = _marked(index)
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
        for bracket in _marked(term):
            what = "the values" if term is not output else "the output of get_at"
            raise PatternError(
                f"brackets are not allowed in {what}",
                pattern=text,
                span=bracket.span,
                hint=f"only the array's indexed axes are marked: {_EXAMPLES[op]}",
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


# -- softmax ---------------------------------------------------------------------------------


def plan_softmax(
    op: str, text: str, shape: Sequence[int], lengths: LengthItems
) -> tuple[tuple[int, ...], Recipe | None]:
    """The dims `op` normalizes jointly, and the rearrangement after it (None: none).

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
        return axes, _useful(plan_recipe(op, _blank(text), shape, lengths))
    given = check_lengths(lengths)
    resolve_dims(text, dims, shape, given)
    check_used(text, given, (slot.name or "" for dim in dims for slot in dim.slots))
    return axes, None


# -- indexing --------------------------------------------------------------------------------


class IndexPlan(NamedTuple):
    """One get_at / set_at / add_at against shapes: the rearrangements around the core call.

    Attributes:
        lengths: the lengths of the indexed axes, one per coordinate.
        batch: the merged batch axis's length, or None when there is no batch axis.
        channels: the merged channel axis's length (with a batch axis), or None.
        array: the array to the layout of the core call, or None.
        where: the index to it, or None.
        values: the values to it (broadcast where they lack axes), or None.
        output: the core call's result to the output, or None.
        dims: the indexed dims of the array, for the out-of-range message.
        index_span: where the index's term is, for messages about the index.
    """

    lengths: tuple[int, ...]
    batch: int | None
    channels: int | None
    array: Recipe | None
    where: Recipe | None
    values: Recipe | None
    output: Recipe | None
    dims: tuple[Dim, ...]
    index_span: Span


class _Axes(NamedTuple):
    """The elementary axes of an indexing pattern, by group (see the module docstring)."""

    batch: list[Slot]
    positions: list[Slot]
    channels: list[Slot]


def plan_index(
    op: str, text: str, shapes: Sequence[Sequence[int]], lengths: LengthItems
) -> IndexPlan:
    """Plan `op` with the pattern `text` for arrays of `shapes` (array, index[, values]).

    Raises:
        PatternError: the pattern is malformed or its terms do not fit together.
        ShapeError: the arrays do not fit the pattern or the lengths.
    """
    pattern = read_pattern(op, text)
    assert pattern.outputs is not None
    terms = pattern.inputs
    dots = [
        count_dots(text, term, len(shape), i)
        for i, (term, shape) in enumerate(zip(terms, shapes, strict=True))
    ]
    total = max(dots)
    dims = [
        term_dims(t, n, total, f"<{i}>") for i, (t, n) in enumerate(zip(terms, dots, strict=True))
    ]
    out_dims = term_dims(pattern.outputs[0], total, total, "<out>")
    indexed = tuple(dim for dim in dims[0] if dim.marked)
    if not indexed:
        raise ShapeError(
            "the brackets of the array stand for no axis here ('...' of length 0)",
            pattern=text,
            span=_marked(terms[0])[0].span,
        )
    # what the names say is checked first: it explains a mismatch of lengths best
    axes = _group(text, dims[0], dims[1], dims[2] if len(dims) > 2 else ())
    _check_output(op, text, dims, axes, out_dims)
    given = check_lengths(lengths)
    known: dict[str, int] = dict(given)
    index_dims = _coordinates(text, terms[1], dims[1], len(indexed), known)
    for term_dims_, shape in zip(dims, shapes, strict=True):
        for dim in resolve_dims(text, term_dims_, shape, known):
            known.update((slot.name or "", length) for slot, length in dim)
    check_used(text, given, (slot.name or "" for d in (*dims, out_dims) for slot in _names(d)))
    _coordinates(text, terms[1], dims[1], len(indexed), known)
    return _layout(op, shapes, dims, index_dims, out_dims, axes, indexed, known, terms[1].span)


def _shown(slot: Slot) -> str:
    return "'...'" if (slot.name or "").startswith(DOTS_PREFIX) else f"'{slot.name}'"


def _names(dims: Sequence[Dim]) -> list[Slot]:
    return [slot for dim in dims for slot in dim.slots]


def _coordinates(
    text: str, term: Term, dims: Sequence[Dim], k: int, known: Mapping[str, int]
) -> tuple[Dim, ...]:
    """The index's dims, its coordinate axis checked, and read as a unit axis when k is 1.

    Called before the lengths are resolved (a literal length is checked) and after
    (a named one).
    """
    marked = [dim for dim in dims if dim.marked]
    if not marked:
        if k > 1:
            raise PatternError(
                f"{k} axes are indexed, so the index needs a coordinate axis of length {k} "
                "in brackets",
                pattern=text,
                span=term.span,
                hint=f"e.g. '{text[term.span[0] : term.span[1]]} [{k}]'",
            )
        return tuple(dims)
    (coordinate,) = marked
    slots = coordinate.slots
    found = [n for n in (known.get(s.name or "", s.length) for s in slots) if n is not None]
    if len(found) == len(slots) and product(found) != k:
        axes = "1 axis is" if k == 1 else f"{k} axes are"
        raise ShapeError(
            f"the coordinate axis has length {product(found)} but {axes} indexed",
            pattern=text,
            span=coordinate.span,
            hint=f"one coordinate per indexed axis: [{k}]"
            + (", or no brackets in the index" if k == 1 else ""),
        )
    if k > 1:
        return tuple(dims)
    # one coordinate: its axis of length 1 is dropped (read as a unit dim, which has no slots)
    return tuple(Dim((), dim.span, True) if dim.marked else dim for dim in dims)


def _group(text: str, array: Sequence[Dim], index: Sequence[Dim], values: Sequence[Dim]) -> _Axes:
    indexed = {slot.name for dim in array if dim.marked for slot in dim.slots}
    in_array = {slot.name for slot in _names(array)}
    in_index = {slot.name for dim in index if not dim.marked for slot in dim.slots}
    for slot in _names([dim for dim in index if not dim.marked]) + _names(values):
        if slot.name in indexed:
            raise PatternError(
                f"axis {_shown(slot)} is indexed in the array: it cannot be an axis of "
                + ("the index" if slot.name in in_index else "the values"),
                pattern=text,
                span=slot.span,
                hint="name the index's own axes differently, e.g. p for positions",
            )
    groups = _Axes(
        batch=[s for s in _names(array) if s.name in in_index and s.name not in indexed],
        positions=[s for d in index if not d.marked for s in d.slots if s.name not in in_array],
        channels=[s for s in _names(array) if s.name not in in_index and s.name not in indexed],
    )
    allowed = {slot.name for group in groups for slot in group}
    for slot in _names(values):
        if slot.name not in allowed:
            raise PatternError(
                f"axis {_shown(slot)} of the values is in neither the array nor the index",
                pattern=text,
                span=slot.span,
            )
    return groups


def _check_output(
    op: str, text: str, dims: Sequence[Sequence[Dim]], axes: _Axes, out_dims: Sequence[Dim]
) -> None:
    array = dims[0]
    expected = _names(array) if op != "get_at" else [s for group in axes for s in group]
    wanted = {slot.name for slot in expected}
    indexed = {slot.name for dim in array if dim.marked for slot in dim.slots}
    coordinate = {slot.name for dim in dims[1] if dim.marked for slot in dim.slots}
    for slot in _names(out_dims):
        if slot.name in wanted:
            continue
        where, hint = "in no input" if op == "get_at" else "not in the array", None
        if slot.name in indexed:
            where = "indexed: get_at's output has the index's axes in its place"
            hint = f"e.g. {_EXAMPLES[op]}"
        elif slot.name in coordinate:
            where = "the index's coordinate axis"
            hint = "brackets in the index mark the coordinate axis: positions are unmarked"
        raise PatternError(
            f"axis {_shown(slot)} on the right is {where}", pattern=text, span=slot.span, hint=hint
        )
    out = {slot.name for slot in _names(out_dims)}
    for slot in expected:
        if slot.name not in out:
            raise PatternError(
                f"axis {_shown(slot)} is missing on the right",
                pattern=text,
                span=slot.span,
                hint=f"e.g. {_EXAMPLES[op]}",
            )


def _merged(slots: Sequence[Slot]) -> Dim:
    return Dim(tuple(slots), (0, 0), False)


def _layout(
    op: str,
    shapes: Sequence[Sequence[int]],
    dims: Sequence[Sequence[Dim]],
    index_dims: Sequence[Dim],
    out_dims: Sequence[Dim],
    axes: _Axes,
    indexed: tuple[Dim, ...],
    known: dict[str, int],
    index_span: Span,
) -> IndexPlan:
    """The recipes that bring the arrays to the core call's layout, and its result back."""
    merged_indexed = _merged(_names(indexed))
    coordinate = [dim for dim in index_dims if dim.marked and dim.slots]
    if axes.batch:
        batch = [_merged(axes.batch)]
        channels = [_merged(axes.channels)] if axes.channels else []
        array = [*batch, merged_indexed, *channels]
        index = [*batch, _merged(axes.positions), *coordinate]
        result = [*batch, _merged(axes.positions), *channels]
    else:  # no batch: the positions and the channels keep their own dims
        rest = [dim for dim in dims[0] if not dim.marked]
        array = [merged_indexed, *rest]
        index = [dim for dim in index_dims if not dim.marked] + coordinate
        result = [dim for dim in index_dims if not dim.marked] + rest
    values = None
    if len(dims) > 2:
        values = _arrange(shapes[2], dims[2], result, known)
        result = array  # a scatter returns an array of the array's layout
    return IndexPlan(
        lengths=tuple(product(known[s.name or ""] for s in dim.slots) for dim in indexed),
        batch=product(known[s.name or ""] for s in axes.batch) if axes.batch else None,
        channels=(
            product(known[s.name or ""] for s in axes.channels)
            if axes.batch and axes.channels
            else None
        ),
        array=_arrange(shapes[0], dims[0], array, known),
        where=_arrange(shapes[1], index_dims, index, known),
        values=values,
        output=_arrange(_shape(result, known), result, out_dims, known),
        dims=indexed,
        index_span=index_span,
    )


def _shape(dims: Sequence[Dim], known: Mapping[str, int]) -> tuple[int, ...]:
    return tuple(product(known[slot.name or ""] for slot in dim.slots) for dim in dims)


def _arrange(
    shape: Sequence[int], dims: Sequence[Dim], to: Sequence[Dim], known: dict[str, int]
) -> Recipe | None:
    return _useful(make_recipe(tuple(shape), dims, to, known))


def _useful(recipe: Recipe) -> Recipe | None:
    """`recipe`, or None when it would do nothing."""
    steps = (recipe.init_shape, recipe.perm, recipe.insert_shape, recipe.final_shape)
    if recipe.reduce_axes or any(step is not None for step in steps):
        return recipe
    return None
