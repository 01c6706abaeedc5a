"""opt_einsum's greedy contraction heuristic, on bitsets."""

from __future__ import annotations

import heapq

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
    # This runs inside every strategy, so its loops are written out inline (a call
    # costs more than the work in it) and a key tuple is built per pushed
    # candidate, not per pair scored.
    inputs = net.inputs
    n = len(inputs)
    common = -1
    for mask in inputs:
        common &= mask
    # an axis on every operand can only go in the last step; treating it as an
    # output axis avoids pairing every operand with every other over it
    out = net.output | common
    summed = ~out
    cache, size, ssa, limit = net.size_cache, net.size, net.ssa, net.limit
    plain = not any(net.dangling)
    if n == 3 and plain and limit is None and _plan_three(net, out, weight):
        return
    if len(set(inputs)) == n:
        alive = dict(enumerate(inputs))  # ssa id -> axes
        by_mask = {ua: a for a, ua in alive.items()}  # axes -> ssa id
    else:
        alive, by_mask = _merge_equal(net, out)
    # m2 / m3: summed axes on at least two / three alive operands; a pair keeps
    # the axes it shares that are in m3 and its other axes that are in m2
    m2 = m3 = 0
    holders: dict[int, list[int]] = {}
    for a in sorted(alive):  # groups in id order
        rest = alive[a] & summed
        while rest:
            bit = rest & -rest
            rest ^= bit
            group = holders.get(bit)
            if group is None:
                holders[bit] = [a]
            else:
                group.append(a)
    # neighbours: the alive operands sharing a summed axis. A contraction keeps
    # every summed axis that a third operand has, so the neighbours of its result
    # are those of its two operands.
    neighbours: dict[int, set[int]] = {a: set() for a in alive}
    count = {bit: len(group) for bit, group in holders.items()}  # alive operands per axis
    wide = False
    for bit, group in holders.items():
        if len(group) == 2:  # most axes link two operands
            m2 |= bit
            a, b = group
            neighbours[a].add(b)
            neighbours[b].add(a)
        elif len(group) > 2:
            m2 |= bit
            m3 |= bit
            wide = True
            for a in group:
                neighbours[a].update(group)
    if wide:
        for a, others in neighbours.items():
            others.discard(a)
    sizes = {a: cache.get(ua) or size(ua) for a, ua in alive.items()}

    # The best pair of each operand with the later operands of each of its axes;
    # equal candidates are kept once (a second copy would be popped right after
    # the first and skipped).
    candidates: set[tuple[int, int, int]] = set()
    no2, no3 = ~m2 & summed, ~m3 & summed
    for group in holders.values():
        if len(group) == 2:  # the one candidate of an axis linking two operands
            a, b = group
            ua, ub, sa, sb = alive[a], alive[b], sizes[a], sizes[b]
            two = ua & ub
            gone = (two & no3) | ((ua ^ ub) & no2)
            k12 = sa * sb // ((cache.get(two) or size(two)) * (cache.get(gone) or size(gone)))
            candidates.add((k12 - weight * (sa + sb), b, a))
            continue
        for i in range(len(group) - 1):
            a = group[i]
            ua, sa = alive[a], sizes[a]
            best = best_b = -1
            for b in group[i + 1 :]:  # sorted: the first of equal scores wins
                ub = alive[b]
                two = ua & ub
                gone = (two & no3) | ((ua ^ ub) & no2)
                sb = sizes[b]
                # sizes of large masks are costly to multiply out; those of the
                # few shared and summed axes are cheap and mostly cached
                k12 = sa * sb // ((cache.get(two) or size(two)) * (cache.get(gone) or size(gone)))
                score = k12 - weight * (sa + sb)
                if best_b < 0 or score < best:
                    best, best_b = score, b
            candidates.add((best, best_b, a))
    heap = list(candidates)
    heapq.heapify(heap)

    while heap:
        _, b, a = heapq.heappop(heap)  # a < b
        if a not in alive or b not in alive:
            continue
        if limit is not None and len(alive) > 2:
            ua, ub = alive[a], alive[b]
            if not net.fits(((ua | ub) & out) | (ua & ub & m3) | ((ua ^ ub) & m2)):
                continue
        dead = [a, b]
        linked = neighbours.pop(a)
        linked |= neighbours.pop(b)
        while True:  # contract a and b, then the result with an operand of equal axes
            ua, ub = alive.pop(a), alive.pop(b)
            by_mask.pop(ua, None)
            by_mask.pop(ub, None)
            union, two = ua | ub, ua & ub & summed
            result = (union & out) | ((ua ^ ub) & m2) | (two & m3)
            # only shared axes change their count, which drops by one
            m2 &= ~(two & ~m3)
            rest = two & m3
            while rest:
                bit = rest & -rest
                rest ^= bit
                left = count[bit] - 1
                count[bit] = left
                if left == 2:
                    m3 ^= bit
            sr = cache.get(result)
            if sr is None:
                two, gone = ua & ub, union & ~result
                sr = (
                    sizes[a]
                    * sizes[b]
                    // ((cache.get(two) or size(two)) * (cache.get(gone) or size(gone)))
                )
                cache[result] = sr
            if plain:
                ssa.append((a, b))
                ident = n + len(ssa) - 1
            else:
                ident = net.contract(a, ua, b, ub, result)
            alive[ident], sizes[ident] = result, sr
            twin = by_mask.get(result)
            if twin is None:
                by_mask[result] = ident
                break
            a, b = twin, ident
            dead.append(twin)
            linked |= neighbours.pop(twin)
        linked.difference_update(dead)
        neighbours[ident] = linked
        if not linked:
            continue
        sa = sr
        ua = result
        no2, no3 = ~m2 & summed, ~m3 & summed
        best = best_b = -1
        for b in linked:
            others = neighbours[b]
            others.difference_update(dead)
            others.add(ident)
            ub = alive[b]
            two = ua & ub
            gone = (two & no3) | ((ua ^ ub) & no2)
            sb = sizes[b]
            k12 = sa * sb // ((cache.get(two) or size(two)) * (cache.get(gone) or size(gone)))
            score = k12 - weight * (sa + sb)
            # the result has the largest id, so ties go to the lowest neighbour
            if best_b < 0 or score < best or (score == best and b < best_b):
                best, best_b = score, b
        heapq.heappush(heap, (best, ident, best_b))
    if len(alive) > 1:
        net.join(sorted(alive.items()))


