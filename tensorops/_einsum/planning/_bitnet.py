"""The cost model of `tensorops._einsum.planning._cost` on bitsets, for the path planners.

`BitNetwork` is the network with one bit per axis (Python ints), which is
several times faster than sets of strings; it also records the path a planner builds.
The operations every planner shares live here: sizes, the cost of a pairwise step,
the holders of each axis, emitting a tree as steps, and the cost of a whole path.

Glossary of the planners' vocabulary (the names used for locals in every planner):

* **mask**, **axes**: a bitset of axes; axis ``net.axes[i]`` is bit ``1 << i``.
  ``ua`` / ``ub`` are the axes of operands ``a`` / ``b``, ``sa`` / ``sb`` their
  sizes (numbers of elements).
* **subset**, **node**: a bitset of operands (bit ``i`` is operand ``i``); a node of
  a contraction tree is the set of operands it contracts.
* **summed axis**: an axis not in the output; it disappears in the step after
  which no remaining operand has it.
* **dangling** (``da`` / ``db``): the summed axes that only one input has; that input
  may sum them on its own before any pairwise step (opt_einsum's "single term"
  reduction).
* **legs**: the axes a subset keeps once contracted: those of the output or of
  operands outside it. Its **result**'s axes.
* **holders**: for each summed axis, the bitset of operands that have it.
* **neighbours**: operands sharing a summed axis with a given one.
* **shared** / **gone**: the axes both operands of a step have / the axes the step
  sums away.
* **SSA id**: the path in static single assignment form: input ``i`` is id ``i``, the
  result of step ``k`` is id ``len(inputs) + k``.
* **pair flops**: the FLOPs of a pairwise step, ``size(ua | ub)``, doubled when the
  step sums an axis (opt_einsum's count). Hot loops compute ``size(ua | ub)`` as
  ``sa * sb // size(shared)``: the shared axes are few and their size is cached.
* **writes**: the elements of each intermediate written to memory. The planners
  minimise ``flops + write_weight * writes``; ``write_weight`` is 0 for
  ``minimize="flops"``.
* **limit**: the most elements an intermediate may have (the memory limit).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tensorops._einsum.planning._heap import heap_functions

__all__ = ["BitNetwork", "Table", "bits_of"]

Table = Mapping[int, int] | Sequence[int]
"""Something indexed by a bitset: a dict of some nodes, or a list over all subsets."""


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
        inputs: Axes of each operand (an axis repeated within an operand counts once).
        output: Axes of the result (distinct).
        size_dict: Size of every axis.
        limit: Most elements an intermediate may have (None: no limit).
        write_weight: What writing one element of an intermediate costs, in FLOPs
            (0: the planners minimise FLOPs alone).

    Attributes:
        axes: Axis names; axis ``axes[i]`` is bit ``1 << i``.
        inputs: Bitset of each operand.
        output: Bitset of the output.
        dangling: For each operand, its axes that no other operand and not the
            output has, which it may sum on its own before any pairwise step.
        limit: The memory limit.
        write_weight: The cost of writing one element.
        ssa: The steps planned so far.
        size_cache: Sizes of the bitsets seen so far (read it directly in hot loops).
    """

    __slots__ = (
        "axes",
        "dangling",
        "inputs",
        "limit",
        "output",
        "size_cache",
        "ssa",
        "write_weight",
    )

    def __init__(
        self,
        inputs: Sequence[tuple[str, ...]],
        output: tuple[str, ...],
        size_dict: Mapping[str, int],
        limit: int | None = None,
        write_weight: int = 0,
    ) -> None:
        # a path over an empty axis costs nothing whatever its order; size 1 keeps
        # the planners' divisions defined and their choices sensible
        # (sizes are >= 0: ``size or 1`` is ``max(1, size)``)
        bit: dict[str, int] = {}
        sizes: dict[int, int] = {0: 1}
        self.inputs: list[int] = []
        new = 1  # the flag of the next new axis
        for axes in inputs:
            mask, total = 0, 1
            for axis in axes:
                flag = bit.get(axis)
                if flag is None:
                    flag = bit[axis] = new
                    new <<= 1
                    sizes[flag] = size = size_dict[axis] or 1
                    mask |= flag
                    total *= size
                elif not mask & flag:  # a repeated axis (a diagonal) counts once
                    mask |= flag
                    total *= sizes[flag]
            sizes[mask] = total
            self.inputs.append(mask)
        self.output = 0
        for axis in output:
            flag = bit.get(axis)
            if flag is None:
                flag = bit[axis] = new
                new <<= 1
                sizes[flag] = size_dict[axis] or 1
            self.output |= flag
        self.axes: tuple[str, ...] = tuple(bit)
        self.size_cache = sizes
        once = twice = 0
        for mask in self.inputs:
            twice |= once & mask
            once |= mask
        alone = once & ~twice & ~self.output
        self.dangling = [mask & alone for mask in self.inputs]
        self.limit = limit
        self.write_weight = write_weight
        self.ssa: list[tuple[int, ...]] = []

    def size(self, mask: int) -> int:
        """Return the number of elements of a tensor with the axes ``mask``."""
        sizes = self.size_cache
        size = sizes.get(mask)
        if size is None:
            size, rest = 1, mask
            while rest:  # inlined bits_of: hot loop, see benchmarks/einsum_planning.py
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

    def pair_flops(self, ua: int, ub: int, result: int) -> int:
        """Return the FLOPs of a pairwise step from axes ``ua`` and ``ub`` to ``result``."""
        size = self.size
        flops = size(ua) * size(ub) // size(ua & ub)
        return flops * 2 if ua | ub != result else flops

    def pair_cost(self, ua: int, da: int, ub: int, db: int, result: int) -> tuple[int, int]:
        """Return the cheapest cost of a pairwise step and which inputs to reduce first.

        The cost is the step's FLOPs plus those of any single-operand sums before
        it, and the writes of those sums; the write of the step's own result is
        the same whichever way it is made, so it is left to the caller.

        Args:
            ua: Axes of the first operand.
            da: Its axes that can be summed on their own (only for inputs, else 0).
            ub: Axes of the second operand.
            db: Same as ``da`` for the second operand.
            result: Axes of the step's result.

        Returns:
            The cost, and a flag set: bit 1 to reduce the first, bit 2 the second.
        """
        size, weight = self.size, self.write_weight
        best, best_flags = size(ua | ub) * (2 if ua | ub != result else 1), 0
        for flags in (1, 2, 3):
            a, b, extra = ua, ub, 0
            if flags & 1:
                if not da or not self.fits(ua & ~da):
                    continue
                a = ua & ~da
                extra = 2 * size(ua) + weight * size(a)
            if flags & 2:
                if not db or not self.fits(ub & ~db):
                    continue
                b = ub & ~db
                extra += 2 * size(ub) + weight * size(b)
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

    def emit_tree(self, root: int, split: Table, legs: Table, leaves: Sequence[int]) -> int:
        """Emit the steps of a binary contraction tree, each part before the node it makes.

        Args:
            root: The tree's root, a bitset over positions in ``leaves``.
            split: For each internal node, its part emitted first.
            legs: For each internal node, the axes of its result.
            leaves: The SSA id of each position; a leaf has the axes of that input.

        Returns:
            The SSA id of the root's result.
        """
        inputs, contract = self.inputs, self.contract
        ids: dict[int, int] = {}  # node -> SSA id of its result
        # internal nodes in pre-order, second part first; reversed, each part comes
        # before the node it makes and the first part before the second (a loop,
        # not recursion: trees of many operands are deep)
        order: list[int] = []
        stack = [root]
        while stack:
            s = stack.pop()
            if s & (s - 1):
                order.append(s)
                a = split[s]
                stack.append(a)
                stack.append(s ^ a)
            else:
                ids[s] = leaves[s.bit_length() - 1]
        for s in reversed(order):
            a = split[s]
            b = s ^ a
            ia, ib = ids[a], ids[b]
            ua = legs[a] if a & (a - 1) else inputs[ia]
            ub = legs[b] if b & (b - 1) else inputs[ib]
            ids[s] = contract(ia, ua, ib, ub, legs[s])
        return ids[root]

    def holders(self, members: Sequence[int]) -> dict[int, int]:
        """Map each summed axis of the operands ``members`` to the positions holding it.

        Args:
            members: SSA ids of inputs.

        Returns:
            For each summed axis (a single bit), the bitset of positions in
            ``members`` of the operands that have it.
        """
        found: dict[int, int] = {}
        summed = ~self.output
        for i, ident in enumerate(members):
            for bit in bits_of(self.inputs[ident] & summed):
                found[bit] = found.get(bit, 0) | 1 << i
        return found

    def join(self, items: Sequence[tuple[int, int]]) -> None:
        """Contract the operands ``(ssa id, axes)`` pairwise, smallest first.

        When the next pairwise result would break the memory limit, all remaining
        operands are contracted in one step instead.
        """
        heapq = heap_functions()  # the C heapq, or plain Python when traced
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
        summed, inputs = ~self.output, self.inputs
        groups: list[list[int]] = []
        left = list(range(len(inputs)))
        while left:
            group, axes, pending, grew = [left[0]], inputs[left[0]] & summed, left[1:], True
            while grew:  # sweep the operands left until none joins the group
                grew, rest = False, []
                for i in pending:
                    if inputs[i] & axes:
                        group.append(i)
                        axes |= inputs[i] & summed
                        grew = True
                    else:
                        rest.append(i)
                pending = rest
            groups.append(sorted(group))
            left = pending
        return groups

    def results(self) -> list[int]:
        """Return the axes of every operand and step result of the (complete) path, by SSA id."""
        masks, out = list(self.inputs), self.output
        count: dict[int, int] = {}  # summed axis -> how many alive tensors have it
        for mask in masks:
            for low in bits_of(mask & ~out):
                count[low] = count.get(low, 0) + 1
        lonely = sum(low for low, seen in count.items() if seen == 1)
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
            masks.append(union & ~closed)
        return masks

    def cost(self) -> int:
        """Return the cost of the path planned so far (which must be complete)."""
        masks = self.results()
        size, cache, weight, total = self.size, self.size_cache, self.write_weight, 0
        for number, step in enumerate(self.ssa, len(self.inputs)):
            result = masks[number]
            if len(step) == 2:
                ma, mb = masks[step[0]], masks[step[1]]
                shared = ma & mb
                flops = size(ma) * size(mb) // (cache.get(shared) or size(shared))
                total += flops * 2 if ma | mb != result else flops
            else:
                union = 0
                for ident in step:
                    union |= masks[ident]
                total += size(union) * (max(1, len(step) - 1) + (union != result))
            if weight:
                total += weight * size(result)
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
