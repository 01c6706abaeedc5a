"""The cost model of einsum contraction paths.

The model is opt_einsum's, so that its numbers can be compared one for one: a step
that contracts ``k`` operands over the axes ``idx`` costs
``prod(sizes[idx]) * (max(1, k - 1) + inner)``, where ``inner`` tells whether the
step sums an axis away. A path is the NumPy / opt_einsum list of tuples: each
tuple names positions in the current operand list, those operands are removed and
the step's result is appended at the end.

`tensorops._einsum.planning._bitnet` holds the same model on bitsets, for the planners.
"""

from __future__ import annotations

import operator
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

__all__ = [
    "SlicedSteps",
    "Step",
    "compute_size",
    "contraction_steps",
    "flop_count",
    "largest_intermediate",
    "naive_flops",
    "sliced_contraction_steps",
    "sliced_network",
    "total_flops",
    "total_writes",
]


def compute_size(indices: Iterable[str], size_dict: Mapping[str, int]) -> int:
    """Return the number of elements of a tensor with the given axes.

    Args:
        indices: Axis names.
        size_dict: Size of every axis.

    Returns:
        The product of the sizes (1 for no axes).
    """
    size = 1
    for index in indices:
        size *= size_dict[index]
    return size


def flop_count(
    idx_contraction: Collection[str], inner: bool, num_terms: int, size_dict: Mapping[str, int]
) -> int:
    """Return the cost of one contraction step, as opt_einsum counts it.

    Args:
        idx_contraction: All axes of the operands of the step.
        inner: Whether the step sums at least one axis away.
        num_terms: How many operands the step contracts.
        size_dict: Size of every axis.

    Returns:
        ``compute_size(idx_contraction) * (max(1, num_terms - 1) + inner)``.

    Examples:
        >>> flop_count("abc", True, 2, {"a": 2, "b": 3, "c": 5})
        60
    """
    op_factor = max(1, num_terms - 1) + (1 if inner else 0)
    return compute_size(idx_contraction, size_dict) * op_factor


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a contraction path.

    Attributes:
        operands: Positions, in the current operand list, of the operands contracted
            (in the order the path names them).
        inputs: Axes of those operands, in the same order.
        result: Axes of the step's result.
        summed: Axes summed away in this step.
        flops: Cost of the step (see `flop_count`).
        size: Number of elements of the result.
    """

    operands: tuple[int, ...]
    inputs: tuple[tuple[str, ...], ...]
    result: tuple[str, ...]
    summed: tuple[str, ...]
    flops: int
    size: int


def _check_entry(entry: Sequence[int], count: int, number: int) -> tuple[int, ...]:
    positions = []
    for position in entry:
        try:
            if isinstance(position, bool):
                raise TypeError
            positions.append(operator.index(position))  # NumPy integers are fine too
        except TypeError:
            raise ValueError(
                f"path step {number} has a position that is not an int: {position!r}"
            ) from None
        if not 0 <= positions[-1] < count:
            raise ValueError(
                f"path step {number} names operand {position}, but only {count} "
                f"operand(s) remain (positions 0 to {count - 1})"
            )
    if not positions:
        raise ValueError(f"path step {number} contracts no operand")
    if len(set(positions)) != len(positions):
        raise ValueError(f"path step {number} names an operand twice: {tuple(positions)}")
    return tuple(positions)


def _step(
    positions: tuple[int, ...],
    operands: tuple[tuple[str, ...], ...],
    output: tuple[str, ...] | None,
    holders: Mapping[str, int],
    size_dict: Mapping[str, int],
) -> Step:
    """One step of `contraction_steps`: its result is `output` for the last step (else None)."""
    # dict keys keep first-appearance order, which is deterministic for str axes
    union = dict.fromkeys(axis for axes in operands for axis in axes)
    if output is not None:
        missing = [axis for axis in output if axis not in union]
        if missing:
            raise ValueError(f"the last path step lacks output axes {missing}")
        result = tuple(output)
    else:
        result = tuple(axis for axis in union if holders[axis] > 0)
    result_set = frozenset(result)
    summed = tuple(axis for axis in union if axis not in result_set)
    flops = flop_count(union, bool(summed), len(positions), size_dict)
    return Step(positions, operands, result, summed, flops, compute_size(result, size_dict))


def contraction_steps(
    inputs: Sequence[tuple[str, ...]],
    output: tuple[str, ...],
    size_dict: Mapping[str, int],
    path: Sequence[Sequence[int]],
) -> tuple[Step, ...]:
    """Replay a contraction path and describe each of its steps.

    Intermediate results keep their axes in order of first appearance across the
    step's inputs; the last step's result is ordered as ``output``. An axis is
    summed in the first step after which no remaining operand and not the output
    has it.

    Args:
        inputs: Axes of each operand (distinct within an operand).
        output: Axes of the result.
        size_dict: Size of every axis.
        path: The path, in the NumPy / opt_einsum convention.

    Returns:
        One `Step` per path entry.

    Raises:
        ValueError: If the path is malformed, leaves more than one operand, or the
            last step lacks an axis of ``output``.
    """
    if not inputs:
        raise ValueError("a contraction needs at least one operand")
    if not path:
        raise ValueError("the path is empty; it needs at least one step")
    remaining = [tuple(axes) for axes in inputs]
    # per axis, how many remaining operands hold it, the output counting as one: an
    # axis is kept by a step while some other operand or the output still has it
    # (a plain dict, counted by hand: Counter's update / subtract cost a call each)
    holders: dict[str, int] = {}
    for axes in (output, *remaining):
        for axis in axes:
            holders[axis] = holders.get(axis, 0) + 1
    steps: list[Step] = []
    for number, entry in enumerate(path):
        positions = _check_entry(entry, len(remaining), number)
        operands = tuple(remaining[p] for p in positions)
        for position in sorted(positions, reverse=True):
            for axis in remaining.pop(position):
                holders[axis] -= 1
        last = number == len(path) - 1
        step = _step(positions, operands, output if last else None, holders, size_dict)
        steps.append(step)
        for axis in step.result:
            holders[axis] += 1
        remaining.append(step.result)
    if len(remaining) != 1:
        raise ValueError(
            f"the path leaves {len(remaining)} operands uncontracted; it must end with one"
        )
    return tuple(steps)


def total_flops(steps: Iterable[Step]) -> int:
    """Return the summed cost of the steps."""
    return sum(step.flops for step in steps)


def largest_intermediate(steps: Iterable[Step]) -> int:
    """Return the number of elements of the largest step result (1 for no steps)."""
    return max((step.size for step in steps), default=1)


def naive_flops(
    inputs: Sequence[tuple[str, ...]], output: tuple[str, ...], size_dict: Mapping[str, int]
) -> int:
    """Return the cost of contracting all operands in one step, as opt_einsum counts it.

    opt_einsum counts the step as inner when some axis is shared by two operands,
    whether or not it is summed; the same rule is kept so that the numbers agree.

    Args:
        inputs: Axes of each operand.
        output: Axes of the result (unused by the count, kept for symmetry).
        size_dict: Size of every axis.

    Returns:
        The cost.
    """
    del output
    indices = dict.fromkeys(axis for axes in inputs for axis in axes)
    inner = sum(len(axes) for axes in inputs) > len(indices)
    return flop_count(indices, inner, len(inputs), size_dict)


def total_writes(steps: Iterable[Step]) -> int:
    """Return the elements written by the steps: the summed sizes of their results."""
    return sum(step.size for step in steps)


def sliced_network(
    inputs: Sequence[tuple[str, ...]], output: tuple[str, ...], sliced_axes: Collection[str]
) -> tuple[list[tuple[str, ...]], tuple[str, ...]]:
    """Return the network of one slice: the axes of every operand and of the output but the sliced.

    Args:
        inputs: Axes of each operand.
        output: Axes of the result.
        sliced_axes: The axes fixed to one value per slice.

    Returns:
        The operands' axes and the output's, in their order, without the sliced axes.
    """
    return (
        [tuple(axis for axis in axes if axis not in sliced_axes) for axes in inputs],
        tuple(axis for axis in output if axis not in sliced_axes),
    )


class SlicedSteps(NamedTuple):
    """A contraction path run slice by slice, and what it costs.

    Attributes:
        steps: The steps of one slice: the path replayed on `sliced_network`
            (its FLOPs and sizes are per slice).
        slices: How many slices run: the product of the sliced axes' sizes (1 for none).
        flops: The cost of all slices, ``total_flops(steps) * slices`` (summing the
            slices' results is not counted, as opt_einsum does not count it either).
        largest_intermediate: The most elements of a step result in one slice,
            the last step excepted (1 for one step): what a memory limit caps.
    """

    steps: tuple[Step, ...]
    slices: int
    flops: int
    largest_intermediate: int


def sliced_contraction_steps(
    inputs: Sequence[tuple[str, ...]],
    output: tuple[str, ...],
    size_dict: Mapping[str, int],
    path: Sequence[Sequence[int]],
    sliced_axes: Collection[str] = (),
) -> SlicedSteps:
    """Replay a path on one slice of the network and count the cost of all slices.

    Args:
        inputs: Axes of each operand (distinct within an operand).
        output: Axes of the result.
        size_dict: Size of every axis.
        path: The path, in the NumPy / opt_einsum convention.
        sliced_axes: Axes fixed to each of their values in turn.

    Returns:
        The steps of one slice, the number of slices, the FLOPs of all slices and
        the largest intermediate of a slice.

    Raises:
        ValueError: As `contraction_steps`.

    Examples:
        >>> ring = [("a", "b"), ("b", "c"), ("c", "a")]
        >>> sliced = sliced_contraction_steps(ring, (), dict.fromkeys("abc", 10),
        ...                                   [(0, 1), (0, 1)], ["a"])
        >>> sliced.slices, sliced.flops, sliced.largest_intermediate
        (10, 2200, 10)
    """
    sliced_inputs, sliced_output = sliced_network(inputs, output, sliced_axes)
    steps = contraction_steps(sliced_inputs, sliced_output, size_dict, path)
    slices = compute_size(sliced_axes, size_dict)
    largest = max((step.size for step in steps[:-1]), default=1)
    return SlicedSteps(steps, slices, total_flops(steps) * slices, largest)
