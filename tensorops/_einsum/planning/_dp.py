"""Exact planners by dynamic programming over subsets of operands, on bitsets."""

from __future__ import annotations

from typing import Any

from tensorops._einsum.planning._bitnet import BitNetwork, bits_of
from tensorops._einsum.planning._greedy import greedy_cost
from tensorops._einsum.planning._heap import heap_functions
from tensorops._einsum.planning._subsets import INF, cover, optimize_subsets

__all__ = [
    "OPTIMAL_MAX_OPERANDS",
    "improve_by_dp",
    "optimal_three",
    "plan_dp",
    "plan_optimal",
    "plan_subsets",
]

OPTIMAL_MAX_OPERANDS = 12
"""The most operands ``optimal`` plans; its time grows as ``3 ** n``."""

# Up to this many operands the exhaustive search is faster than dp's greedy bound and
# best-first search (benchmarks/einsum_planning.py), and its path is as cheap or cheaper.
_DP_EXHAUSTIVE_MAX = 5


def plan_optimal(net: BitNetwork) -> None:
    """Plan the exact cheapest path by dynamic programming over all operand subsets."""
    n = len(net.inputs)
    if n > OPTIMAL_MAX_OPERANDS:
        raise ValueError(
            f"optimal planning of {n} operands would take too long; use 'dp' or 'greedy'"
        )
    if n == 3 and net.limit is None and not any(net.dangling):
        optimal_three(net)
        return
    plan_subsets(net)


def plan_subsets(net: BitNetwork) -> None:
    """`plan_optimal` by the search over all subsets (any number of operands)."""
    n = len(net.inputs)
    trees = optimize_subsets(net, net.inputs, net.dangling, net.output)
    full, split, legs, leaves = (1 << n) - 1, trees.split, trees.legs, range(n)
    if trees.best[full] < INF:
        net.emit_tree(full, split, legs, leaves)
    else:
        parts = cover(dict(enumerate(trees.best)))
        net.join([(net.emit_tree(p, split, legs, leaves), trees.axes[p]) for p in parts])


def optimal_three(net: BitNetwork) -> None:
    """`plan_subsets` of three operands without dangling axes or a memory limit, directly.

    The most common exact plan, where the set-up of the subset search would take
    most of its time. There are three trees, a pair then the third operand; they
    are tried in the order the search tries them, the first of equals winning, and
    emitted as it emits them (tests/test_paths.py compares the two).
    """
    u0, u1, u2 = net.inputs
    cache, size, weight = net.size_cache, net.size, net.write_weight
    final = (u0 | u1 | u2) & net.output
    best: tuple[int, int, int, int] | None = None
    for i, ui, j, uj, k, uk in (
        (0, u0, 2, u2, 1, u1),
        (0, u0, 1, u1, 2, u2),
        (1, u1, 2, u2, 0, u0),
    ):
        # sizes of unions and of the pair's result from the inputs' (cached) sizes
        # and those of the few shared and summed axes: large masks cost a loop each
        union, shared = ui | uj, ui & uj
        legs = union & (net.output | uk)
        first = cache[ui] * cache[uj] // (cache.get(shared) or size(shared))
        gone, inner = union ^ legs, legs & uk
        legs_size = first // (cache.get(gone) or size(gone))
        second = legs_size * cache[uk] // (cache.get(inner) or size(inner))
        cost = (
            (first * 2 if union != legs else first)
            + weight * legs_size
            + (second * 2 if legs | uk != final else second)
        )
        if best is None or cost < best[0]:
            best = (cost, i, j, k)
    assert best is not None
    _, i, j, k = best
    net.ssa += [(i, j), (k, 3)]


_Entry = tuple[int, int, int, int, int, int]  # cost, axes, dangling, neighbours, left, size


