"""Einsum equations bound to shapes: the size of every axis, checked.

`bind_equation` resolves each operand's dimensions with the axis resolver of
`tensorops._axes` (compositions such as ``(h d)`` with ``h=8``), checks that
each axis has one length across operands, and applies NumPy's broadcasting of
``...`` and of size-1 axes: a size-1 axis that meets a larger one is dropped from
its operand, which is constant along it. Equations of plain axes whose lengths
agree exactly (every network a planner is given) take a one-pass path that
builds no `Notation`.
"""

from __future__ import annotations

import functools
import string
from collections.abc import Sequence
from typing import Any, NamedTuple

from tensorops._axes import DOTS_PREFIX, Dim, Slot, check_lengths, resolve_dims
from tensorops._einsum.equations._notation import Plain, parse_equation, plain_axes, render_axes
from tensorops._errors import ShapeError, Span
from tensorops._staging.sizes import is_run_time, known_as, require_equal, same_length, same_shape

__all__ = ["Bound", "Lettered", "bind_equation", "bind_lettered", "bind_unlettered"]


class Bound(NamedTuple):
    """An equation bound to shapes: sizes of every axis and each operand's elementary form.

    Attributes:
        equation: The equation text as given.
        spaced: Whether it is in the spaced (einops) spelling.
        terms: Per operand, its elementary axes as written (``...`` expanded).
        output: The elementary axes of the output, in order.
        output_dims: The output's dimensions as groups of elementary axes, when some
            dimension composes several (``(h d)``); None when each is one axis.
        sizes: Each axis with its size after broadcasting, in order of appearance
            (not to be modified: plans share it).
        axes: Per operand, its elementary axes after dropping broadcast (size-1) ones;
            an axis repeated within an operand stays repeated (a diagonal).
        shapes: Per operand, the shape with those axes (None: the input shape as is).
    """

    equation: str
    spaced: bool
    terms: tuple[tuple[str, ...], ...]
    output: tuple[str, ...]
    output_dims: tuple[tuple[str, ...], ...] | None
    sizes: dict[str, int]
    axes: tuple[tuple[str, ...], ...]
    shapes: tuple[tuple[int, ...] | None, ...]

    @property
    def normalized(self) -> str:
        """The equation with explicit output, in its own spelling (``...`` expanded)."""
        comma, arrow = (", ", " -> ") if self.spaced else (",", "->")
        terms = comma.join(render_axes(term, self.spaced) for term in self.terms)
        return f"{terms}{arrow}{render_axes(self.output, self.spaced)}"


class _Owner(NamedTuple):
    """Where an axis got its length: the operand, the length, the position in the text."""

    operand: int
    size: int
    span: Span


def bind_equation(
    equation: str,
    shapes: tuple[tuple[int, ...], ...],
    lengths: tuple[tuple[str, Any], ...],
    spaced: bool | None = None,
) -> Bound:
    """Resolve the sizes of every axis of `equation` for `shapes`.

    Not cached itself: its callers cache the plans made from it.

    Args:
        equation: The equation.
        shapes: Each operand's shape.
        lengths: Lengths of composed axes the caller gave.
        spaced: As for `parse_equation`.

    Raises:
        TensorOpsError: The equation is malformed or does not fit the shapes / lengths.
    """
    if not lengths:
        lettered = bind_lettered(equation, shapes, spaced)
        if lettered is not None:
            return lettered.bound
    return bind_unlettered(equation, shapes, lengths, spaced)


def bind_unlettered(
    equation: str,
    shapes: tuple[tuple[int, ...], ...],
    lengths: tuple[tuple[str, Any], ...],
    spaced: bool | None = None,
) -> Bound:
    """`bind_equation` of an equation `bind_lettered` has not taken (it is not tried again)."""
    if not lengths:
        plain = plain_axes(equation, spaced)
        if plain is not None:
            bound = _bind_plain(equation, plain, shapes)
            if bound is not None:
                return bound
    return _bind_general(equation, shapes, lengths, spaced)


class Lettered(NamedTuple):
    """An equation of plain axes bound to shapes, and written in ASCII letters.

    Attributes:
        bound: The equation bound, as `bind_equation` binds it.
        inputs: Each operand's axes as letters, lettered by first appearance.
        output: The output's axes as letters.
        elements: The product of the sizes of all distinct axes.
    """

    bound: Bound
    inputs: tuple[str, ...]
    output: str
    elements: int

    @property
    def equation(self) -> str:
        """The equation in letters, as a framework's einsum takes it: ``"ab,bc->ac"``."""
        return f"{','.join(self.inputs)}->{self.output}"


