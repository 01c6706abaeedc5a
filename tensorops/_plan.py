"""rearrange, reduce and repeat: a pattern against a shape -> a `Recipe` of framework calls.

A pattern is read once per op (`check_pattern`, cached): parsed, checked, and each
side's elements named axis by axis. A plan for a shape (`plan_recipe`) expands ``...``
for the rank, finds every axis's length and makes the `Recipe` (`tensorops._recipe`).

This module imports no framework: shapes are tuples of ints (or of symbolic ints
under a tracing compiler). The axes are resolved by `tensorops._axes`.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, NamedTuple, NoReturn

from tensorops._axes import (
    Dim,
    Slot,
    check_lengths,
    check_used,
    count_dots,
    dots_name,
    resolve_dims,
    term_dims,
)
from tensorops._errors import PatternError, ShapeError, Span
from tensorops._grammar import (
    Anon,
    Axis,
    Bracket,
    Dots,
    Group,
    Pattern,
    Term,
    check_names,
    parse_pattern,
)
from tensorops._recipe import Recipe, axis_names, make_recipe, recipe_of_axes

__all__ = ["PATTERN_OPS", "Recipe", "check_pattern", "check_term", "make_recipe", "plan_recipe"]

#: A named tuple made without its Python-level ``__new__`` (half the cost): the dims of
#: every pattern's first call (benchmarks/cold.py).
_new = tuple.__new__

#: The ops a recipe serves.
PATTERN_OPS = ("rearrange", "reduce", "repeat")

LengthItems = tuple[tuple[str, Any], ...]


def _not_allowed(pattern: Pattern, span: Span, op: str) -> PatternError:
    element = pattern.text[span[0] : span[1]]
    hint = None
    if element.startswith("["):
        hint = "brackets mark the axes softmax and get_at work along; compose axes with ( )"
    return PatternError(
        f"'{element}' is not allowed in {op}", pattern=pattern.text, span=span, hint=hint
    )


def check_term(pattern: Pattern, term: Term, side: str, op: str, brackets: bool = False) -> None:
    """Check one term: each name once, ``...`` once and not grouped on the left, no ``_`` or ``*``.

    Args:
        pattern: the parsed pattern, for the error.
        term: the term.
        side: ``"left"`` or ``"right"``, for the message.
        op: the op, for the message.
        brackets: whether the op gives ``[ ]`` a meaning (softmax, get_at, ...).

    Raises:
        PatternError: at the first element `op` does not accept there.
    """
    _read_term(pattern, term, side, op, brackets)


class _TermRead(NamedTuple):
    """One term of a pattern as `_read_term` finds it, checked."""

    term: Term
    names: dict[str, Span]  # each axis name with its span, left to right
    dots: Span | None  # where '...' is
    anons: list[Anon]  # the anonymous axes of a length other than 1
    # With a prefix, and without brackets or '...' in parentheses: each element's axes
    # (None for '...'), the anonymous ones named as `_element_dim` names them; and
    # those names with their lengths.
    axes: tuple[tuple[str, ...] | None, ...] | None
    written: dict[str, int]


def _read_term(
    pattern: Pattern, term: Term, side: str, op: str, brackets: bool, prefix: str | None = None
) -> _TermRead:
    """`check_term`, reading the term once for the checks of the whole pattern too.

    With `prefix`, each element's axes are named on the way (see `_TermRead`).
    """
    names: dict[str, Span] = {}
    dots: Span | None = None
    anons: list[Anon] = []
    axes: list[tuple[str, ...] | None] | None = [] if prefix is not None else None
    written: dict[str, int] = {}
    grouped = False  # whether '...' is inside parentheses or brackets
    for element in term.elements:
        if element.__class__ is Axis:  # the common element, read at once
            name, span = element
            if name in names:
                raise _twice(pattern, element, side)
            names[name] = span
            if axes is not None:
                axes.append((name,))
            continue
        kind = element.__class__
        inners = element.elements if element.__class__ is Bracket else (element,)
        refused = kind is Bracket and not brackets
        dim: list[str] = []
        for inner in inners:
            for item in inner.items if inner.__class__ is Group else (inner,):
                if refused:
                    raise _not_allowed(pattern, element.span, op)
                if item.__class__ is Axis:
                    name, span = item
                    if name in names:
                        raise _twice(pattern, item, side)
                    names[name] = span
                    dim.append(name)
                elif item.__class__ is Dots:
                    if dots is not None:
                        raise _twice(pattern, item, side)
                    if side == "left" and kind is Group:
                        raise _dots_grouped(pattern, element.span)
                    dots = item.span
                    grouped = kind is not Dots
                elif item.__class__ is not Anon:
                    raise _not_allowed(pattern, item.span, op)
                elif item.length != 1:
                    anons.append(item)
                    if axes is not None:
                        name = _anon_name(prefix, len(axes), len(dim))  # type: ignore[arg-type]
                        written[name] = item.length
                        dim.append(name)
        if axes is not None:
            if kind is Dots:
                axes.append(None)
            elif kind is Bracket or grouped:
                axes = None  # dims made by `term_dims` for the shape
            else:
                axes.append(tuple(dim))
    return _new(
        _TermRead, (term, names, dots, anons, None if axes is None else tuple(axes), written)
    )


def _anon_name(prefix: str, element: int, slot: int) -> str:
    """The name `_element_dim` gives the `slot`-th anonymous axis of the `element`-th element."""
    return f"{prefix}{element}.0.{slot}"


def _element_dim(read: _TermRead, i: int, prefix: str) -> Dim:
    """The dimension the `i`-th element of a term is, as `term_dims` makes it."""
    element = read.term.elements[i]
    return term_dims(Term((element,), element.span), 0, anon_prefix=f"{prefix}{i}.")[0]


def _dots_grouped(pattern: Pattern, span: Span) -> PatternError:
    return PatternError(
        "'...' inside parentheses is not allowed on the left",
        pattern=pattern.text,
        span=span,
        hint="the axes '...' stands for are only known after matching the input",
    )


def _twice(pattern: Pattern, item: Axis | Dots, side: str) -> PatternError:
    """An axis, or '...', a second time on one side."""
    if isinstance(item, Dots):
        reason = f"'...' appears twice on the {side}"
        return PatternError(reason, pattern=pattern.text, span=item.span)
    return PatternError(
        f"axis '{item.name}' appears twice on the {side}",
        pattern=pattern.text,
        span=item.span,
        hint="use einsum to take a diagonal",
    )


def check_pattern(op: str, text: str) -> Pattern:
    """Parse `text` and check that `op` accepts it; cached on (op, text).

    Raises:
        PatternError: at the first element `op` does not accept.
    """
    return _checked(op, text).pattern


class _Checked(NamedTuple):
    """A rearrange / reduce / repeat pattern, read and checked once for every shape."""

    pattern: Pattern
    left: _TermRead
    right: _TermRead


@functools.lru_cache(maxsize=1024)
def _checked(op: str, text: str) -> _Checked:
    """`check_pattern`, with what the plans need of each side; cached on (op, text)."""
    pattern = parse_pattern(text)
    if pattern.outputs is None:
        end = len(text)
        raise PatternError(
            "the pattern has no '->'", pattern=text, span=(end, end + 1), hint="e.g. 'b c -> c b'"
        )
    check_names(pattern)
    read = []
    for terms, side, prefix in (
        (pattern.inputs, "left", "<in>"),
        (pattern.outputs, "right", "<out>"),
    ):
        if len(terms) != 1:
            span = (terms[0].span[1], terms[1].span[0])
            raise PatternError(
                f"{op} takes one term a side, got {len(terms)} on the {side}",
                pattern=text,
                span=span,
                hint="separate axes with spaces, not commas",
            )
        read.append(_read_term(pattern, terms[0], side, op, False, prefix))
    left, right = read
    # reduce may reduce the axes '...' stands for: then it is on the left only.
    if (left.dots is None) != (right.dots is None) and not (op == "reduce" and left.dots):
        where = left.dots if left.dots is not None else right.dots
        raise PatternError("'...' must appear on both sides or neither", pattern=text, span=where)
    _check_sides(op, text, left, right)
    return _new(_Checked, (pattern, left, right))


def _check_sides(op: str, text: str, left: _TermRead, right: _TermRead) -> None:
    """Each side names the axes the other does, as `op` needs; integers where it takes them."""
    left_names, right_names = left.names, right.names
    if op != "reduce" and not right_names.keys() >= left_names.keys():
        missing = next(name for name in left_names if name not in right_names)
        _missing(op, text, missing, left_names[missing], "right")
    if op != "repeat" and not left_names.keys() >= right_names.keys():
        missing = next(name for name in right_names if name not in left_names)
        _missing(op, text, missing, right_names[missing], "left")
    for anons, side, allowed in ((left.anons, "left", "reduce"), (right.anons, "right", "repeat")):
        if anons and op != allowed:
            raise PatternError(
                f"an anonymous axis of length {anons[0].length} is not allowed on the {side} "
                f"of {op}",
                pattern=text,
                span=anons[0].span,
                hint="name the axis and pass its length as a keyword",
            )


def _missing(op: str, text: str, name: str, span: Span, side: str) -> NoReturn:
    hint = "use reduce to remove an axis, repeat to add one" if op == "rearrange" else None
    reason = f"axis '{name}' is missing on the {side}"
    raise PatternError(reason, pattern=text, span=span, hint=hint)


def plan_recipe(op: str, text: str, shape: Sequence[int], lengths: LengthItems = ()) -> Recipe:
    """The recipe of `op` with the pattern `text` on an input of `shape` (not cached).

    Raises:
        PatternError: the pattern is malformed or `op` does not accept it.
        ShapeError: it does not fit the shape or the lengths.
    """
    left, right = _checked(op, text)[1:]
    in_axes: Sequence[tuple[str, ...]]
    out_axes: Sequence[tuple[str, ...]]
    count = _dots_count(left, len(shape))
    if count is None or right.axes is None:  # the dims made for the shape, or the error
        count = count_dots(text, left.term, len(shape))
        given = check_lengths(lengths) if lengths else {}
        in_dims = term_dims(left.term, count, anon_prefix="<in>")
        out_dims = term_dims(right.term, count, anon_prefix="<out>")
        known = _resolve(text, in_dims, shape, given)
        in_axes, out_axes = axis_names(in_dims), axis_names(out_dims)
        written = {s.name or "": s.length for d in out_dims for s in d.slots if s.length}
    else:
        in_axes, out_axes = _expand(left.axes, count), _expand(right.axes, count)  # type: ignore[arg-type]
        given = check_lengths(lengths) if lengths else {}
        known = _resolve_axes(text, left, in_axes, shape, given, count)
        written = right.written
    if op == "repeat":  # the only op with axes new on the right (`_check_sides`)
        for axes in out_axes:
            for name in axes:
                if name not in known:
                    length = written[name] if name in written else given.get(name)
                    if length is None:
                        raise ShapeError(
                            f"the length of new axis '{name}' is not given",
                            pattern=text,
                            span=right.names[name],
                            hint=f"pass {name}=... or write an integer literal",
                        )
                    known[name] = length
    if given:
        check_used(text, given, known)
    return recipe_of_axes(tuple(shape), in_axes, out_axes, known)


def _dots_count(read: _TermRead, ndim: int) -> int | None:
    """How many dims '...' stands for in a term read with its axes; None: not read so, or no fit."""
    axes = read.axes
    if axes is None:
        return None
    if read.dots is None:
        return 0 if len(axes) == ndim else None
    count = ndim - len(axes) + 1
    return count if count >= 0 else None


#: The axes of '...' standing for a few dimensions, each dimension one axis (`dots_name`).
_DOTS_AXES = tuple((dots_name(i),) for i in range(32))


def _expand(axes: tuple[tuple[str, ...] | None, ...], count: int) -> Sequence[tuple[str, ...]]:
    """Each dimension's axes, with '...' (None) standing for `count` dimensions."""
    if None not in axes:
        return axes  # type: ignore[return-value]
    k = axes.index(None)
    dots = (
        _DOTS_AXES[:count] if count <= len(_DOTS_AXES) else [(dots_name(i),) for i in range(count)]
    )
    return [*axes[:k], *dots, *axes[k + 1 :]]


