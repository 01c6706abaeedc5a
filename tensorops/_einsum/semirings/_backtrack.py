"""The maximizing assignment of a max / min einsum, read back from its back-pointers.

A run with ``argmax=True`` records, per reduction, where its optimum is
(`tensorops._einsum.semirings._tropical.Pointers`). The steps are read in reverse: for every
output position, the index of each axis a step's result holds is known (the output's
own position, or what a later step decoded), so the step's back-pointer is gathered
there and split into the indices of the axes it reduced. What comes out is, for each
contracted axis, an integer array shaped like the output: the Viterbi path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tensorops._einsum.programs._execute import Program
from tensorops._einsum.semirings._tropical import Pointers
from tensorops._types import Backend

__all__ = ["decode"]


def decode(
    backend: Backend,
    program: Program,
    pointers: Pointers,
    sizes: dict[str, int],
    output: tuple[str, ...],
    like: Any,
) -> dict[str, Any]:
    """For each axis the program reduces, its index at the optimum of every output position.

    Args:
        backend: The arrays' family.
        program: The program run, with its slots' axes.
        pointers: What the run recorded.
        sizes: The size of every axis.
        output: The output's elementary axes, in order (its compositions apart).
        like: An array of the run (the device of the indices).

    Returns:
        Axis name -> integer array shaped like the elementary output.
    """
    known: dict[str, Any] = {}
    for position, axis in enumerate(output):
        shape = [1] * len(output)
        shape[position] = sizes[axis]
        known[axis] = backend.reshape(backend.arange(sizes[axis], like), tuple(shape))
    for number in reversed(range(len(program.pairs))):
        pair = program.pairs[number]
        own_left, own_right, step = pointers.pairs[number]
        left, right = program.axes[pair.left], program.axes[pair.right]
        kept_left = tuple(a for i, a in enumerate(left) if i not in pair.sum_left)
        kept_right = tuple(a for i, a in enumerate(right) if i not in pair.sum_right)
        made = program.axes[pair.out]
        if step is not None:
            summed = tuple(a for a in kept_left if a in kept_right and a not in made)
            _split(backend, known, step, made, summed, sizes)
        if own_left is not None:
            reduced = tuple(left[i] for i in pair.sum_left)
            _split(backend, known, own_left, kept_left, reduced, sizes)
        if own_right is not None:
            reduced = tuple(right[i] for i in pair.sum_right)
            _split(backend, known, own_right, kept_right, reduced, sizes)
    for slot, pointer in pointers.prepare.items():
        step_prepare = program.prepare[slot]
        assert step_prepare is not None
        prepared = program.prepared[slot]
        reduced = tuple(prepared[i] for i in step_prepare.summed)
        _split(backend, known, pointer, program.axes[slot], reduced, sizes)
    return {axis: index for axis, index in known.items() if axis not in output}


def _split(
    backend: Backend,
    known: dict[str, Any],
    pointer: Any,
    axes: Sequence[str],
    reduced: Sequence[str],
    sizes: dict[str, int],
) -> None:
    """Gather `pointer` (over `axes`) at the known indices; split it into `reduced`'s."""
    if axes:
        flat: Any = 0
        for axis in axes:
            flat = flat * sizes[axis] + known[axis]
        position = backend.take(pointer, flat)
    else:
        position = pointer
    for axis in reversed(reduced):
        size = sizes[axis]
        known[axis] = position % size
        # a 0-d divisor of the family: paddle's `0-d tensor // int` has shape (1,), not ()
        # (PFCCLab/PaddleAPITest#204 records it for paddle.Tensor.__floordiv__)
        position = position // backend.full((), size, position)