def bind_lettered(
    equation: str, shapes: tuple[tuple[int, ...], ...], spaced: bool | None
) -> Lettered | None:
    """Bind an equation of plain axes with an explicit output in one pass; else None.

    The cold path of the commonest einsum: names read, checked, bound to lengths that
    are ints and agree exactly, and lettered, without building the `Plain` names first.
    It takes a subset of what `_bind_plain` takes (no implicit output, no compact
    equation with spaces, at most 52 axes) and binds it the same (tests/test_einsum_notation.py);
    anything else is None, for `bind_equation`'s other paths.
    """
    left, arrow, right = equation.partition("->")
    if not arrow or "->" in right or "," in right:
        return None
    texts = left.split(",")
    if len(texts) != len(shapes):
        return None
    terms: list[Any]
    output: Sequence[str]
    if not spaced and " " not in equation:  # compact: every character one axis
        joined = left.replace(",", "")
        if not ((joined.isalpha() or not joined) and (right.isalpha() or not right)):
            return None
        terms, output, spaced = texts, right, False
    else:  # spaced: every word an identifier neither starting nor ending with '_'
        if spaced is False or not equation.isascii():
            return None
        terms, output = [text.split() for text in texts], right.split()
        if spaced is None:
            if len(output) < 2 and all(len(words) < 2 for words in terms):
                return None  # compact with spaces (``"ij, jk -> ik"``): `plain_axes`
            spaced = True
        edges = "_" in equation
    letters: dict[str, str] = {}
    sizes: dict[str, int] = {}
    lettered: list[str] = []
    elements = 1
    for names, shape in zip(terms, shapes):  # noqa: B905 (lengths checked above)
        if len(names) != len(shape):
            return None
        term = ""
        for name, size in zip(names, shape):  # noqa: B905
            letter = letters.get(name)
            if letter is None:
                # __class__: Dynamo gives int as the type of a symbolic size (`_bind_plain`'s)
                if size.__class__ is not int or len(letters) == len(_LETTERS):
                    return None
                if spaced and not (
                    name.isidentifier() and not (edges and (name[0] == "_" or name[-1] == "_"))
                ):
                    return None
                letter = letters[name] = _LETTERS[len(letters)]
                sizes[name] = size
                elements *= size
            elif sizes[name] != size:
                return None
            term += letter
        lettered.append(term)
    out = ""
    for name in output:
        letter = letters.get(name)
        if letter is None or letter in out:
            return None
        out += letter
    inputs = tuple([tuple(names) for names in terms])
    unchanged = (None,) * len(inputs)
    bound = Bound(equation, spaced, inputs, tuple(output), None, sizes, inputs, unchanged)
    return Lettered(bound, tuple(lettered), out, elements)


_LETTERS = string.ascii_letters


def _bind_plain(equation: str, plain: Plain, shapes: tuple[tuple[int, ...], ...]) -> Bound | None:
    """Bind an equation of plain axes whose lengths agree exactly; None for anything else.

    The hot path of cold planning: one pass over names and lengths. Broadcasting,
    a rank that does not fit and a length mismatch are left to `_bind_general`,
    which broadcasts or says where the error is.
    """
    terms = plain.inputs
    if len(terms) != len(shapes):
        return None
    sizes: dict[str, int] = {}
    # lengths are checked first; zip's strict= would add 0.4 µs a call to the hot path
    for names, shape in zip(terms, shapes):  # noqa: B905
        if len(names) != len(shape):
            return None
        for name, size in zip(names, shape):  # noqa: B905
            known = sizes.setdefault(name, size)
            # `is`: a symbolic length (torch.compile) is not compared with itself; two
            # lengths known only when the graph runs are bound by `_bind_general`
            if known is not size and (is_run_time(known) or is_run_time(size) or known != size):
                return None
    unchanged = (None,) * len(terms)
    return Bound(equation, plain.spaced, terms, plain.output, None, sizes, terms, unchanged)


