"""The cost model of einsum contraction paths.

The model is opt_einsum's, so that its numbers can be compared one for one: a step
that contracts ``k`` operands over the axes ``idx`` costs
``prod(sizes[idx]) * (max(1, k - 1) + inner)``, where ``inner`` tells whether the
step sums an axis away. A path is the NumPy / opt_einsum list of tuples: each
tuple names positions in the current operand list, those operands are removed and
the step's result is appended at the end.

:class:`BitNetwork` is the same model on bitsets (Python ints, one bit per axis),
which the path planners use because it is several times faster than sets of
strings; it also records the path a planner builds.
"""

from __future__ import annotations

import heapq
import operator
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "BitNetwork",
    "Step",
    "bits_of",
    "compute_size",
    "contraction_steps",
    "flop_count",
    "largest_intermediate",
    "naive_flops",
    "total_flops",
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
        flops: Cost of the step (see :func:`flop_count`).
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
        One :class:`Step` per path entry.

    Raises:
        ValueError: If the path is malformed, leaves more than one operand, or the
            last step lacks an axis of ``output``.
    """
    if not inputs:
        raise ValueError("a contraction needs at least one operand")
    if not path:
        raise ValueError("the path is empty; it needs at least one step")
    remaining = [tuple(axes) for axes in inputs]
    output_set = frozenset(output)
    steps: list[Step] = []
    for number, entry in enumerate(path):
        positions = _check_entry(entry, len(remaining), number)
        operands = tuple(remaining[p] for p in positions)
        for position in sorted(positions, reverse=True):
            del remaining[position]
        # dict keys keep first-appearance order, which is deterministic for str axes
        union = dict.fromkeys(axis for axes in operands for axis in axes)
        if number == len(path) - 1:
            missing = [axis for axis in output if axis not in union]
            if missing:
                raise ValueError(f"the last path step lacks output axes {missing}")
            result = tuple(output)
        else:
            kept = output_set.union(*remaining)
            result = tuple(axis for axis in union if axis in kept)
        result_set = frozenset(result)
        summed = tuple(axis for axis in union if axis not in result_set)
        flops = flop_count(union, bool(summed), len(positions), size_dict)
        steps.append(
            Step(positions, operands, result, summed, flops, compute_size(result, size_dict))
        )
        remaining.append(result)
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


def bits_of(mask: int) -> list[int]:
    """Return the single-bit masks of ``mask``, lowest first."""
    found = []
    while mask:
        low = mask & -mask
        found.append(low)
        mask ^= low
    return found


class BitNetwork:
    """A network on bitsets (one bit per axis), and a path being built for it.

    The path is kept in static single assignment form: input ``i`` is id ``i``
    and the result of step ``k`` is id ``len(inputs) + k``.

    Args:
        inputs: Axes of each operand.
        output: Axes of the result.
        size_dict: Size of every axis.
        limit: Most elements an intermediate may have (None: no limit).

    Attributes:
        axes: Axis names; axis ``axes[i]`` is bit ``1 << i``.
        inputs: Bitset of each operand.
        output: Bitset of the output.
        dangling: For each operand, its axes that no other operand and not the
            output has, which it may sum on its own before any pairwise step.
        limit: The memory limit.
        ssa: The steps planned so far.
        size_cache: Sizes of the bitsets seen so far (read it directly in hot loops).
    """

    __slots__ = ("axes", "dangling", "inputs", "limit", "output", "size_cache", "ssa")

    def __init__(
        self,
        inputs: Sequence[tuple[str, ...]],
        output: tuple[str, ...],
        size_dict: Mapping[str, int],
        limit: int | None = None,
    ) -> None:
        bit: dict[str, int] = {}
        self.inputs: list[int] = []
        for axes in inputs:
            mask = 0
            for axis in axes:
                flag = bit.get(axis)
                if flag is None:
                    flag = bit[axis] = 1 << len(bit)
                mask |= flag
            self.inputs.append(mask)
        self.output = 0
        for axis in output:
            self.output |= bit.setdefault(axis, 1 << len(bit))
        self.axes: tuple[str, ...] = tuple(bit)
        # a path over an empty axis costs nothing whatever its order; size 1 keeps
        # the planners' divisions defined and their choices sensible
        self.size_cache: dict[int, int] = {mask: max(1, size_dict[a]) for a, mask in bit.items()}
        self.size_cache[0] = 1
        once = twice = 0
        for mask in self.inputs:
            twice |= once & mask
            once |= mask
        alone = once & ~twice & ~self.output
        self.dangling = [mask & alone for mask in self.inputs]
        self.limit = limit
        self.ssa: list[tuple[int, ...]] = []

    def size(self, mask: int) -> int:
        """Return the number of elements of a tensor with the axes ``mask``."""
        sizes = self.size_cache
        size = sizes.get(mask)
        if size is None:
            size = 1
            for low in bits_of(mask):
                size *= sizes[low]
            sizes[mask] = size
        return size

    def fits(self, mask: int) -> bool:
        """Tell whether an intermediate with axes ``mask`` respects the memory limit."""
        return self.limit is None or self.size(mask) <= self.limit

    def emit(self, ids: Sequence[int]) -> int:
        """Append a step contracting the SSA ``ids``; return the id of its result."""
        self.ssa.append(tuple(sorted(ids)))
        return len(self.inputs) + len(self.ssa) - 1

    def pair_cost(self, ua: int, da: int, ub: int, db: int, result: int) -> tuple[int, int]:
        """Return the cheapest cost of a pairwise step and which inputs to reduce first.

        Args:
            ua: Axes of the first operand.
            da: Its axes that can be summed on their own (only for inputs, else 0).
            ub: Axes of the second operand.
            db: Same as ``da`` for the second operand.
            result: Axes of the step's result.

        Returns:
            The cost, and a flag set: bit 1 to reduce the first, bit 2 the second.
        """
        size = self.size
        best, best_flags = size(ua | ub) * (2 if ua | ub != result else 1), 0
        for flags in (1, 2, 3):
            a, b, extra = ua, ub, 0
            if flags & 1:
                if not da or not self.fits(ua & ~da):
                    continue
                a, extra = ua & ~da, 2 * size(ua)
            if flags & 2:
                if not db or not self.fits(ub & ~db):
                    continue
                b, extra = ub & ~db, extra + 2 * size(ub)
            cost = size(a | b) * (2 if a | b != result else 1) + extra
            if cost < best:
                best, best_flags = cost, flags
        return best, best_flags

    def contract(self, a: int, ua: int, b: int, ub: int, result: int) -> int:
        """Emit the cheapest steps contracting SSA ids ``a`` and ``b``; return the result id."""
        n = len(self.inputs)
        da = self.dangling[a] if a < n else 0
        db = self.dangling[b] if b < n else 0
        if da or db:
            _, flags = self.pair_cost(ua, da, ub, db, result)
            if flags & 1:
                a = self.emit((a,))
            if flags & 2:
                b = self.emit((b,))
        return self.emit((a, b))

    def join(self, items: Sequence[tuple[int, int]]) -> None:
        """Contract the operands ``(ssa id, axes)`` pairwise, smallest first.

        When the next pairwise result would break the memory limit, all remaining
        operands are contracted in one step instead.
        """
        out, count = self.output, {1 << i: 0 for i in range(len(self.axes))}
        for _, mask in items:
            for low in bits_of(mask & ~out):
                count[low] += 1
        heap = [(self.size(mask), ident, mask) for ident, mask in items]
        heapq.heapify(heap)
        while len(heap) > 1:
            _, a, ua = heapq.heappop(heap)
            _, b, ub = heapq.heappop(heap)
            result = (ua | ub) & out
            for low in bits_of((ua | ub) & ~out):
                count[low] -= (1 if ua & low else 0) + (1 if ub & low else 0)
                if count[low]:
                    result |= low
                    count[low] += 1
            if heap and not self.fits(result):
                self.emit([a, b, *(ident for _, ident, _ in heap)])
                return
            heapq.heappush(heap, (self.size(result), self.contract(a, ua, b, ub, result), result))

    def components(self) -> list[list[int]]:
        """Group operands that are linked by summed axes, ordered by first operand."""
        parent = list(range(len(self.inputs)))

        def root(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        owner: dict[int, int] = {}
        for i, mask in enumerate(self.inputs):
            for low in bits_of(mask & ~self.output):
                ri, rj = root(i), root(owner.setdefault(low, i))
                parent[max(ri, rj)] = min(ri, rj)
        groups: dict[int, list[int]] = {}
        for i in range(len(parent)):
            groups.setdefault(root(i), []).append(i)
        return list(groups.values())

    def cost(self) -> int:
        """Return the cost of the path planned so far (which must be complete)."""
        masks, out = list(self.inputs), self.output
        count = {1 << i: 0 for i in range(len(self.axes))}
        for mask in masks:
            for low in bits_of(mask):
                count[low] += 1
        total = 0
        for step in self.ssa:
            union = 0
            for ident in step:
                union |= masks[ident]
                for low in bits_of(masks[ident]):
                    count[low] -= 1
            result = (union & out) | sum(low for low in bits_of(union & ~out) if count[low])
            for low in bits_of(result):
                count[low] += 1
            masks.append(result)
            total += self.size(union) * (max(1, len(step) - 1) + (union != result))
        return total

    def linear_path(self) -> list[tuple[int, ...]]:
        """Return the path planned so far in the NumPy / opt_einsum convention."""
        n = len(self.inputs)
        alive = list(range(n))  # stays sorted: new ids are the largest
        path: list[tuple[int, ...]] = []
        for number, step in enumerate(self.ssa):
            # list.index, not bisect: torch.compile traces planning and cannot trace bisect.
            positions = [alive.index(ident) for ident in step]
            for position in sorted(positions, reverse=True):
                del alive[position]
            alive.append(n + number)
            path.append(tuple(positions))
        return path