class _Component:
    """Dynamic programming over the connected subsets of one component.

    Subsets are finalised cheapest first (Knuth's generalisation of Dijkstra's
    algorithm): a subset costs at least as much as its parts, so when it leaves
    the heap every cheaper subset is final. That explores the subsets that
    opt_einsum's increasing cost cap does, without its restarts.

    Args:
        net: The network.
        ops: Operands of the component (connected by summed axes).
        bound: Costs above this are not explored.
    """

    def __init__(self, net: BitNetwork, ops: list[int], bound: int) -> None:
        self.net, self.ops, self.cutoff = net, ops, bound + 1
        self.inputs = [net.inputs[g] for g in ops]
        self.holders = net.holders(ops)
        self.neighbours = [0] * len(ops)
        for group in self.holders.values():
            for bit in bits_of(group):
                self.neighbours[bit.bit_length() - 1] |= group & ~bit
        self.full = (1 << len(ops)) - 1
        self.done: dict[int, _Entry] = {}
        self.members: list[list[tuple[int, int]]] = [[] for _ in ops]  # by increasing cost
        self.legs_of: dict[int, int] = {}
        self.pushed: dict[int, int] = {}
        self.over_budget = False

    def search(self, budget: int | None) -> bool:
        """Finalise subsets until the whole component is; False if over budget."""
        heapq = heap_functions()  # the C heapq, or plain Python when traced
        net, done, members, work = self.net, self.done, self.members, 0
        # (cost, subset, its part holding its lowest operand (0: one operand), its size)
        heap = [
            (0, 1 << i, 0, net.size(mask & ~net.dangling[g]))
            for i, (g, mask) in enumerate(zip(self.ops, self.inputs, strict=True))
        ]
        while heap:
            cost, s, left, size = heapq.heappop(heap)
            if s in done:
                continue
            if left:
                legs, dangling = self.legs_of[s], 0
                neighbours = (done[left][3] | done[s ^ left][3]) & ~s
            else:
                i = s.bit_length() - 1
                dangling = net.dangling[self.ops[i]]
                legs, neighbours = self.inputs[i] & ~dangling, self.neighbours[i]
            done[s] = entry = (cost, legs, dangling, neighbours, left, size)
            if s == self.full:
                return True
            if cost + entry[5] < self.cutoff:  # else any step using s costs too much
                work += self.expand(s, entry, heap, heapq)
            if budget is not None and work > budget:
                self.over_budget = True
                return False
            rest, item = s, (cost, s)
            while rest:  # inlined bits_of: hot loop, see benchmarks/einsum_planning.py
                low = rest & -rest
                rest ^= low
                members[low.bit_length() - 1].append(item)
        return False

    def around(self, s: int, neighbours: int, base: int) -> tuple[list[int], int]:
        """Final subsets disjoint from ``s`` that share an axis with it, found by operand.

        Args:
            s: The subset.
            neighbours: Its neighbouring operands.
            base: The cost of ``s`` plus its size, which any pair with it adds.

        Returns:
            The subsets, each once, and how many were looked at.
        """
        found, work, members, limit = [], 0, self.members, self.cutoff - base
        rest = neighbours
        while rest:  # inlined bits_of: hot loop, see benchmarks/einsum_planning.py
            low = rest & -rest
            rest ^= low
            candidates = members[low.bit_length() - 1]
            work += len(candidates)
            for c2, t in candidates:
                if t & s:
                    continue
                if c2 >= limit:  # base + c2 >= cutoff
                    break
                touch = t & neighbours
                if touch & -touch == low:  # each pair once: by its lowest neighbour
                    found.append(t)
        return found, work

    def expand(
        self, s: int, entry: _Entry, heap: list[tuple[int, int, int, int]], heapq: Any
    ) -> int:
        """Push the pairs of ``s`` with final disjoint neighbours; return the work done.

        ``heapq`` is `search`'s (`heap_functions`), asked once per search.
        """
        net, done, pushed, legs_of = self.net, self.done, self.pushed, self.legs_of
        size, cache, weight = net.size, net.size_cache, net.write_weight
        cost, legs1, d1, neighbours1, _, sz1 = entry
        whole, limit = len(self.ops) == len(net.inputs), net.limit
        partners, work = self.around(s, neighbours1, cost + sz1)
        for t in partners:
            u = s | t
            c2, legs2, d2, _, _, sz2 = done[t]
            best = pushed.get(u, self.cutoff)
            # the step's union is at least as big as either part
            if cost + c2 + (sz1 if sz1 > sz2 else sz2) >= best or u in done:
                continue
            if d1 or d2:
                result = legs_of.get(u) or self.legs(u, legs1, legs2)
                flops = net.pair_cost(legs1 | d1, d1, legs2 | d2, d2, result)[0]
                total, used = cost + c2 + flops, 0
                result_size = cache.get(result) or size(result)
                if weight:
                    total += weight * result_size
            else:
                # inlined pair cost: hot loop, see benchmarks/einsum_planning.py
                used = sz1 * sz2 // (cache.get(legs1 & legs2) or size(legs1 & legs2))
                total = cost + c2 + used
                if total >= best:
                    continue
                result = legs_of.get(u) or self.legs(u, legs1, legs2)
                if result != legs1 | legs2:
                    total += used
                    gone = (legs1 | legs2) ^ result
                    used //= cache.get(gone) or size(gone)
                result_size = used  # now the result's size
                if weight:
                    total += weight * used
            if total >= best:
                continue
            if u == self.full:
                if whole or limit is None or net.fits(result):
                    pushed[u] = self.cutoff = total
                    heapq.heappush(heap, (total, u, s, result_size))
            # a step that later uses u costs at least u's size
            elif total + used < self.cutoff and (limit is None or net.fits(result)):
                pushed[u] = total
                heapq.heappush(heap, (total, u, s, result_size))
        return work

    def legs(self, u: int, legs1: int, legs2: int) -> int:
        """Return (and cache) the axes of subset ``u``, made of parts with these axes."""
        rest, closed, holders = legs1 & legs2 & ~self.net.output, 0, self.holders
        while rest:  # inlined bits_of: hot loop, see benchmarks/einsum_planning.py
            bit = rest & -rest
            rest ^= bit
            if not holders[bit] & ~u:
                closed |= bit
        result = self.legs_of[u] = (legs1 | legs2) & ~closed
        return result

    def roots(self) -> list[tuple[int, int]]:
        """Emit the component; return its roots (several if the memory limit forbids one)."""
        done, ops = self.done, self.ops
        left = {s: entry[4] for s, entry in done.items() if entry[4]}
        parts = [self.full] if self.full in done else cover({s: e[0] for s, e in done.items()})
        roots = []
        for part in parts:
            ident = self.net.emit_tree(part, left, self.legs_of, ops)
            roots.append((ident, done[part][1] | done[part][2]))
        return roots