def _bind_general(
    equation: str,
    shapes: tuple[tuple[int, ...], ...],
    lengths: tuple[tuple[str, Any], ...],
    spaced: bool | None,
) -> Bound:
    """`bind_equation` of any equation, through its `Notation`: every form, every error."""
    notation = parse_equation(equation, tuple(len(shape) for shape in shapes), spaced)
    given = check_lengths(lengths)
    if given:
        known = {slot.name for term in notation.inputs for dim in term for slot in dim.slots}
        for name in given:
            if name not in known:
                raise ShapeError(
                    f"axis length {name}={given[name]} is given but {name!r} is not an input axis",
                    pattern=equation,
                    hint="remove the unused keyword argument",
                )
    sizes: dict[str, int] = {}
    owners: dict[str, _Owner] = {}
    elementary: list[list[tuple[str, int]]] = []
    for number, (dims, shape) in enumerate(zip(notation.inputs, shapes, strict=True)):
        items: list[tuple[str, int]] = []
        local: dict[str, int] = {}
        for dim, resolved in zip(dims, _resolve(equation, dims, shape, given), strict=True):
            for slot, size in resolved:
                axis = slot.name or ""
                first = local.setdefault(axis, size)
                require_equal(
                    first,
                    size,
                    functools.partial(_diagonal, equation, axis, number, first, size, dim.span),
                )
                # an axis seen before with its size: nothing to do
                if axis not in sizes or same_length(sizes[axis], size) is not True:
                    _unify(equation, sizes, owners, axis, _Owner(number, size, dim.span), shapes)
                items.append((axis, size))
        elementary.append(items)
    axes, new_shapes = _drop_broadcast(elementary, sizes, shapes)
    terms = tuple(tuple(axis for axis, _ in items) for items in elementary)
    output = notation.output
    output_dims = None
    if any(len(dim.slots) != 1 for dim in output):
        output_dims = tuple(tuple(slot.name or "" for slot in dim.slots) for dim in output)
    return Bound(
        equation,
        notation.spaced,
        terms,
        notation.output_axes,
        output_dims,
        sizes,
        axes,
        new_shapes,
    )


def _resolve(
    text: str, dims: tuple[Dim, ...], shape: tuple[int, ...], given: dict[str, int]
) -> list[list[tuple[Slot, int]]]:
    """`tensorops._axes.resolve_dims`; plain axes take their dimension's length directly.

    Plain axes (one slot each, no length given or written) are the hot path of cold
    planning; the resolver gives them the same lengths.
    """
    if given or any(len(dim.slots) != 1 or dim.slots[0].length is not None for dim in dims):
        return resolve_dims(text, dims, shape, given)
    return [[(dim.slots[0], length)] for dim, length in zip(dims, shape, strict=True)]


def _diagonal(
    equation: str, axis: str, number: int, first: Any, size: Any, span: Span
) -> ShapeError:
    return ShapeError(
        f"axis {axis!r} is repeated in operand {number} with different "
        f"lengths {first} and {size}: a diagonal needs equal lengths",
        pattern=equation,
        span=span,
    )


def _unify(
    text: str,
    sizes: dict[str, int],
    owners: dict[str, _Owner],
    axis: str,
    owner: _Owner,
    shapes: tuple[tuple[int, ...], ...],
) -> None:
    """Record `axis` of `owner.size`; size-1 broadcasts, other mismatches are errors.

    A length known only when the graph runs is bound to the axis's length by
    construction: a known length wins (it gives the plan constants), and the two are
    checked when the graph runs. A known 1 broadcasts against it.
    """
    previous = sizes.get(axis)
    size = owner.size
    same = None if previous is None else same_length(previous, size)
    if previous is None or same is True:
        sizes[axis] = size
        owners.setdefault(axis, owner)
        return
    if _is_one(previous) or _is_one(size):
        if not _is_one(size):
            sizes[axis] = size
            owners[axis] = owner
        return
    first = owners[axis]

    def mismatch() -> ShapeError:
        name = "'...'" if axis[0] == DOTS_PREFIX else repr(axis)
        return ShapeError(
            f"axis {name} has length {first.size} in operand {first.operand} "
            f"(shape {shapes[first.operand]}) but length {size} in operand {owner.operand} "
            f"(shape {shapes[owner.operand]})",
            pattern=text,
            span=owner.span,
        )

    require_equal(previous, size, mismatch)
    if is_run_time(previous) and not is_run_time(size):
        sizes[axis] = size
        owners[axis] = owner


def _is_one(size: Any) -> bool:
    return known_as(size, 1)


def _drop_broadcast(
    elementary: list[list[tuple[str, int]]],
    sizes: dict[str, int],
    shapes: tuple[tuple[int, ...], ...],
) -> tuple[tuple[tuple[str, ...], ...], tuple[tuple[int, ...] | None, ...]]:
    """Drop size-1 axes that broadcast against a larger size: the operand is constant there."""
    axes: list[tuple[str, ...]] = []
    new_shapes: list[tuple[int, ...] | None] = []
    for items, shape in zip(elementary, shapes, strict=True):
        # bound by construction: an axis whose length is known only when the graph runs is
        # kept (it is not a known 1 against a larger length)
        kept = [(axis, size) for axis, size in items if not _is_one(size) or _is_one(sizes[axis])]
        axes.append(tuple(axis for axis, _ in kept))
        new_shape = tuple(size for _, size in kept)
        new_shapes.append(None if same_shape(new_shape, tuple(shape)) else new_shape)
    return tuple(axes), tuple(new_shapes)
