"""Einsum execution on any backend: a `Program` of primitive calls.

A program is built once per (equation, shapes, path) and cached by the caller:

1. per operand: one reshape (split compositions, drop broadcast size-1 axes), the
   diagonals of repeated axes, and the sum of axes no other operand and not the
   output has;
2. per pairwise step: permute + reshape + ``matmul`` when an axis is contracted,
   a broadcasting ``multiply`` when nothing is (outer / Hadamard products), and
   multiply + sum (``"dot"``) for batched inner products;
3. a final permute to the output order and the reshape of output compositions.

An adapter whose every call costs much more than the work on small operands
(TensorFlow's eager ops: ~100 us a transpose) runs step 2 instead as one call of its
own einsum per pair (`pair_equations`, then `run_program` with them), the last one
writing the output's order.

Operands live in numbered slots; a step clears the slots it reads, so every
intermediate is released as soon as it has been used.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Sequence
from operator import is_
from typing import Any, NamedTuple

from tensorops._axes import same_shape
from tensorops._types import Backend

__all__ = [
    "Network",
    "Pair",
    "Prepare",
    "Program",
    "arrange_output",
    "build_program",
    "diagonal_view",
    "letter_equation",
    "moved",
    "pair_equations",
    "prepare_operand",
    "promote",
    "promote_slots",
    "run_pairs",
    "run_program",
]


class Prepare(NamedTuple):
    """What is done to one operand before the first pairwise step."""

    shape: tuple[int, ...] | None
    diagonals: tuple[tuple[int, int], ...]
    summed: tuple[int, ...]


class Pair(NamedTuple):
    """One pairwise step: slots ``left`` and ``right`` -> slot ``out``."""

    left: int
    right: int
    out: int
    mode: str  # "matmul", "multiply" (nothing summed) or "dot" (batched inner products)
    sum_left: tuple[int, ...]
    sum_right: tuple[int, ...]
    perm_left: tuple[int, ...] | None
    shape_left: tuple[int, ...] | None
    perm_right: tuple[int, ...] | None
    shape_right: tuple[int, ...] | None
    shape_out: tuple[int, ...] | None


class Program(NamedTuple):
    """The primitive calls of one einsum, for given shapes and path.

    ``axes`` names the axes of every slot as it is made (an operand once prepared, a
    step's result), and ``prepared`` those of each operand after its diagonals, which
    its `Prepare` sums index: what the back-pointers of a max / min einsum are read by.
    """

    prepare: tuple[Prepare | None, ...]
    pairs: tuple[Pair, ...]
    final: int
    perm: tuple[int, ...] | None
    shape: tuple[int, ...] | None
    axes: tuple[tuple[str, ...], ...] = ()
    prepared: tuple[tuple[str, ...], ...] = ()


def _prepare(
    axes: tuple[str, ...], shape: tuple[int, ...] | None, needed: set[str]
) -> tuple[Prepare | None, tuple[str, ...], tuple[str, ...]]:
    """What to do to one operand; its axes after it, and after its diagonals only."""
    if shape is None and needed.issuperset(axes) and len(set(axes)) == len(axes):
        return None, axes, axes  # nothing to do (most operands)
    current = list(axes)
    diagonals: list[tuple[int, int]] = []
    while len(set(current)) < len(current):
        first = next(i for i, axis in enumerate(current) if current.index(axis) != i)
        position = current.index(current[first])
        diagonals.append((position, first))
        axis = current[first]
        del current[first]
        del current[position]
        current.append(axis)
    summed = tuple([i for i, axis in enumerate(current) if axis not in needed])
    result = tuple([axis for axis in current if axis in needed])
    if shape is None and not diagonals and not summed:
        return None, result, tuple(current)
    return Prepare(shape, tuple(diagonals), summed), result, tuple(current)


def moved(perm: tuple[int, ...]) -> tuple[int, ...] | None:
    """`perm`, or None when it moves nothing (no call is made for it)."""
    return None if perm == tuple(range(len(perm))) else perm


def _reshape(target: tuple[int, ...], current: tuple[int, ...]) -> tuple[int, ...] | None:
    # the lengths are mostly the very objects of the sizes dict: `is` first, in C
    if len(target) == len(current) and all(map(is_, target, current)):
        return None
    return None if same_shape(target, current) else target


def _size(names: Sequence[str], sizes: dict[str, int]) -> int:
    total = 1
    for name in names:
        total *= sizes[name]
    return total


_Side = tuple[tuple[str, ...], tuple[int, ...]]  # the axes in their order, then a shape


def _layout(
    batch: tuple[str, ...],
    summed: tuple[str, ...],
    only: tuple[tuple[str, ...], tuple[str, ...]],
    sizes: dict[str, int],
) -> tuple[str, _Side, _Side, tuple[int, ...]]:
    """The mode of a pairwise step, each side's axis order and shape, and the shape made."""
    only_left, only_right = only
    batch_shape = tuple([sizes[a] for a in batch])
    if summed and batch and not only_left and not only_right:
        # Batched inner products: a matmul of (1, C) by (C, 1) matrices per batch element
        # is much slower than multiply + sum (NumPy loops over the batch in C).
        side = (*batch_shape, _size(summed, sizes))
        return "dot", (batch + summed, side), (batch + summed, side), batch_shape
    if summed:
        inner, rows, columns = [_size(axes, sizes) for axes in (summed, only_left, only_right)]
        return (
            "matmul",
            (batch + only_left + summed, (*batch_shape, rows, inner)),
            (batch + summed + only_right, (*batch_shape, inner, columns)),
            (*batch_shape, rows, columns),
        )
    left_sizes, right_sizes = [tuple([sizes[a] for a in axes]) for axes in only]
    return (
        "multiply",
        (batch + only_left, (*batch_shape, *left_sizes, *(1,) * len(only_right))),
        (batch + only_right, (*batch_shape, *(1,) * len(only_left), *right_sizes)),
        (*batch_shape, *left_sizes, *right_sizes),
    )


def _arrange(
    axes: tuple[str, ...], side: _Side, sizes: dict[str, int]
) -> tuple[tuple[int, ...] | None, tuple[int, ...] | None]:
    """The permutation taking `axes` to `side`'s order and the reshape to its shape (or None)."""
    order, shape = side
    return moved(tuple(map(axes.index, order))), _reshape(
        shape, tuple(map(sizes.__getitem__, order))
    )


def _pair(
    slots: tuple[int, int, int],
    left: tuple[str, ...],
    right: tuple[str, ...],
    keep: set[str],
    sizes: dict[str, int],
) -> tuple[Pair, tuple[str, ...]]:
    """The calls contracting two operands; ``keep`` = the axes needed after this step."""
    sum_left = tuple([i for i, a in enumerate(left) if a not in right and a not in keep])
    sum_right = tuple([i for i, a in enumerate(right) if a not in left and a not in keep])
    if sum_left:
        left = tuple([a for i, a in enumerate(left) if i not in sum_left])
    if sum_right:
        right = tuple([a for i, a in enumerate(right) if i not in sum_right])
    return _step(slots, (left, right), (sum_left, sum_right), keep, sizes)


def _step(
    slots: tuple[int, int, int],
    operands: tuple[tuple[str, ...], tuple[str, ...]],
    sums: tuple[tuple[int, ...], tuple[int, ...]],
    keep: set[str],
    sizes: dict[str, int],
) -> tuple[Pair, tuple[str, ...]]:
    """`_pair`'s step once each side's own axes are summed (`sums`, the positions summed)."""
    left, right = operands
    batch: list[str] = []
    summed: list[str] = []
    only_left: list[str] = []
    for a in left:  # each in the left operand's order
        (only_left if a not in right else batch if a in keep else summed).append(a)
    only = (tuple(only_left), tuple([a for a in right if a not in left]))
    common = tuple(batch)
    out_axes = common + only[0] + only[1]
    mode, left_side, right_side, produced = _layout(common, tuple(summed), only, sizes)
    perm_left, shape_left = _arrange(left, left_side, sizes)
    perm_right, shape_right = _arrange(right, right_side, sizes)
    shape_out = _reshape(tuple(map(sizes.__getitem__, out_axes)), produced)
    pair = Pair(*slots, mode, *sums, perm_left, shape_left, perm_right, shape_right, shape_out)
    return pair, out_axes


class Network(NamedTuple):
    """The operands and the output of an einsum, as its program is built from them.

    Attributes:
        axes: Per operand its elementary axes (repeats are diagonals).
        shapes: Per operand the reshape to those axes (None: none needed).
        output: The output's elementary axes.
        output_shape: The reshape of output compositions (None: none needed).
        sizes: Size of every axis.
    """

    axes: tuple[tuple[str, ...], ...]
    shapes: tuple[tuple[int, ...] | None, ...]
    output: tuple[str, ...]
    output_shape: tuple[int, ...] | None
    sizes: dict[str, int]


def _plain_pair(
    axes: tuple[tuple[str, ...], ...], output: set[str], sizes: dict[str, int]
) -> tuple[Pair, tuple[str, ...]] | None:
    """The one step of a pair that needs no preparing (the commonest einsum); else None.

    What `build_program` makes of such a pair, without its bookkeeping for longer paths:
    no axis repeated within an operand, and every axis in both operands or in the output.
    """
    first, second = axes
    left, right = set(first), set(second)
    if len(left) != len(first) or len(right) != len(second) or not output.issuperset(left ^ right):
        return None
    return _step((0, 1, 2), (first, second), ((), ()), output, sizes)


def build_program(network: Network, path: Sequence[tuple[int, ...]]) -> Program:
    """Compile the calls of an einsum along `path`, a validated contraction path."""
    axes, shapes, output, output_shape, sizes = network
    out_set = set(output)
    if len(axes) == 2 and shapes == (None, None) and len(path) == 1:
        plain = _plain_pair(axes, out_set, sizes)
        if plain is not None:
            only, made_axes = plain
            perm = moved(tuple(map(made_axes.index, output)))
            return Program((None, None), (only,), 2, perm, output_shape, (*axes, made_axes), axes)
    counts: dict[str, int] = {}
    for term in axes:
        for axis in set(term):
            counts[axis] = counts.get(axis, 0) + 1
    prepare: list[Prepare | None] = []
    live: list[tuple[str, ...]] = []
    prepared: list[tuple[str, ...]] = []
    for term, shape in zip(axes, shapes, strict=True):
        needed = {a for a in term if a in out_set or counts[a] > 1}
        step, result, diagonal = _prepare(term, shape, needed)
        prepare.append(step)
        live.append(result)
        prepared.append(diagonal)
    made = list(live)  # the axes of every slot, results appended as they are made
    slots: dict[int, tuple[str, ...]] = dict(enumerate(live))
    order = list(range(len(axes)))  # slot ids in the path's current-list order
    pairs: list[Pair] = []
    next_slot = len(axes)
    for entry in path:
        chosen = [order[p] for p in entry]
        for p in sorted(entry, reverse=True):
            del order[p]
        current = chosen[0]
        for other in chosen[1:]:
            keep = set(output)
            for slot, slot_axes in slots.items():
                if slot not in (current, other):
                    keep.update(slot_axes)
            pair, result = _pair(
                (current, other, next_slot), slots.pop(current), slots.pop(other), keep, sizes
            )
            pairs.append(pair)
            slots[next_slot] = result
            made.append(result)
            current, next_slot = next_slot, next_slot + 1
        order.append(current)
    (final,) = order
    final_axes = slots[final]
    perm = moved(tuple([final_axes.index(a) for a in output]))
    return Program(
        tuple(prepare), tuple(pairs), final, perm, output_shape, tuple(made), tuple(prepared)
    )


def run_program(
    backend: Backend,
    operands: Sequence[Any],
    program: Program,
    einsums: Sequence[Callable[[Any, Any], Any]] | None = None,
) -> Any:
    """Run ``program`` on ``operands`` with ``backend``'s primitives.

    With `einsums` (`pair_equations`' steps made the adapter's einsum calls) each pairwise
    step is one of them, and the last already writes the output's order.
    """
    slots = list(operands)
    for i, step in enumerate(program.prepare):
        if step is not None:
            slots[i] = prepare_operand(backend, slots[i], step)
    slots.extend([None] * len(program.pairs))
    run_pairs(backend, slots, program.pairs, einsums)
    x = slots[program.final]
    del slots
    return arrange_output(backend, x, program.perm if einsums is None else None, program.shape)


def letter_equation(terms: Sequence[Sequence[str]], output: Sequence[str]) -> str | None:
    """An einsum equation in letters for `terms` and `output`, lettered by first appearance.

    None when the terms hold more axes than there are letters (52).

    Examples:
        >>> letter_equation([("i", "j"), ("j", "k")], ("k", "i"))
        'ab,bc->ca'
    """
    axes = dict.fromkeys([axis for term in terms for axis in term])
    if len(axes) > len(string.ascii_letters):
        return None
    letters = dict(zip(axes, string.ascii_letters, strict=False))
    inputs = ",".join(["".join([letters[axis] for axis in term]) for term in terms])
    return f"{inputs}->{''.join([letters[axis] for axis in output])}"


def pair_equations(program: Program, output: tuple[str, ...]) -> tuple[str, ...] | None:
    """Each pairwise step of `program` as one einsum equation in letters, e.g. ``"ab,bc->ac"``.

    The step that makes the final slot writes `output`'s order, so that `program.perm`
    needs no call. None when there is no step, or a step has more than 52 axes.

    Examples:
        >>> sizes = {"i": 2, "j": 3, "k": 4, "l": 5}
        >>> terms = (("i", "j"), ("j", "k"), ("k", "l"))
        >>> network = Network(terms, (None,) * 3, ("l", "i"), None, sizes)
        >>> pair_equations(build_program(network, [(0, 1), (0, 1)]), ("l", "i"))
        ('ab,bc->ac', 'ab,ca->bc')
    """
    axes = program.axes
    equations = []
    for pair in program.pairs:
        out = output if pair.out == program.final else axes[pair.out]
        equation = letter_equation((axes[pair.left], axes[pair.right]), out)
        if equation is None:
            return None
        equations.append(equation)
    return tuple(equations) or None


def run_pairs(
    backend: Backend,
    slots: list[Any],
    pairs: Sequence[Pair],
    einsums: Sequence[Callable[[Any, Any], Any]] | None = None,
) -> None:
    """Run pairwise steps on `slots` in place; a step clears the two slots it reads.

    With `einsums` (one per step, see `pair_equations`) each step is that one call.
    """
    for i, pair in enumerate(pairs):
        a, b = slots[pair.left], slots[pair.right]
        slots[pair.left] = slots[pair.right] = None
        slots[pair.out] = _run_pair(backend, a, b, pair) if einsums is None else einsums[i](a, b)
        del a, b


def arrange_output(
    backend: Backend, x: Any, perm: tuple[int, ...] | None, shape: tuple[int, ...] | None
) -> Any:
    """`x` permuted to the output order and reshaped to its compositions (None: nothing)."""
    if perm is not None:
        x = backend.permute(x, perm)
    if shape is not None:
        x = backend.reshape(x, shape)
    return x


def prepare_operand(backend: Backend, x: Any, step: Prepare) -> Any:
    """One operand reshaped, its diagonals taken and its own axes summed, as `step` says."""
    x = diagonal_view(backend, x, step)
    if step.summed:
        x = _sum(backend, x, step.summed)
    return x


def diagonal_view(backend: Backend, x: Any, step: Prepare) -> Any:
    """One operand reshaped to its elementary axes and its diagonals taken (its sums not)."""
    if step.shape is not None:
        x = backend.reshape(x, step.shape)
    for axis1, axis2 in step.diagonals:
        x = backend.diagonal(x, axis1, axis2)
    return x


def _sum(backend: Backend, x: Any, axes: tuple[int, ...]) -> Any:
    dtype = x.dtype
    result = backend.reduce(x, "sum", axes)
    if not hasattr(result, "dtype"):  # NumPy sums object arrays to a Python object
        result = backend.scalar(result, x)
    if result.dtype != dtype:
        # numpy.einsum keeps the operand dtype (int8 stays int8, bool stays bool), while
        # sum() promotes small integers and booleans.
        result = backend.astype(result, dtype)
    return result


def _run_pair(backend: Backend, a: Any, b: Any, pair: Pair) -> Any:
    if pair.sum_left:
        a = _sum(backend, a, pair.sum_left)
    if pair.sum_right:
        b = _sum(backend, b, pair.sum_right)
    if pair.perm_left is not None:
        a = backend.permute(a, pair.perm_left)
    if pair.shape_left is not None:
        a = backend.reshape(a, pair.shape_left)
    if pair.perm_right is not None:
        b = backend.permute(b, pair.perm_right)
    if pair.shape_right is not None:
        b = backend.reshape(b, pair.shape_right)
    if pair.mode == "matmul":
        x = backend.matmul(a, b)
    elif pair.mode == "multiply":
        x = backend.multiply(a, b)
    else:
        x = _sum(backend, backend.multiply(a, b), (a.ndim - 1,))
    if pair.shape_out is not None:
        x = backend.reshape(x, pair.shape_out)
    return x


def promote(backend: Backend, operands: Sequence[Any]) -> list[Any]:
    """Cast the operands to their common dtype by the framework's own rules."""
    dtype = backend.result_type(operands)
    return [x if x.dtype == dtype else backend.astype(x, dtype) for x in operands]


def promote_slots(backend: Backend, slots: list[Any], positions: Sequence[int]) -> bool:
    """Cast the arrays at `positions` to their common dtype where they differ; whether any was."""
    dtypes = {slots[i].dtype for i in positions}
    if len(dtypes) < 2:
        return False
    for i, x in zip(positions, promote(backend, [slots[i] for i in positions]), strict=True):
        slots[i] = x
    return True
