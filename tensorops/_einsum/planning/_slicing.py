"""Slicing: fix some axes to each of their values in turn, so that intermediates fit.

When no pairwise path keeps every intermediate within the memory limit, the
contraction can still run in pieces: slicing an axis indexes every operand that
has it at one value, the smaller network is contracted, and the results over all
values are summed (or, for an output axis, placed side by side). The FLOPs of the
whole are those of one slice times the number of slices, so the axes are chosen to
shrink the largest intermediates at the least extra cost (the approach of Gray and
Kourtis, Quantum 5, 410, 2021, and of earlier quantum-circuit simulators).

Everything here works on the steps of a planned path: the axes of each step's
operands and result (`results`), all but
the last of which are intermediates.
"""

from __future__ import annotations

from tensorops._einsum.planning._bitnet import BitNetwork, bits_of
from tensorops._einsum.planning._prng import FIXED, log2_fixed

__all__ = ["Steps", "choose_slices", "fits", "is_pairwise", "sliced_cost", "steps_of"]

Steps = list[tuple[tuple[int, ...], int]]
"""Per step of a path, the axes of its operands and of its result."""


def steps_of(net: BitNetwork) -> Steps:
    """Return the steps of the path planned in ``net`` (which must be complete)."""
    masks = net.results()
    n = len(net.inputs)
    return [
        (tuple(masks[ident] for ident in step), masks[number])
        for number, step in enumerate(net.ssa, n)
    ]


def fits(net: BitNetwork, steps: Steps, limit: int, sliced: int = 0) -> bool:
    """Tell whether every intermediate (every result but the last) of a slice fits ``limit``.

    Args:
        net: The network.
        steps: Its path's steps.
        limit: Most elements an intermediate may have.
        sliced: Axes fixed per slice, which intermediates do not hold.
    """
    size = net.size
    return all(size(result & ~sliced) <= limit for _, result in steps[:-1])


def is_pairwise(steps: Steps) -> bool:
    """Tell whether every step contracts one or two operands."""
    return all(len(operands) <= 2 for operands, _ in steps)


def sliced_cost(net: BitNetwork, steps: Steps, sliced: int) -> int:
    """Return the cost of all slices: one slice's, times the number of slices."""
    size, weight = net.size, net.write_weight
    keep = ~sliced
    total = 0
    for operands, result in steps:
        union = 0
        for mask in operands:
            union |= mask
        union &= keep
        kept = result & keep
        flops = size(union) * (max(1, len(operands) - 1) + (union != kept))
        total += flops + weight * size(kept) if weight else flops
    return total * size(sliced)


def _largest(net: BitNetwork, steps: Steps, sliced: int) -> int:
    """The axes of the largest intermediate of a slice (0 when there is none)."""
    size, largest, most = net.size, 0, 0
    for _, result in steps[:-1]:
        elements = size(result & ~sliced)
        if elements > most:
            largest, most = result & ~sliced, elements
    return largest


def choose_slices(net: BitNetwork, steps: Steps, limit: int) -> list[int]:
    """Choose axes to slice so that every intermediate of a slice fits ``limit``.

    Greedily, while the largest intermediate does not fit, one of its axes is
    sliced: the one that raises the total cost least per halving of the slice.
    Then each chosen axis that is no longer needed is dropped again.

    Args:
        net: The network.
        steps: The steps of a pairwise path.
        limit: Most elements an intermediate of one slice may have.

    Returns:
        The axes to slice (single bits), in the order they were chosen.
    """
    size, chosen, sliced = net.size, [], 0
    cost = sliced_cost(net, steps, 0)
    while True:
        largest = _largest(net, steps, sliced)
        if size(largest) <= limit:
            break
        best_key: tuple[int, int, int] | None = None
        for bit in bits_of(largest):
            if size(bit) < 2:
                continue
            new_cost = sliced_cost(net, steps, sliced | bit)
            extra = log2_fixed(new_cost) - log2_fixed(cost)
            key = (extra * FIXED // log2_fixed(size(bit)), -size(bit), bit)
            if best_key is None or key < best_key:
                best_key = key
        if best_key is None:  # only axes of size 1 are left: it fits already
            break
        chosen.append(best_key[2])
        sliced |= best_key[2]
        cost = sliced_cost(net, steps, sliced)
    for bit in sorted(chosen, key=lambda b: (size(b), b)):
        fewer = sliced & ~bit
        if fits(net, steps, limit, fewer) and sliced_cost(net, steps, fewer) <= cost:
            sliced, cost = fewer, sliced_cost(net, steps, fewer)
    return [bit for bit in chosen if sliced & bit]
