"""The one axis resolver: a term of a pattern against a concrete shape.

Every op reads the dimensions of an input the same way, through this module:

* `count_dots` says how many dimensions ``...`` stands for (or that the term
  does not fit the input's rank);
* `term_dims` opens the term into `Dim`s, one per dimension of the
  input, each the `Slot`s (elementary axes) composed into it: ``(h w)`` is
  one dim of two slots, ``1`` and ``()`` are dims of none, ``...`` becomes one dim
  per axis it stands for, ``[...]`` marks its dims;
* `resolve_dims` finds the length of every slot from the shape and the axis
  lengths the caller gave, inferring at most one unknown per dim;
* `check_lengths` checks those given lengths.

rearrange / reduce / repeat, einsum, parse_shape, softmax and the indexing ops,
explain and the layers all go through here (pack and unpack only locate ``*``),
so the same mismatch reads the same everywhere.

Axes that ``...`` stands for are named ``…0``, ``…1``, ... (`dots_name`),
right-aligned so that operands of different ranks broadcast as NumPy does;
anonymous axes (integer literals) get names that no identifier can take.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from tensorops._errors import ShapeError, Span, bad_length
from tensorops._grammar import Anon, Axis, Bracket, Dots, Group, Skip, Term
from tensorops._staging.sizes import is_run_time, require_equal, same_length, same_shape

__all__ = [
    "DOTS_PREFIX",
    "Dim",
    "Slot",
    "check_lengths",
    "check_used",
    "count_dots",
    "dots_name",
    "may_equal",
    "product",
    "resolve_dims",
    "same_shape",
    "term_dims",
]

#: The first character of the names of the axes ``...`` stands for.
DOTS_PREFIX = "…"


def product(values: Iterable[int]) -> int:
    """The product of `values` (1 for none); symbolic sizes multiply too."""
    result = 1
    for value in values:
        result *= value
    return result


def may_equal(first: Sequence[Any], second: Sequence[Any]) -> bool:
    """Whether two shapes may be equal: equal where both lengths are known now.

    A length known only when the graph runs (`RunTimeSize`) may equal any other.

    Examples:
        >>> from tensorops._staging.sizes import leaf
        >>> n, m = leaf(lambda: 2), leaf(lambda: 3)
        >>> may_equal((n, 2), (m, 2)), may_equal((n, 2), (m, 3))
        (True, False)
    """
    return len(first) == len(second) and all(
        a is b or same_length(a, b) is not False for a, b in zip(first, second, strict=True)
    )


def dots_name(i: int) -> str:
    """The name of the ``i``-th axis that ``...`` stands for (never a valid identifier)."""
    return f"{DOTS_PREFIX}{i}"


class Slot(NamedTuple):
    """One elementary axis of a term.

    Attributes:
        name: the axis name; a name no identifier can take for ``...`` and
            anonymous axes; None for a skipped axis (``_``).
        length: the length written in the pattern (anonymous axes), else None.
        span: where it is in the pattern text.
    """

    name: str | None
    length: int | None
    span: Span


class Dim(NamedTuple):
    """One dimension of an array as a term describes it.

    Attributes:
        slots: the elementary axes composed into it; none for a unit axis.
        span: where it is in the pattern text.
        marked: whether it is inside ``[ ]``.
    """

    slots: tuple[Slot, ...]
    span: Span
    marked: bool


def _rank_parts(term: Term) -> tuple[int, bool]:
    """(dims the term names outside ``...``, whether it has a top-level ``...``)."""
    fixed, dots = 0, False
    for element in term.elements:
        for inner in element.elements if isinstance(element, Bracket) else (element,):
            if isinstance(inner, Dots):
                dots = True
            else:
                fixed += 1
    return fixed, dots


def count_dots(text: str, term: Term, ndim: int, operand: int | None = None) -> int:
    """How many dimensions ``...`` stands for when `term` describes an array of rank `ndim`.

    Args:
        text: the pattern text, for the error.
        term: the term.
        ndim: the array's number of dimensions.
        operand: the operand's position when the op takes several (for the message).

    Raises:
        ShapeError: the term does not fit the rank.
    """
    fixed, dots = _rank_parts(term)
    if ndim == fixed or (dots and ndim > fixed):
        return ndim - fixed
    at_least = "at least " if dots else ""
    span = term.span if term.elements else None
    if operand is None:
        reason = f"the pattern has {at_least}{fixed} axes but the input has {ndim} dimensions"
        raise ShapeError(reason, pattern=text, span=span)
    term_text = text[term.span[0] : term.span[1]]
    reason = f"operand {operand} has {ndim} dimension(s) but its term {term_text!r} has "
    raise ShapeError(
        reason + f"{at_least}{fixed}",
        pattern=text,
        span=term.span if term.span[1] > term.span[0] else (term.span[0], term.span[0] + 1),
        hint=None if dots else "use '...' for a variable number of dimensions",
    )


def term_dims(
    term: Term, dots: int, total_dots: int | None = None, anon_prefix: str = "#"
) -> tuple[Dim, ...]:
    """The dimensions of `term`, with ``...`` standing for `dots` axes.

    Args:
        term: the term.
        dots: how many axes ``...`` stands for in this term.
        total_dots: how many ``...`` axes there are in all (operands of lower rank
            take the last ones, as NumPy broadcasts); default `dots`.
        anon_prefix: prefix of the names given to anonymous axes, so that those of
            two terms do not meet.
    """
    first = (dots if total_dots is None else total_dots) - dots
    dims: list[Dim] = []
    for element in term.elements:
        marked = isinstance(element, Bracket)
        for inner in element.elements if isinstance(element, Bracket) else (element,):
            if isinstance(inner, Dots):
                dims.extend(
                    Dim((Slot(dots_name(i), None, inner.span),), inner.span, marked)
                    for i in range(first, first + dots)
                )
                continue
            items = inner.items if isinstance(inner, Group) else (inner,)
            slots: list[Slot] = []
            for item in items:
                if isinstance(item, Axis):
                    slots.append(Slot(item.name, None, item.span))
                elif isinstance(item, Dots):
                    slots.extend(
                        Slot(dots_name(i), None, item.span) for i in range(first, first + dots)
                    )
                elif isinstance(item, Anon):
                    if item.length != 1:
                        name = f"{anon_prefix}{len(dims)}.{len(slots)}"
                        slots.append(Slot(name, item.length, item.span))
                elif isinstance(item, Skip):
                    slots.append(Slot(None, None, item.span))
            dims.append(Dim(tuple(slots), inner.span, marked))
    return tuple(dims)


def check_lengths(lengths: Iterable[tuple[str, Any]]) -> dict[str, int]:
    """The axis lengths a caller gave, as a dict, each checked to be a non-negative integer.

    A tracing compiler's symbolic size (torch's ``SymInt``) and a length known only when
    the graph runs (`RunTimeSize`) are kept as they are.

    Raises:
        ShapeError: a length is not an integer, or is negative.
    """
    given: dict[str, int] = {}
    for name, value in lengths:
        # torch.compile: Dynamo reports a symbolic size's type as int and cannot trace
        # hasattr() on it, so plain ints skip the generic integer check.
        if type(value) is not int and not is_run_time(value) and (type(value).__name__ != "SymInt"):
            if isinstance(value, bool) or not hasattr(value, "__index__"):
                raise bad_length(name, value, "is not an integer")
            value = value.__index__()
        if type(value) is int and value < 0:
            raise bad_length(name, value, "is negative")
        given[name] = value
    return given


def check_used(text: str, given: Mapping[str, Any], used: Iterable[str]) -> None:
    """Check that every axis length the caller gave names an axis of the pattern.

    Raises:
        ShapeError: for the first length given for an axis the pattern does not have.
    """
    names = set(used)
    for name, value in given.items():
        if name not in names:
            raise ShapeError(
                f"axis length {name}={value} is given but '{name}' is not in the pattern",
                pattern=text,
            )


def resolve_dims(
    text: str, dims: Sequence[Dim], shape: Sequence[int], given: Mapping[str, int]
) -> list[list[tuple[Slot, int]]]:
    """The length of every slot of `dims` against `shape`, checked.

    Per dimension, the slots' lengths come from the pattern (anonymous axes) or from
    `given`; one slot whose length is unknown is inferred from the dimension.

    Args:
        text: the pattern text, for errors.
        dims: the dimensions, one per entry of `shape`.
        shape: the array's shape.
        given: the axis lengths the caller gave (see `check_lengths`).

    Returns:
        Per dimension, each slot with its length.

    Raises:
        ShapeError: a dimension cannot be split as the pattern says.
    """
    resolved: list[list[tuple[Slot, int]]] = []
    for dim, length in zip(dims, shape, strict=True):
        unknown: list[Slot] = []
        product, lengths = 1, []
        for slot in dim.slots:
            value = slot.length if slot.length is not None else given.get(slot.name or "")
            if value is None:
                unknown.append(slot)
            else:
                product *= value
            lengths.append(value)
        if len(unknown) > 1:
            names = " and ".join(slot.name or "_" for slot in unknown)
            raise ShapeError(
                f"cannot infer the lengths of {names} in {_text(text, dim)} from a single "
                f"dimension of length {length}",
                pattern=text,
                span=dim.span,
                hint=f"pass {unknown[0].name}=...",
            )
        # A length known only when the graph runs (RunTimeSize) is computed with; what
        # cannot be checked now is checked when the graph runs (`require_equal`).
        if unknown:
            if same_length(product, 0) is True or (
                not is_run_time(length) and not is_run_time(product) and length % product != 0
            ):
                raise _indivisible(text, dim, length, product, lengths)
            # the length itself when nothing divides it: a run-time size stays itself
            inferred = length if type(product) is int and product == 1 else length // product
            lengths = [inferred if value is None else value for value in lengths]
        elif not is_run_time(length) and not is_run_time(product):
            if product != length:
                raise _mismatch(text, dim, length, product, lengths)
        else:
            require_equal(
                product,
                length,
                functools.partial(_mismatch, text, dim, length, product, lengths),
            )
        resolved.append(list(zip(dim.slots, lengths, strict=True)))  # type: ignore[arg-type]
    return resolved


def _text(text: str, dim: Dim) -> str:
    return text[dim.span[0] : dim.span[1]]


def _indivisible(
    text: str, dim: Dim, length: int, product: int, lengths: list[int | None]
) -> ShapeError:
    known = ", ".join(
        f"{slot.name}={value}"
        for slot, value in zip(dim.slots, lengths, strict=True)
        if value is not None and slot.length is None
    )
    with_known = f" with {known}" if known else ""
    return ShapeError(
        f"cannot split axis of length {length} into {_text(text, dim)}{with_known}: "
        f"{length} is not divisible by {product}",
        pattern=text,
        span=dim.span,
    )


def _mismatch(
    text: str, dim: Dim, length: int, product: int, lengths: list[int | None]
) -> ShapeError:
    if not dim.slots:
        what = "a unit axis"
    elif len(dim.slots) == 1:
        what = f"{_text(text, dim)} = {product}"
    else:
        detail = "*".join(str(value) for value in lengths)
        what = f"{_text(text, dim)} = {detail} = {product}"
    return ShapeError(
        f"dimension of length {length} does not match {what}", pattern=text, span=dim.span
    )