def _resolve_axes(
    text: str,
    read: _TermRead,
    axes: Sequence[tuple[str, ...]],
    shape: Sequence[int],
    given: dict[str, int],
    count: int,
) -> dict[str, int]:
    """Every axis of the dims `axes` of a term with its length, as `resolve_dims` finds them.

    Where every length is an int and the dimension splits, it is worked out here: one
    axis neither given nor written is the whole length, or what the others leave. The
    other dimensions, and every error, are `resolve_dims`' (sizes of a compiler, graphs).
    """
    known: dict[str, int] = {}
    written = read.written
    for k, (dim, length) in enumerate(zip(axes, shape)):  # noqa: B905 (one length each)
        if length.__class__ is int:
            if len(dim) == 1 and dim[0] not in given and dim[0] not in written:  # most dims
                known[dim[0]] = length
                continue
            values = [written[n] if n in written else given.get(n) for n in dim]
            split = _split(values, length)
            if split is not None:
                known.update(zip(dim, split, strict=True))
                continue
        for slot, value in resolve_dims(text, (_dim_at(read, k, count),), (length,), given)[0]:
            known[slot.name] = value  # type: ignore[index]
    return known


def _dim_at(read: _TermRead, k: int, count: int) -> Dim:
    """The `k`-th dimension of a term with '...' standing for `count`, as `term_dims` makes it."""
    axes = read.axes
    assert axes is not None
    at = axes.index(None) if read.dots is not None else len(axes)
    if k < at:
        return _element_dim(read, k, "<in>")
    if k >= at + count:
        return _element_dim(read, k - count + 1, "<in>")
    span = read.dots
    return Dim((Slot(dots_name(k - at), None, span),), span, False)  # type: ignore[arg-type]


def _split(values: list[int | None], length: int) -> list[int] | None:
    """`values` with the one None the rest of `length`, if all are ints and they fit; else None."""
    product, missing = 1, -1
    for k, value in enumerate(values):
        if value is None:
            if missing >= 0:
                return None
            missing = k
        elif value.__class__ is int:
            product *= value
        else:
            return None
    if missing < 0:
        return values if product == length else None  # type: ignore[return-value]
    if product == 0 or length % product:
        return None
    values[missing] = length // product
    return values  # type: ignore[return-value]


def _resolve(
    text: str, dims: Sequence[Dim], shape: Sequence[int], given: dict[str, int]
) -> dict[str, int]:
    """Every named axis of `dims` with its length: `resolve_dims`, as a dict."""
    return {
        slot.name: length
        for dim in resolve_dims(text, dims, shape, given)
        for slot, length in dim
        if slot.name is not None
    }
