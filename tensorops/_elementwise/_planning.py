"""Element-wise patterns read and planned: every operand to one common order of the axes.

A pattern names every dimension of every operand; an axis absent from an operand is
broadcast over it::

    "b t c, c -> b t c"        x[b, t, c] * w[c]: w is broadcast over b and t
    "b t c, c"                 the same: without "->" the output is every axis once,
                               in the order they first appear, compositions opened
    "b (h w), h -> h b w"      compositions on either side, any output order
    "b 1 c, b t c"             a dimension of length 1 broadcasts only when written 1
    "b c, -> b c"              an empty term: a 0-d array or a Python number

`plan_operands` brings every operand to the common order with one reshape (and a
permute where its axes come in another order) and says how the result is rearranged
to the output. It works from strings and shapes only and imports no framework.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, NamedTuple

from tensorops._axes import (
    Dim,
    Slot,
    check_lengths,
    check_used,
    count_dots,
    resolve_dims,
    term_dims,
)
from tensorops._errors import ArgumentError, PatternError, ShapeError, Span
from tensorops._grammar import Anon, Dots, Pattern, Term, check_names, items_of, parse_pattern
from tensorops._marked import useful
from tensorops._plan import Recipe, check_term, make_recipe
from tensorops._staging.sizes import is_run_time, known_as, require_equal, same_shape

__all__ = ["Plan", "plan_operands", "read_pattern"]


class _Read(NamedTuple):
    """A pattern read for one op, before shapes: its input terms and its output."""

    pattern: Pattern
    inputs: tuple[Term, ...]
    output: Term | None  # None: implicit (every axis once, in first-seen order)
    dots: bool  # whether some input has '...'


@functools.lru_cache(maxsize=1024)
def read_pattern(op: str, text: str, count: int) -> _Read:
    """Parse `text` and check what does not depend on shapes; cached.

    Raises:
        PatternError: at the first element the op does not accept.
    """
    pattern = parse_pattern(text)
    check_names(pattern)
    inputs = pattern.inputs
    if len(inputs) != count:
        span = inputs[0].span if len(inputs) == 1 else (inputs[0].span[0], inputs[-1].span[1])
        raise PatternError(
            f"the pattern has {len(inputs)} term(s) on the left for {count} operand(s)",
            pattern=text,
            span=span if span[1] > span[0] else None,
            hint="one term per operand, separated by commas; an empty term for a number",
        )
    outputs = pattern.outputs
    if outputs is not None and len(outputs) != 1:
        raise PatternError(
            f"{op} takes one term on the right, got {len(outputs)}",
            pattern=text,
            span=(outputs[0].span[1], outputs[1].span[0]),
            hint="separate axes with spaces, not commas",
        )
    for term in inputs:
        check_term(pattern, term, "left", op)
    output = outputs[0] if outputs is not None else None
    if output is not None:
        check_term(pattern, output, "right", op)
    _check_axes(op, pattern, output)
    dots = any(isinstance(item, Dots) for term in inputs for _, item in items_of(term))
    return _Read(pattern, inputs, output, dots)


def _check_axes(op: str, pattern: Pattern, output: Term | None) -> None:
    """No anonymous axis but 1; the output has exactly the inputs' axes."""
    for term in (*pattern.inputs, *((output,) if output is not None else ())):
        for _, item in items_of(term):
            if isinstance(item, Anon) and item.length != 1:
                raise PatternError(
                    f"an anonymous axis of length {item.length} is not allowed in {op}",
                    pattern=pattern.text,
                    span=item.span,
                    hint="name the axis: operands match axes by name",
                )
    if output is None:
        return
    seen, named = _axes_of(pattern.inputs), _axes_of((output,))
    for found, other, (reason, hint) in ((named, seen, _ADDED), (seen, named, _DROPPED)):
        for key, span in found.items():
            if key not in other:
                what = "'...'" if key == "..." else f"axis '{key}'"
                raise PatternError(f"{what} {reason}", pattern=pattern.text, span=span, hint=hint)