def _dp_search(net: BitNetwork, bound: int = INF, budget: int | None = None) -> int | None:
    """Plan each connected component by dynamic programming, then join them.

    Returns:
        The cost of the path; None, with a partial plan, if ``bound`` or
        ``budget`` stopped the search.
    """
    roots: list[tuple[int, int]] = []
    whole: int | None = None  # the cost of the last component, if planned whole
    for ops in net.components():
        if len(ops) == 1:
            roots.append((ops[0], net.inputs[ops[0]]))
            continue
        component = _Component(net, ops, bound)
        if not component.search(budget) and (component.over_budget or bound < INF):
            return None
        roots.extend(component.roots())
        entry = component.done.get(component.full)
        whole = None if entry is None else entry[0]
    if len(roots) == 1 and whole is not None:  # one component, planned whole
        return whole
    net.join(roots)
    return net.cost()


def improve_by_dp(net: BitNetwork, budget: int | None = None, cost: int | None = None) -> bool:
    """Replace the path planned in ``net`` by dynamic programming's, if that is no costlier.

    The planned path's cost bounds the search, so a good path makes it faster.

    Args:
        net: The network, with a complete path.
        budget: Keep the path if the search needs more candidate pairs than this.
        cost: The planned path's cost, if known (else `BitNetwork.cost` counts it).

    Returns:
        Whether the path was replaced.
    """
    bound, path = net.cost() if cost is None else cost, net.ssa
    net.ssa = []
    found = _dp_search(net, bound, budget)
    # components are bounded one by one, so check the whole
    if found is not None and found <= bound:
        return True
    net.ssa = path
    return False


def plan_dp(net: BitNetwork, budget: int | None = None) -> None:
    """Plan by dynamic programming, bounded by the cost of the greedy path.

    The greedy path is kept when the search finds nothing cheaper, which happens
    when outer products pay off, so ``dp`` is never worse than ``greedy``.

    A few operands are planned by the exhaustive search of ``optimal`` instead,
    which is faster there and never costlier.

    Args:
        net: The network.
        budget: Keep the greedy path if the search needs more candidate pairs.
    """
    if len(net.inputs) <= _DP_EXHAUSTIVE_MAX:
        plan_optimal(net)
        return
    improve_by_dp(net, budget, greedy_cost(net))