def _merge_equal(net: BitNetwork, out: int) -> tuple[dict[int, int], dict[int, int]]:
    """Multiply operands with equal axes as they come; return the alive axes by id and back.

    Each is multiplied with the earlier one at once, summing the axes that no
    operand seen so far has besides them.
    """
    inputs, n, summed = net.inputs, len(net.inputs), ~out
    cache, size, ssa, plain = net.size_cache, net.size, net.ssa, not any(net.dangling)
    # only the axes of repeated masks need counting: every merge is over one of
    # them or over the result of an earlier merge, which has a subset of its axes
    seen: set[int] = set()
    watched = 0
    for ua in inputs:
        if ua in seen:
            watched |= ua
        seen.add(ua)
    watched &= summed
    alive: dict[int, int] = {}
    by_mask: dict[int, int] = {}  # axes -> ssa id, to find operands with equal axes
    count: dict[int, int] = {}  # summed axis -> how many alive operands have it
    for a, ua in enumerate(inputs):
        while True:
            rest = ua & watched
            while rest:
                bit = rest & -rest
                rest ^= bit
                count[bit] = count.get(bit, 0) + 1
            twin = by_mask.get(ua)
            if twin is None:
                alive[a] = ua
                by_mask[ua] = a
                break
            del alive[twin], by_mask[ua]
            result, rest = ua & out, ua & summed
            while rest:
                bit = rest & -rest
                rest ^= bit
                left = count[bit] - 2
                count[bit] = left  # the result is counted when it is added
                if left:
                    result |= bit
            if result not in cache:
                cache[result] = size(result)
            if plain:
                ssa.append((twin, a) if twin < a else (a, twin))  # twin may be a result
                a = n + len(ssa) - 1
            else:
                a = net.contract(twin, ua, a, ua, result)
            ua = result
    return alive, by_mask


def _plan_three(net: BitNetwork, out: int, weight: int) -> bool:
    """Plan three distinct operands without dangling axes directly; False if none are linked.

    The most common case, where the set-up of :func:`plan_greedy` would take
    most of its time. No summed axis is on all three operands (it would be an
    output axis), so every linked pair is a candidate of its own and the result
    of the best one is contracted with the third operand.
    """
    summed, (u0, u1, u2) = ~out, net.inputs
    if len({u0, u1, u2}) < 3:
        return False
    cache, size = net.size_cache, net.size
    best: tuple[int, int, int] | None = None
    for a, ua, b, ub, uc in ((0, u0, 1, u1, u2), (0, u0, 2, u2, u1), (1, u1, 2, u2, u0)):
        two = ua & ub
        if two & summed:
            gone = (ua | ub) & summed & ~uc
            sa, sb = cache.get(ua) or size(ua), cache.get(ub) or size(ub)
            k12 = sa * sb // ((cache.get(two) or size(two)) * (cache.get(gone) or size(gone)))
            key = (k12 - weight * (sa + sb), b, a)
            if best is None or key < best:
                best = key
    if best is None:
        return False
    _, b, a = best
    net.ssa += [(a, b), (3 - a - b, 3)]
    return True
