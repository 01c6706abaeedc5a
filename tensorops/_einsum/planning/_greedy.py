"""opt_einsum's greedy contraction heuristic, on bitsets.

Operands with equal axes are multiplied at once; then the pair whose result is
smallest relative to its operands (``size(ab) - size(a) - size(b)``) is contracted,
ties going to the lowest ids; outer products come last.

Each alive operand keeps one candidate in a heap: its best partner among its
neighbours. After a step, only the result is scored against its neighbours;
a candidate whose operand is gone is skipped when it is popped. Up to `SMALL`
distinct operands (without a memory limit or a random scorer) the heap costs
more than it saves: every linked pair is scored at each step instead
(`_plan_small`), so every score is current. That may choose another pair
than the heap's stale score would; tests/test_paths.py checks that greedy
stays no worse than opt_einsum's.

Beyond the vocabulary of `_bitnet`: ``on_two`` /
``on_three`` are the summed axes on at least two / three alive operands, so that a
pair keeps the axes it shares that are in ``on_three`` and its other axes that are
in ``on_two``; ``lone`` / ``paired`` are the summed axes on at most one / two.

This runs inside every strategy, so its loops are written out inline (a call
costs more than the work in it) and a key tuple is built per pushed candidate,
not per pair scored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from tensorops._einsum.planning._bitnet import BitNetwork, bits_of
from tensorops._einsum.planning._heap import heap_functions

__all__ = ["Scorer", "greedy_cost", "plan_greedy"]

Scorer = Callable[[int, int], int]
"""Scores a pair from the size of its result and the summed sizes of its operands
(lowest first), in place of ``size(ab) - weight * (size(a) + size(b))``: randomised
greedy paths perturb the score (`_hyper`)."""

_Candidate = tuple[int, int, int]  # score, the larger SSA id, the smaller one

#: Networks of at most this many operands are planned by `_plan_small`.
SMALL = 10


def plan_greedy(net: BitNetwork, weight: int = 1, scorer: Scorer | None = None) -> int | None:
    """Plan with opt_einsum's greedy heuristic, on bitsets.

    Args:
        net: The network.
        weight: Weight of the operands' sizes in the score, ``size(ab) - weight *
            (size(a) + size(b))``; 0 contracts the pair with the smallest result.
        scorer: Scores each pair instead (None: the deterministic heuristic).

    Returns:
        The path's cost, `BitNetwork.cost`, counted as it is planned; None where
        counting would not be exact (see `greedy_cost`).
    """
    common = -1
    for mask in net.inputs:
        common &= mask
    # an axis on every operand can only go in the last step; treating it as an
    # output axis avoids pairing every operand with every other over it. The last
    # step's result then keeps it, so its cost would be counted wrong
    out = net.output | common
    counted = not common & ~net.output and not any(net.dangling)
    distinct = len(set(net.inputs)) == len(net.inputs)
    if len(net.inputs) <= SMALL and scorer is None and net.limit is None and distinct:
        total = _plan_small(net, out, weight)
        return total if counted else None
    run = _Greedy(net, out, weight, scorer)
    run.contract_all(run.first_candidates(), heap_functions())
    if len(run.alive) > 1:
        net.join(sorted(run.alive.items()))
        return None
    return run.total if counted and distinct else None


def greedy_cost(net: BitNetwork, weight: int = 1) -> int:
    """Plan with `plan_greedy` and return the path's cost.

    The cost is counted while planning, which takes a fraction of the time of
    `BitNetwork.cost`, unless the network has dangling axes, repeated operands,
    a step that joins more than two (under a memory limit), or an axis on every
    operand that the output lacks.
    """
    total = plan_greedy(net, weight)
    return net.cost() if total is None else total


class _Greedy:
    """The state of one greedy run: the alive operands, their neighbours and axis counts."""

    def __init__(self, net: BitNetwork, out: int, weight: int, scorer: Scorer | None) -> None:
        self.net, self.out, self.summed = net, out, ~out
        self.weight, self.scorer = weight, scorer
        self.plain = not any(net.dangling)
        self.total = 0  # the cost of the steps so far (`BitNetwork.cost`'s count)
        if len(set(net.inputs)) == len(net.inputs):
            self.alive = dict(enumerate(net.inputs))  # ssa id -> axes
            self.by_mask = {ua: a for a, ua in self.alive.items()}  # axes -> ssa id
        else:
            self.alive, self.by_mask = _merge_equal(net, out)
        self.holders = holders = _holders(self.alive, self.summed)
        self.count = {bit: len(group) for bit, group in holders.items()}
        self.link_neighbours()
        cache, size = net.size_cache, net.size
        self.sizes = {a: cache.get(ua) or size(ua) for a, ua in self.alive.items()}

    def link_neighbours(self) -> None:
        """Find the neighbours of each alive operand, and the axes on two and on three.

        A contraction keeps every summed axis that a third operand has, so the
        neighbours of its result are those of its two operands.
        """
        neighbours: dict[int, set[int]] = {a: set() for a in self.alive}
        self.neighbours = neighbours
        on_two = on_three = 0
        wide = False
        for bit, group in self.holders.items():
            if len(group) == 2:  # most axes link two operands
                on_two |= bit
                a, b = group
                neighbours[a].add(b)
                neighbours[b].add(a)
            elif len(group) > 2:
                on_two |= bit
                on_three |= bit
                wide = True
                for a in group:
                    neighbours[a].update(group)
        if wide:
            for a, others in neighbours.items():
                others.discard(a)
        self.on_two, self.on_three = on_two, on_three

    def first_candidates(self) -> list[_Candidate]:
        """The best pair of each operand with the later operands of each of its axes, a heap.

        Equal candidates are kept once (a second copy would be popped right after
        the first and skipped).
        """
        heapq = heap_functions()  # the C heapq, or plain Python when traced
        alive, sizes, weight, scorer = self.alive, self.sizes, self.weight, self.scorer
        cache, size = self.net.size_cache, self.net.size
        lone, paired = ~self.on_two & self.summed, ~self.on_three & self.summed
        candidates: set[_Candidate] = set()
        for group in self.holders.values():
            if len(group) == 2:  # the one candidate of an axis linking two operands
                a, b = group
                ua, ub, sa, sb = alive[a], alive[b], sizes[a], sizes[b]
                shared = ua & ub
                gone = (shared & paired) | ((ua ^ ub) & lone)
                # inlined pair cost: hot loop, see benchmarks/einsum_planning.py
                divisor = (cache.get(shared) or size(shared)) * (cache.get(gone) or size(gone))
                if scorer:
                    score = scorer(sa * sb // divisor, sa + sb)
                else:
                    score = sa * sb // divisor - weight * (sa + sb)
                candidates.add((score, b, a))
                continue
            for i in range(len(group) - 1):
                a = group[i]
                best, best_b = self.best_partner(alive[a], sizes[a], group[i + 1 :], lone, paired)
                candidates.add((best, best_b, a))
        heap = list(candidates)
        heapq.heapify(heap)
        return heap

    def best_partner(
        self, ua: int, sa: int, partners: Iterable[int], lone: int, paired: int
    ) -> tuple[int, int]:
        """Return the best score of an operand with ``partners``, and whose (lowest on ties)."""
        alive, sizes, weight, scorer = self.alive, self.sizes, self.weight, self.scorer
        cache, size = self.net.size_cache, self.net.size
        best = best_b = -1
        for b in partners:
            ub = alive[b]
            shared = ua & ub
            gone = (shared & paired) | ((ua ^ ub) & lone)
            sb = sizes[b]
            # inlined pair cost: hot loop, see benchmarks/einsum_planning.py. Sizes
            # of large masks are costly to multiply out; those of the few shared
            # and summed axes are cheap and mostly cached.
            result_size = (
                sa * sb // ((cache.get(shared) or size(shared)) * (cache.get(gone) or size(gone)))
            )
            score = scorer(result_size, sa + sb) if scorer else result_size - weight * (sa + sb)
            if best_b < 0 or score < best or (score == best and b < best_b):
                best, best_b = score, b
        return best, best_b

    def contract_all(self, heap: list[_Candidate], heapq: Any) -> None:
        """Contract the best candidate pair until none is left.

        Each step contracts the pair, then its result with any operand of equal
        axes, and pushes the result's best pair with its neighbours (`relink`).
        The contraction itself is inlined: small networks go to `_plan_small`, and
        here a call per contraction would cost about as much as its work.
        """
        alive, by_mask, count, sizes = self.alive, self.by_mask, self.count, self.sizes
        neighbours, net, limit, plain = self.neighbours, self.net, self.net.limit, self.plain
        out, summed, on_two, on_three = self.out, self.summed, self.on_two, self.on_three
        cache, size, ssa, n = net.size_cache, net.size, net.ssa, len(net.inputs)
        writes, total = net.write_weight, 0
        while heap:
            _, b, a = heapq.heappop(heap)  # a < b
            if a not in alive or b not in alive:
                continue
            if limit is not None and len(alive) > 2:
                ua, ub = alive[a], alive[b]
                if not net.fits(((ua | ub) & out) | (ua & ub & on_three) | ((ua ^ ub) & on_two)):
                    continue
            dead, linked = [a, b], neighbours.pop(a) | neighbours.pop(b)
            while True:  # contract a and b, then the result with an operand of equal axes
                ua, ub = alive.pop(a), alive.pop(b)
                by_mask.pop(ua, None)
                by_mask.pop(ub, None)
                union, both = ua | ub, ua & ub
                shared = both & summed
                result = (union & out) | ((ua ^ ub) & on_two) | (shared & on_three)
                # only shared axes change their count, which drops by one
                on_two &= ~(shared & ~on_three)
                rest = shared & on_three
                while rest:  # inlined bits_of: hot loop, see benchmarks/einsum_planning.py
                    bit = rest & -rest
                    rest ^= bit
                    left = count[bit] - 1
                    count[bit] = left
                    if left == 2:
                        on_three ^= bit
                # inlined pair cost: hot loop, see benchmarks/einsum_planning.py
                flops = sizes[a] * sizes[b] // (cache.get(both) or size(both))
                total += flops * 2 if union != result else flops
                result_size = cache.get(result)
                if result_size is None:
                    gone = union & ~result
                    result_size = cache[result] = flops // (cache.get(gone) or size(gone))
                if writes:
                    total += writes * result_size
                if plain:
                    ssa.append((a, b))
                    ident = n + len(ssa) - 1
                else:
                    ident = net.contract(a, ua, b, ub, result)
                alive[ident], sizes[ident] = result, result_size
                twin = by_mask.get(result)
                if twin is None:
                    by_mask[result] = ident
                    break
                a, b = twin, ident
                dead.append(twin)
                linked |= neighbours.pop(twin)
            linked.difference_update(dead)
            neighbours[ident] = linked
            if linked:
                lone, paired = ~on_two & summed, ~on_three & summed
                heapq.heappush(heap, self.relink(ident, linked, dead, lone, paired))
        self.total = total

    def relink(
        self, ident: int, linked: set[int], dead: list[int], lone: int, paired: int
    ) -> _Candidate:
        """Make the new result `ident` the neighbour of `linked` in place of `dead`; its candidate.

        `best_partner` over `linked`, inlined (hot loop, see
        benchmarks/einsum_planning.py), with the neighbour sets updated on the way.
        """
        alive, sizes, neighbours = self.alive, self.sizes, self.neighbours
        weight, scorer, cache, size = self.weight, self.scorer, self.net.size_cache, self.net.size
        result, result_size = alive[ident], sizes[ident]
        best = best_b = -1
        # a scorer draws random numbers: score in a fixed order (torch.compile
        # iterates sets in another order than CPython)
        for b in sorted(linked) if scorer else linked:
            others = neighbours[b]
            others.difference_update(dead)
            others.add(ident)
            ub = alive[b]
            shared = result & ub
            gone = (shared & paired) | ((result ^ ub) & lone)
            sb = sizes[b]
            divisor = (cache.get(shared) or size(shared)) * (cache.get(gone) or size(gone))
            if scorer:
                score = scorer(result_size * sb // divisor, result_size + sb)
            else:
                score = result_size * sb // divisor - weight * (result_size + sb)
            # the result has the largest id, so ties go to the lowest neighbour
            if best_b < 0 or score < best or (score == best and b < best_b):
                best, best_b = score, b
        return best, ident, best_b


def _best_pair(
    net: BitNetwork,
    masks: list[int],
    sizes: list[int],
    out: int,
    on_two: int,
    on_three: int,
    weight: int,
) -> tuple[int, int, int, int]:
    """`_plan_small`'s choice: positions ``i < j``, the result's axes and size (j 0: none).

    The lowest ``(score, larger position, smaller position)`` over the pairs that
    share a summed axis.
    """
    cache, size, summed = net.size_cache, net.size, ~out
    best = i = j = result = result_size = 0
    for k in range(1, len(masks)):
        ub, sb = masks[k], sizes[k]
        for h in range(k):
            ua = masks[h]
            shared = ua & ub
            if not shared & summed:
                continue
            union, sa = ua | ub, sizes[h]
            kept = (union & out) | ((ua ^ ub) & on_two) | (shared & on_three)
            # inlined pair cost: the sizes of the few shared and summed axes
            # are cheap and mostly cached, those of large masks are not
            gone = union ^ kept
            divisor = (cache.get(shared) or size(shared)) * (cache.get(gone) or size(gone))
            kept_size = sa * sb // divisor
            score = kept_size - weight * (sa + sb)
            # ties: the larger id, then the smaller, lowest (ids increase)
            if j == 0 or score < best or (score == best and (k, h) < (j, i)):
                best, i, j, result, result_size = score, h, k, kept, kept_size
    return i, j, result, result_size


def _holders(alive: dict[int, int], summed: int) -> dict[int, list[int]]:
    """Map each summed axis of the ``alive`` operands to the ids that have it, increasing."""
    holders: dict[int, list[int]] = {}
    for a in sorted(alive):
        rest = alive[a] & summed
        while rest:  # inlined bits_of: hot loop, see benchmarks/einsum_planning.py
            bit = rest & -rest
            rest ^= bit
            group = holders.get(bit)
            if group is None:
                holders[bit] = [a]
            else:
                group.append(a)
    return holders


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
            for bit in bits_of(ua & watched):
                count[bit] = count.get(bit, 0) + 1
            twin = by_mask.get(ua)
            if twin is None:
                alive[a] = ua
                by_mask[ua] = a
                break
            del alive[twin], by_mask[ua]
            result = ua & out
            for bit in bits_of(ua & summed):
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


def _plan_small(net: BitNetwork, out: int, weight: int) -> int | None:
    """Plan a few distinct operands by scoring every linked pair at each step.

    Up to `SMALL` operands, rescoring all pairs costs less than the set-up of
    the candidate heap, and every score is current. The choice is the heap's:
    the lowest ``(score, larger id, smaller id)``; a result with the axes of an
    alive operand is multiplied with it at once; unlinked operands are joined last.

    Returns:
        The path's cost as `plan_greedy` counts it; None if unlinked operands
        were joined last.
    """
    summed, n, plain = ~out, len(net.inputs), not any(net.dangling)
    cache, size, ssa, writes, total = net.size_cache, net.size, net.ssa, net.write_weight, 0
    ids = list(range(n))  # alive ssa ids, increasing; positions are the linear path's
    masks = list(net.inputs)
    sizes = [cache[mask] for mask in masks]  # the network has every input's size
    alive, twin = n, -1  # twin: the position of an operand with the last result's axes
    while alive > 1:
        once = twice = thrice = 0
        for mask in masks:
            thrice |= twice & mask
            twice |= once & mask
            once |= mask
        on_two, on_three = twice & summed, thrice & summed
        if alive == 2 and plain:  # the last step, whatever it scores
            i, j = 0, 1
            ua, ub = masks
            result = (ua | ub) & net.output
            result_size = cache.get(result) or size(result)
        elif twin >= 0:
            i, j = twin, alive - 1
            ua = ub = masks[j]
            result = (ua & out) | (ua & on_three)
            result_size = cache.get(result) or size(result)
        else:
            i, j, result, result_size = _best_pair(net, masks, sizes, out, on_two, on_three, weight)
            if j == 0:  # no linked pair is left: join the rest
                net.join(list(zip(ids, masks, strict=True)))
                return None
            ua, ub = masks[i], masks[j]
        both = ua & ub
        flops = sizes[i] * sizes[j] // (cache.get(both) or size(both))
        total += flops * 2 if ua | ub != result else flops
        if writes:
            total += writes * result_size
        if plain:
            ssa.append((ids[i], ids[j]))
            ident = n + len(ssa) - 1
        else:
            ident = net.contract(ids[i], ua, ids[j], ub, result)
        del ids[j], masks[j], sizes[j], ids[i], masks[i], sizes[i]
        twin = masks.index(result) if result in masks else -1
        ids.append(ident)
        masks.append(result)
        sizes.append(result_size)
        alive -= 1
    return total
