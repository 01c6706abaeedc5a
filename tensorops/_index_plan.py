"""Indexing patterns (get_at, set_at, add_at) planned against shapes.

The axes of an indexing pattern fall into four groups: *indexed* (marked in the
array), *batch* (in the array and the index: each index row reads its own row of
the array), *positions* (in the index only) and *channels* (in the array only,
carried along). The plan brings the arrays to the layout of an
`IndexSpec` with `Recipe`s, one
per array and one for the result, each None when it would do nothing.

The pattern is read and checked by `tensorops._marked.read_pattern`; this
module imports no framework.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

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
from tensorops._grammar import Term
from tensorops._marked import EXAMPLES, LengthItems, marked, read_pattern, useful
from tensorops._plan import Recipe, make_recipe

__all__ = ["IndexPlan", "plan_index"]


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
            span=marked(terms[0])[0].span,
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
            hint = f"e.g. {EXAMPLES[op]}"
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
                hint=f"e.g. {EXAMPLES[op]}",
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
    return useful(make_recipe(tuple(shape), dims, to, known))
