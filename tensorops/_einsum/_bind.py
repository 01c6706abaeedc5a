"""Einsum equations bound to shapes: the size of every axis, checked.

:func:`bind_equation` splits composed dimensions (``(h d)`` with ``h=8``), checks
each axis has one length across operands, and applies NumPy's broadcasting of
``...`` and of size-1 axes: a size-1 axis that meets a larger one is dropped from
its operand, which is constant along it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from tensorops._einsum._notation import ELLIPSIS_PREFIX, Notation, parse_equation
from tensorops._errors import ShapeError, Span
from tensorops._plan import check_lengths

__all__ = ["Bound", "bind_equation"]

#: The axes of one dimension: one axis, or several composed with ``( )``.
Dim = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Bound:
    """A notation bound to shapes: sizes of every axis and each operand's elementary form.

    Attributes:
        notation: The parsed equation.
        sizes: Size of every axis after broadcasting.
        axes: Per operand, its elementary axes after dropping broadcast (size-1) ones;
            an axis repeated within an operand stays repeated (a diagonal).
        shapes: Per operand, the shape with those axes (None: the input shape as is).
    """

    notation: Notation
    sizes: dict[str, int]
    axes: tuple[tuple[str, ...], ...]
    shapes: tuple[tuple[int, ...] | None, ...]


@functools.lru_cache(maxsize=1024)
def bind_equation(
    equation: str, shapes: tuple[tuple[int, ...], ...], lengths: tuple[tuple[str, int], ...]
) -> Bound:
    """Resolve the sizes of every axis of ``equation`` for ``shapes``; cached.

    Raises:
        TensorOpsError: The equation is malformed or does not fit the shapes / lengths.
    """
    notation = parse_equation(equation, tuple(len(shape) for shape in shapes))
    given = check_lengths(lengths)
    known = {axis for term in notation.inputs for dim in term for axis in dim}
    for name in given:
        if name not in known:
            raise ShapeError(
                f"axis length {name}={given[name]} is given but {name!r} is not an input axis",
                pattern=equation,
                hint="remove the unused keyword argument",
            )
    sizes: dict[str, int] = {}
    owner: dict[str, tuple[int, int, Span]] = {}
    elementary: list[list[tuple[str, int]]] = []
    for number, (term, shape) in enumerate(zip(notation.inputs, shapes, strict=True)):
        items: list[tuple[str, int]] = []
        local: dict[str, int] = {}
        for dim, length, span in zip(term, shape, notation.input_spans[number], strict=True):
            for axis, size in _split(equation, dim, length, given, span):
                if local.setdefault(axis, size) != size:
                    raise ShapeError(
                        f"axis {axis!r} is repeated in operand {number} with different "
                        f"lengths {local[axis]} and {size}: a diagonal needs equal lengths",
                        pattern=equation,
                        span=span,
                    )
                _unify(equation, sizes, owner, axis, size, number, span, shapes)
                items.append((axis, size))
        elementary.append(items)
    axes, new_shapes = _drop_broadcast(elementary, sizes, shapes)
    return Bound(notation, sizes, axes, new_shapes)


def _split(
    text: str, dim: Dim, length: int, given: dict[str, int], span: Span
) -> list[tuple[str, int]]:
    """The elementary (axis, size) pairs of one input dimension."""
    if len(dim) == 1 and dim[0] not in given:
        return [(dim[0], length)]
    unknown = [axis for axis in dim if axis not in given]
    known = 1
    for axis in dim:
        known *= given.get(axis, 1)
    if len(unknown) > 1:
        raise ShapeError(
            f"cannot split a dimension of length {length} into ({' '.join(dim)}): the lengths "
            f"of {', '.join(repr(a) for a in unknown)} are unknown",
            pattern=text,
            span=span,
            hint=f"pass all but one of them, e.g. {unknown[0]}=...",
        )
    if unknown:
        if known == 0 or length % known:
            raise ShapeError(
                f"cannot split a dimension of length {length} into ({' '.join(dim)}): "
                f"{length} is not divisible by {known}",
                pattern=text,
                span=span,
            )
        inferred = {unknown[0]: length // known}
    else:
        inferred = {}
        if known != length:
            raise ShapeError(
                f"dimension of length {length} does not match ({' '.join(dim)}) = {known}",
                pattern=text,
                span=span,
            )
    return [(axis, given[axis] if axis in given else inferred[axis]) for axis in dim]


def _unify(
    text: str,
    sizes: dict[str, int],
    owner: dict[str, tuple[int, int, Span]],
    axis: str,
    size: int,
    number: int,
    span: Span,
    shapes: tuple[tuple[int, ...], ...],
) -> None:
    """Record ``axis`` of ``size``; size-1 broadcasts, other mismatches are errors."""
    previous = sizes.get(axis)
    if previous is None or previous == size:
        sizes[axis] = size
        owner.setdefault(axis, (number, size, span))
        return
    first, first_size, _ = owner[axis]
    if previous == 1 or size == 1:
        sizes[axis] = max(previous, size)
        if size != 1:
            owner[axis] = (number, size, span)
        return
    name = "'...'" if axis[0] == ELLIPSIS_PREFIX else repr(axis)
    reason = (
        f"axis {name} has length {first_size} in operand {first} "
        f"(shape {shapes[first]}) but length {size} in operand {number} (shape "
        f"{shapes[number]})"
    )
    raise ShapeError(reason, pattern=text, span=span)


def _drop_broadcast(
    elementary: list[list[tuple[str, int]]],
    sizes: dict[str, int],
    shapes: tuple[tuple[int, ...], ...],
) -> tuple[tuple[tuple[str, ...], ...], tuple[tuple[int, ...] | None, ...]]:
    """Drop size-1 axes that broadcast against a larger size: the operand is constant there."""
    axes: list[tuple[str, ...]] = []
    new_shapes: list[tuple[int, ...] | None] = []
    for items, shape in zip(elementary, shapes, strict=True):
        kept = [(axis, size) for axis, size in items if size == sizes[axis]]
        axes.append(tuple(axis for axis, _ in kept))
        new_shape = tuple(size for _, size in kept)
        new_shapes.append(None if new_shape == tuple(shape) else new_shape)
    return tuple(axes), tuple(new_shapes)
