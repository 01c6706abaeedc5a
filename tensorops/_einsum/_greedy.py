"""opt_einsum's greedy contraction heuristic, on bitsets."""

from __future__ import annotations

import heapq
from collections.abc import Iterable

from tensorops._einsum._bitnet import BitNetwork

__all__ = ["plan_greedy"]


def plan_greedy(net: BitNetwork, weight: int = 1) -> None:
    """Plan with opt_einsum's greedy heuristic, on bitsets.

    Operands with equal axes are multiplied at once; then the pair whose result
    is smallest relative to its operands (``size(ab) - size(a) - size(b)``) is
    contracted, ties going to the lowest ids; outer products come last.

    Args:
        net: The network.
        weight: Weight of the operands' sizes in the score, ``size(ab) - weight *
            (size(a) + size(b))``; 0 contracts the pair with the smallest result.
    """
    common = -1
    for mask in net.inputs:
        common &= mask
    # an axis on every operand can only go in the last step; treating it as an
    # output axis avoids pairing every operand with every other over it
    out = net.output | common
    cache, size, ssa, limit = net.size_cache, net.size, net.ssa, net.limit
    plain = not any(net.dangling)
    alive: dict[int, int] = {}
    by_mask: dict[int, int] = {}
    holders: dict[int, set[int]] = {}
    heap: list[tuple[int, int, int]] = []
    m2 = m3 = 0  # axes on at least two / three alive operands

    def add(a: int, ua: int) -> int:
        twin = by_mask.get(ua)
        alive[a] = ua
        rest = ua & ~out
        while rest:
            bit = rest & -rest
            rest ^= bit
            group = holders.get(bit)
            if group is None:
                holders[bit] = {a}
            else:
                group.add(a)
        if twin is None:
            by_mask[ua] = a
            return a
        return add(*contract(twin, a))

    def contract(a: int, b: int) -> tuple[int, int]:
        """Contract a and b, and count their axes as if the result were alive."""
        nonlocal m2, m3
        ua, ub = alive.pop(a), alive.pop(b)
        by_mask.pop(ua, None)
        by_mask.pop(ub, None)
        result = (ua | ub) & out
        rest = (ua | ub) & ~out
        while rest:
            bit = rest & -rest
            rest ^= bit
            group = holders[bit]
            group.discard(a)
            group.discard(b)
            count = len(group)
            if count:
                result |= bit
                m2 |= bit
                m3 = m3 | bit if count >= 2 else m3 & ~bit
            else:
                m2 &= ~bit
                m3 &= ~bit
        if result not in cache:
            two, gone = ua & ub, (ua | ub) & ~result
            cache[result] = (
                (cache.get(ua) or size(ua))
                * (cache.get(ub) or size(ub))
                // ((cache.get(two) or size(two)) * (cache.get(gone) or size(gone)))
            )
        if plain:
            ssa.append((a, b) if a < b else (b, a))
            return len(net.inputs) + len(ssa) - 1, result
        return net.contract(a, ua, b, ub, result), result

    def kept(ua: int, ub: int) -> int:
        two = ua & ub
        return ((ua | ub) & out) | (two & m3) | ((ua ^ ub) & m2)

    def push_best(a: int, others: Iterable[int]) -> None:
        ua = alive[a]
        sa = cache.get(ua) or size(ua)
        best = None
        for b in others:
            ub = alive[b]
            two = ua & ub
            gone = ((two & ~m3) | ((ua ^ ub) & ~m2)) & ~out
            sb = cache.get(ub) or size(ub)
            # sizes of large masks are costly to multiply out; those of the few
            # shared and summed axes are cheap and mostly cached
            k12 = sa * sb // ((cache.get(two) or size(two)) * (cache.get(gone) or size(gone)))
            score = k12 - weight * (sa + sb)
            key = (score, a, b) if a > b else (score, b, a)
            if best is None or key < best:
                best = key
        if best is not None:
            heapq.heappush(heap, best)

    for ident, mask in enumerate(net.inputs):
        add(ident, mask)
    for bit, group in holders.items():
        m2 |= bit if len(group) >= 2 else 0
        m3 |= bit if len(group) >= 3 else 0
    for group in holders.values():
        ordered = sorted(group)
        for i in range(len(ordered) - 1):
            push_best(ordered[i], ordered[i + 1 :])
    while heap:
        _, b, a = heapq.heappop(heap)
        if a not in alive or b not in alive:
            continue
        if limit is not None and len(alive) > 2 and not net.fits(kept(alive[a], alive[b])):
            continue
        ident = add(*contract(a, b))
        neighbours: set[int] = set()
        rest = alive[ident] & ~out
        while rest:
            bit = rest & -rest
            rest ^= bit
            neighbours |= holders[bit]
        neighbours.discard(ident)
        push_best(ident, neighbours)  # the best key does not depend on the order
    net.join(sorted(alive.items()))