#: Why an axis on one side only is refused, and what to use instead: on the right only,
#: on the left only.
_ADDED = (
    "on the right is in no operand",
    "an element-wise op adds no axis: use repeat to broadcast to a new one",
)
_DROPPED = (
    "is missing on the right: an element-wise op keeps every axis",
    "to sum or take the maximum over an axis, use reduce or einsum",
)


def _axes_of(terms: Sequence[Term]) -> dict[str, Span]:
    """The axes named in `terms` (``"..."`` for an ellipsis), each where it first stands."""
    found: dict[str, Span] = {}
    for term in terms:
        for _, item in items_of(term):
            key = "..." if isinstance(item, Dots) else getattr(item, "name", None)
            if key is not None:
                found.setdefault(key, item.span)
    return found


class Plan(NamedTuple):
    """An element-wise call planned against shapes."""

    prepare: tuple[Recipe | None, ...]  # per array: to the common order, unit dims inserted
    shape: tuple[int, ...]  # the shape the operands broadcast to (the common order)
    output: Recipe | None  # from the common order to the output


def plan_operands(
    op: str,
    text: str,
    shapes: tuple[tuple[int, ...], ...],
    lengths: tuple[tuple[str, Any], ...],
    numbers: Any,
) -> Plan:
    """Resolve `text` against the operands' `shapes` (numbers as ``()``) and plan the calls.

    Raises:
        PatternError: the pattern is malformed or the op does not accept it.
        ShapeError: it does not fit the shapes or the lengths.
    """
    read = read_pattern(op, text, len(shapes))
    for k in numbers:
        if read.inputs[k].elements:
            raise PatternError(
                f"operand {k} is a Python number: its term must be empty",
                pattern=text,
                span=read.inputs[k].span,
                hint="e.g. 'b c, -> b c' for add(x, 1.0, ...)",
            )
    if op == "where" and 0 in numbers:
        raise ArgumentError("the condition of where must be an array, not a Python number")
    given = check_lengths(lengths)
    dims = _operand_dims(text, read.inputs, shapes)
    known = _resolve(text, dims, shapes, given)
    out_dims = (
        term_dims(read.output, _dots_of(dims)) if read.output is not None else _implicit(dims)
    )
    check_used(
        text, given, (s.name or "" for d in (*dims, out_dims) for dim in d for s in dim.slots)
    )
    order = _common_order(dims, out_dims)
    common = tuple(Dim((Slot(name, None, (0, 0)),), (0, 0), False) for name in order)
    prepare = tuple(
        _prepare(shape, operand, order, known)
        for k, (shape, operand) in enumerate(zip(shapes, dims, strict=True))
        if k not in numbers
    )
    shape = tuple(known[name] for name in order)
    return Plan(prepare, shape, useful(make_recipe(shape, common, out_dims, known)))


def _operand_dims(
    text: str, terms: tuple[Term, ...], shapes: tuple[tuple[int, ...], ...]
) -> list[tuple[Dim, ...]]:
    """Each operand's dims; '...' stands for the same number of axes in every term with it."""
    dims: list[tuple[Dim, ...]] = []
    first: tuple[int, int] | None = None  # (operand, axes '...' stands for there)
    for k, (term, shape) in enumerate(zip(terms, shapes, strict=True)):
        dots = count_dots(text, term, len(shape), operand=k)
        span = next((item.span for _, item in items_of(term) if isinstance(item, Dots)), None)
        if span is not None:
            if first is not None and first[1] != dots:
                raise ShapeError(
                    f"'...' stands for {dots} dimension(s) in operand {k} but for {first[1]} "
                    f"in operand {first[0]}",
                    pattern=text,
                    span=span,
                    hint="'...' stands for the same dimensions in every operand that has it",
                )
            first = first or (k, dots)
        dims.append(term_dims(term, dots))
    return dims


def _dots_of(dims: list[tuple[Dim, ...]]) -> int:
    names = {s.name for d in dims for dim in d for s in dim.slots}
    return sum(1 for name in names if name is not None and name.startswith("…"))


