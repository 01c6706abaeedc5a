"""The cost model of :mod:`tensorops._einsum._cost` on bitsets, for the path planners.

:class:`BitNetwork` is the network with one bit per axis (Python ints), which is
several times faster than sets of strings; it also records the path a planner builds.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence

__all__ = ["BitNetwork", "bits_of"]


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
            size, rest = 1, mask
            while rest:  # no list of bits: this runs for every new intermediate
                low = rest & -rest
                size *= sizes[low]
                rest ^= low
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
        count: dict[int, int] = {}  # summed axis -> how many alive tensors have it
        for mask in masks:
            for low in bits_of(mask & ~out):
                count[low] = count.get(low, 0) + 1
        lonely = sum(low for low, seen in count.items() if seen == 1)
        size, cache, total = self.size, self.size_cache, 0
        for step in self.ssa:
            union = twice = 0
            for ident in step:
                twice |= union & masks[ident]
                union |= masks[ident]
            # an axis in one tensor of the step that another alive tensor has stays:
            # only the others need counting, which keeps long paths fast
            closed = 0
            pair = len(step) == 2
            for low in bits_of((twice | union & lonely) & ~out):
                if pair:
                    seen = count[low] - (2 if twice & low else 1)
                else:
                    seen = count[low] - sum(1 for ident in step if masks[ident] & low)
                if seen:
                    count[low] = seen + 1
                else:
                    closed |= low
            lonely &= ~union
            result = union & ~closed
            masks.append(result)
            if pair:
                ma, mb = masks[step[0]], masks[step[1]]
                flops = size(ma) * size(mb) // (cache.get(ma & mb) or size(ma & mb))
            else:
                flops = size(union)
            total += flops * (max(1, len(step) - 1) + (union != result))
        return total

    def linear_path(self) -> list[tuple[int, ...]]:
        """Return the path planned so far in the NumPy / opt_einsum convention."""
        n = len(self.inputs)
        alive = list(range(n))  # stays sorted: new ids are the largest
        path: list[tuple[int, ...]] = []
        index = alive.index
        for number, step in enumerate(self.ssa, n):
            # list.index, not bisect: torch.compile traces planning and cannot trace bisect.
            if len(step) == 2 and step[0] < step[1]:  # most steps: no sorting, no lists
                i, j = index(step[0]), index(step[1])
                del alive[j], alive[i]  # i < j, as alive is sorted
                path.append((i, j))
            else:
                positions = [index(ident) for ident in step]
                for position in sorted(positions, reverse=True):
                    del alive[position]
                path.append(tuple(positions))
            alive.append(number)
        return path