def _resolve(
    text: str,
    dims: list[tuple[Dim, ...]],
    shapes: tuple[tuple[int, ...], ...],
    given: dict[str, int],
) -> dict[str, int]:
    """Every axis's length, the same wherever it appears; an unnamed 1 is the only broadcast."""
    known = dict(given)
    where: dict[str, int] = {}  # the operand an axis's length was read from
    for k, (operand, shape) in enumerate(zip(dims, shapes, strict=True)):
        for dim, length in zip(operand, shape, strict=True):
            if len(dim.slots) != 1 or dim.slots[0].length is not None:
                continue
            name = dim.slots[0].name or ""
            if name in known:
                first = known[name]
                require_equal(
                    first,
                    length,
                    functools.partial(
                        _conflict, text, dim, name, length, k, first, where.get(name)
                    ),
                )
                if is_run_time(first) and not is_run_time(length):
                    known[name] = length  # a known length gives the plan constants
            else:
                known[name] = length
            where.setdefault(name, k)
    pending = list(range(len(dims)))
    while pending:  # compositions, each once the lengths it needs are known
        ready = [k for k in pending if _resolvable(dims[k], known)] or pending[:1]
        for k in ready:
            for slots in resolve_dims(text, dims[k], shapes[k], known):
                for slot, length in slots:
                    known[slot.name or ""] = length
            pending.remove(k)
    return known


def _resolvable(dims: tuple[Dim, ...], known: dict[str, int]) -> bool:
    return all(
        sum(1 for s in dim.slots if s.length is None and s.name not in known) <= 1 for dim in dims
    )


def _conflict(
    text: str, dim: Dim, name: str, length: int, k: int, other: int, source: int | None
) -> ShapeError:
    shown = "'...'" if name.startswith("…") else f"'{name}'"
    before = f"{other} in operand {source}" if source is not None else f"{name}={other} was given"
    hint = None
    if known_as(length, 1) or known_as(other, 1):
        hint = "a dimension of length 1 broadcasts only where its term says 1, e.g. 'b 1 c, b t c'"
    return ShapeError(
        f"axis {shown} has length {length} in operand {k} but {before}",
        pattern=text,
        span=dim.span,
        hint=hint,
    )


def _implicit(dims: list[tuple[Dim, ...]]) -> tuple[Dim, ...]:
    """The output without '->': every elementary axis once, in the order they first appear."""
    out: dict[str, Dim] = {}
    for operand in dims:
        for dim in operand:
            for slot in dim.slots:
                out.setdefault(slot.name or "", Dim((slot,), slot.span, False))
    return tuple(out.values())


def _names(dims: Sequence[Dim]) -> list[str]:
    return [slot.name or "" for dim in dims for slot in dim.slots]


def _common_order(dims: list[tuple[Dim, ...]], out_dims: tuple[Dim, ...]) -> tuple[str, ...]:
    """The order the operands are aligned in: the output's, unless that costs more permutes."""

    def cost(order: list[str]) -> int:
        position = {name: i for i, name in enumerate(order)}
        permutes = sum(
            1
            for d in dims
            if [position[n] for n in _names(d)] != sorted(position[n] for n in _names(d))
        )
        return permutes + (order != output)

    output = _names(out_dims)
    seen = list(dict.fromkeys(name for d in dims for name in _names(d)))
    return tuple(output if cost(output) <= cost(seen) else seen)


def _prepare(
    shape: tuple[int, ...], dims: tuple[Dim, ...], order: tuple[str, ...], known: dict[str, int]
) -> Recipe | None:
    """One operand to the common order, a unit dim for each axis it lacks; None: as it is."""
    names = _names(dims)
    present = set(names)
    ordered = [name for name in order if name in present]
    perm = tuple(names.index(name) for name in ordered)
    target = tuple(known[name] if name in present else 1 for name in order)
    lengths = tuple((name, known[name]) for name in names)
    if perm == tuple(range(len(perm))):  # one reshape: axes opened and unit dims inserted
        if same_shape(target, shape):
            return None
        return Recipe(None, (), None, None, None, target, lengths)
    init = tuple(known[name] for name in names)
    permuted = tuple(known[name] for name in ordered)
    return Recipe(
        None if same_shape(init, shape) else init,
        (),
        perm,
        None,
        None,
        None if same_shape(target, permuted) else target,
        lengths,
    )
