"""Contraction trees by recursive bisection of the network's hypergraph.

A contraction tree whose top split cuts few, small axes keeps its large
intermediates small. Gray and Kourtis (Quantum 5, 410, 2021) build trees by
splitting the network with a hypergraph partitioner, recursively, each axis
weighted by the logarithm of its size; this module does the same with its own
partitioner: a Fiduccia-Mattheyses refinement (Fiduccia and Mattheyses, DAC 1982)
of a graph-growing start, on a multilevel hierarchy of matched operands
(Karypis and Kumar, SIAM J. Sci. Comput. 20, 1998).

Vocabulary beyond `_bitnet`: a **vertex** is an operand (or,
on coarse levels, a group of operands) of the part being split; an **edge** is a
summed axis with two or more vertices in it (its **pins**); the **cut** is the
summed weight of the edges with pins on both sides; a **gain** is how much a
vertex's move to the other side lowers the cut.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tensorops._einsum.planning._bitnet import BitNetwork, bits_of
from tensorops._einsum.planning._greedy import plan_greedy
from tensorops._einsum.planning._heap import heap_functions
from tensorops._einsum.planning._prng import FIXED, Random, log2_fixed
from tensorops._einsum.planning._reconfigure import ContractionTree
from tensorops._einsum.planning._subsets import optimize_subsets

__all__ = ["Hypergraph", "partition_tree"]

_COARSEST = 24  # vertices below which a part is split directly
_PASSES = 6  # most Fiduccia-Mattheyses passes per level
_VCYCLES = 2  # extra V-cycles that keep the sides while coarsening
_PATIENCE = 16  # moves without a better cut before a pass stops
_EXACT_MAX = 5  # leaves of at most this many operands get their exact best tree


class Hypergraph:
    """Vertices with weights, and edges as lists of pins with weights.

    Args:
        vertex_weights: Weight of each vertex (how many operands it stands for).
        edges: Pins of each edge (two or more distinct vertices).
        edge_weights: Weight of each edge.
    """

    __slots__ = ("edge_weights", "edges", "incident", "vertex_weights")

    def __init__(
        self, vertex_weights: list[int], edges: list[list[int]], edge_weights: list[int]
    ) -> None:
        self.vertex_weights, self.edges, self.edge_weights = vertex_weights, edges, edge_weights
        self.incident: list[list[int]] = [[] for _ in vertex_weights]
        for e, pins in enumerate(edges):
            for v in pins:
                self.incident[v].append(e)

    def coarsen(
        self, rng: Random, side: Sequence[int] | None = None
    ) -> tuple[Hypergraph, list[int]] | None:
        """Merge matched pairs of strongly linked vertices; None if few could be matched.

        Args:
            rng: Randomness for the order of matching.
            side: If given, only vertices on the same side are matched.

        Returns:
            The coarse hypergraph, and the coarse vertex of each vertex.
        """
        n, incident, edges, weights = (
            len(self.vertex_weights),
            self.incident,
            self.edges,
            self.edge_weights,
        )
        coarse = [-1] * n
        count = 0
        order = list(range(n))
        _shuffle(order, rng)
        for v in order:
            if coarse[v] >= 0:
                continue
            links: dict[int, int] = {}
            for e in incident[v]:
                share = weights[e] // (len(edges[e]) - 1)
                for u in edges[e]:
                    if u != v and coarse[u] < 0 and (side is None or side[u] == side[v]):
                        links[u] = links.get(u, 0) + share
            coarse[v] = count
            if links:
                # the strongest link, lighter partners first: groups stay balanced
                best = sorted(links, key=lambda u: (-links[u], self.vertex_weights[u], u))[0]
                coarse[best] = count
            count += 1
        if count > 0.85 * n:
            return None
        vertex_weights = [0] * count
        for v, c in enumerate(coarse):
            vertex_weights[c] += self.vertex_weights[v]
        merged: dict[tuple[int, ...], int] = {}
        for pins, weight in zip(edges, weights, strict=True):
            key = tuple(sorted({coarse[v] for v in pins}))
            if len(key) > 1:
                merged[key] = merged.get(key, 0) + weight
        return Hypergraph(vertex_weights, [list(k) for k in merged], list(merged.values())), coarse

    def grow(self, rng: Random, target: int) -> list[int]:
        """A side per vertex: side 1 grown from a random vertex along edges to ``target`` weight."""
        heapq = heap_functions()  # the C heapq, or plain Python when traced
        n = len(self.vertex_weights)
        side, weight = [0] * n, 0
        start = rng.below(n)
        frontier = [(0, start)]
        seen = {start}
        while frontier and weight < target:
            _, v = heapq.heappop(frontier)
            side[v] = 1
            weight += self.vertex_weights[v]
            for e in self.incident[v]:
                for u in self.edges[e]:
                    if u not in seen:
                        seen.add(u)
                        heapq.heappush(frontier, (-self.edge_weights[e], u))
        for v in range(n):  # a disconnected rest: fill up in order
            if weight >= target:
                break
            if not side[v]:
                side[v] = 1
                weight += self.vertex_weights[v]
        return side

    def cut(self, side: Sequence[int]) -> int:
        """Return the summed weight of the edges with pins on both sides."""
        total = 0
        for pins, weight in zip(self.edges, self.edge_weights, strict=True):
            first = side[pins[0]]
            if any(side[v] != first for v in pins):
                total += weight
        return total

    def refine(self, side: list[int], low: int, high: int) -> None:
        """Improve the bisection ``side`` in place by Fiduccia-Mattheyses passes.

        Args:
            side: The side (0 or 1) of each vertex.
            low: Least weight side 1 may have.
            high: Most weight side 1 may have; both widen by the heaviest vertex,
                as moves go one vertex at a time.
        """
        slack = max(self.vertex_weights) // 2
        low, high = low - slack, high + slack
        for _ in range(_PASSES):
            if not self.refine_pass(side, low, high):
                return

    def refine_pass(self, side: list[int], low: int, high: int) -> bool:
        """One pass: move every vertex once, best gain first; keep the best prefix.

        Returns:
            Whether the cut got smaller.
        """
        heapq = heap_functions()  # the C heapq, or plain Python when traced
        edges, weights, incident, vw = (
            self.edges,
            self.edge_weights,
            self.incident,
            self.vertex_weights,
        )
        counts = [[0, 0] for _ in edges]
        for e, pins in enumerate(edges):
            for v in pins:
                counts[e][side[v]] += 1
        gain = [0] * len(vw)
        for v, mine in enumerate(side):
            for e in incident[v]:
                if counts[e][mine] == 1:
                    gain[v] += weights[e]
                if counts[e][1 - mine] == 0:
                    gain[v] -= weights[e]
        heap = [(-g, v) for v, g in enumerate(gain)]
        heapq.heapify(heap)
        locked = [False] * len(vw)
        weight1 = sum(w for w, s in zip(vw, side, strict=True) if s)
        moves: list[int] = []
        total = best_total = best_at = 0
        # a pass that has not improved for a while seldom does later
        patience = max(_PATIENCE, len(vw) // 4)
        while heap and len(moves) - best_at < patience:
            g, v = heapq.heappop(heap)
            if locked[v] or -g != gain[v]:
                continue
            after = weight1 + (vw[v] if side[v] == 0 else -vw[v])
            # a move must keep the balance, or bring an unbalanced side closer to it
            if not low <= after <= high and abs(2 * after - low - high) >= abs(
                2 * weight1 - low - high
            ):
                continue  # stays movable in a later pass
            locked[v] = True
            weight1 = after
            self.move(v, side, counts, gain, locked, heap, heapq)
            moves.append(v)
            total -= g
            if total > best_total:
                best_total, best_at = total, len(moves)
        for v in moves[best_at:]:  # undo the moves after the best prefix
            side[v] ^= 1
        return best_total > 0

    def move(
        self,
        v: int,
        side: list[int],
        counts: list[list[int]],
        gain: list[int],
        locked: list[bool],
        heap: list[tuple[int, int]],
        heapq: Any,
    ) -> None:
        """Move ``v`` to the other side, updating the gains of the free vertices it touches.

        ``heapq`` is `refine_pass`'s (`heap_functions`), asked once per pass.
        """
        edges, weights = self.edges, self.edge_weights
        source = side[v]
        target = 1 - source
        changed: set[int] = set()
        for e in self.incident[v]:
            w, count, pins = weights[e], counts[e], edges[e]
            if count[target] == 0:  # the edge becomes cut: moving the others undoes it
                for u in pins:
                    if not locked[u]:
                        gain[u] += w
                        changed.add(u)
            elif count[target] == 1:  # its lone pin on the target side no longer uncuts it
                for u in pins:
                    if side[u] == target and not locked[u]:
                        gain[u] -= w
                        changed.add(u)
            count[source] -= 1
            count[target] += 1
            if count[source] == 0:  # the edge is uncut: moving any pin cuts it again
                for u in pins:
                    if not locked[u]:
                        gain[u] -= w
                        changed.add(u)
            elif count[source] == 1:  # its lone pin left behind would now uncut it
                for u in pins:
                    if side[u] == source and u != v and not locked[u]:
                        gain[u] += w
                        changed.add(u)
        side[v] = target
        for u in sorted(changed):
            heapq.heappush(heap, (-gain[u], u))


def _shuffle(items: list[int], rng: Random) -> None:
    for i in range(len(items) - 1, 0, -1):
        j = rng.below(i + 1)
        items[i], items[j] = items[j], items[i]


def bisect(graph: Hypergraph, rng: Random, imbalance: int, tries: int) -> list[int]:
    """Split a hypergraph in two sides of about equal weight with a small cut.

    Args:
        graph: The hypergraph.
        rng: Randomness for the matching and the starts.
        imbalance: How far from half a side's weight may be, in percent of half.
        tries: Starts on the coarsest level.

    Returns:
        The side (0 or 1) of each vertex.
    """
    total = sum(graph.vertex_weights)
    low = max(1, total * (100 - imbalance) // 200)
    high = min(total - 1, -(-total * (100 + imbalance) // 200))
    levels: list[tuple[Hypergraph, list[int]]] = []
    coarse = graph
    while len(coarse.vertex_weights) > _COARSEST:
        step = coarse.coarsen(rng)
        if step is None:
            break
        levels.append((coarse, step[1]))
        coarse = step[0]
    best_side: list[int] = []
    best_cut = -1
    for _ in range(tries):
        side = coarse.grow(rng, low + rng.below(high - low + 1))
        coarse.refine(side, low, high)
        cut = coarse.cut(side)
        if best_cut < 0 or cut < best_cut:
            best_side, best_cut = side, cut
    side = best_side
    for fine, mapping in reversed(levels):
        side = [side[c] for c in mapping]
        fine.refine(side, low, high)
    for _ in range(_VCYCLES):  # coarsen again within the sides, refine on the way up
        levels, coarse, coarse_side = [], graph, side
        while len(coarse.vertex_weights) > _COARSEST:
            step = coarse.coarsen(rng, coarse_side)
            if step is None:
                break
            levels.append((coarse, step[1]))
            coarse, mapping = step
            projected = [0] * len(coarse.vertex_weights)
            for v, c in enumerate(mapping):
                projected[c] = coarse_side[v]
            coarse_side = projected
        coarse.refine(coarse_side, low, high)
        for fine, mapping in reversed(levels):
            coarse_side = [coarse_side[c] for c in mapping]
            fine.refine(coarse_side, low, high)
        side = coarse_side
    return side


def _hypergraph(
    net: BitNetwork, members: list[int], holders: dict[int, int], log_weights: bool = True
) -> Hypergraph:
    """The hypergraph of some operands: their summed axes with two or more of them.

    Each edge weighs the logarithm of its axis's size, or one unit (``log_weights`` false).
    """
    position = {op: i for i, op in enumerate(members)}
    inside = 0
    for op in members:
        inside |= 1 << op
    axes = 0
    for op in members:
        axes |= net.inputs[op]
    edges, weights = [], []
    for bit in bits_of(axes & ~net.output):
        pins = holders[bit] & inside
        if pins & (pins - 1):
            edges.append([position[p.bit_length() - 1] for p in bits_of(pins)])
            weights.append(max(1, log2_fixed(net.size(bit))) if log_weights else FIXED)
    return Hypergraph([1] * len(members), edges, weights)


def partition_tree(
    net: BitNetwork,
    rng: Random,
    imbalance: int,
    leaf_size: int,
    tries: int = 2,
    split_by: Callable[[Hypergraph, Random, int], list[int]] | None = None,
    log_weights: bool = True,
) -> dict[int, int]:
    """A contraction tree of all operands of ``net`` by recursive bisection.

    Args:
        net: The network.
        rng: Randomness for the partitioner.
        imbalance: How far from even each split may be, in percent.
        leaf_size: Parts of at most this many operands are not split further: up
            to five get their exact best tree, larger ones the greedy path.
        tries: Starts per bisection of the own bisector.
        split_by: Another bisector (`_kahypar.bisector`), given the hypergraph,
            ``rng`` and ``imbalance`` (None: `bisect`).
        log_weights: Weigh each axis by the logarithm of its size (else all alike).

    Returns:
        The tree as the ``split`` of a `ContractionTree`.
    """
    holders = net.holders(range(len(net.inputs)))
    split: dict[int, int] = {}
    todo = [list(range(len(net.inputs)))]
    while todo:
        members = todo.pop()
        if len(members) <= leaf_size and _leaf(net, members, holders, split):
            continue
        graph = _hypergraph(net, members, holders, log_weights)
        if split_by is None:
            side = bisect(graph, rng, imbalance, tries)
        else:
            side = split_by(graph, rng, imbalance)
        parts = (
            [m for m, s in zip(members, side, strict=True) if not s],
            [m for m, s in zip(members, side, strict=True) if s],
        )
        if not parts[0] or not parts[1]:  # nothing links them: halve
            half = len(members) // 2
            parts = (members[:half], members[half:])
        split[_bits(members)] = _bits(parts[0])
        todo.extend(parts)
    return split


def _bits(members: list[int]) -> int:
    mask = 0
    for op in members:
        mask |= 1 << op
    return mask


def _legs(net: BitNetwork, members: list[int], holders: dict[int, int]) -> tuple[int, int]:
    """All axes of some operands, and their legs: axes of the output or of other operands."""
    inside = _bits(members)
    axes = 0
    for op in members:
        axes |= net.inputs[op]
    outside = net.output
    for bit in bits_of(axes & ~net.output):
        if holders[bit] & ~inside:
            outside |= bit
    return axes, axes & outside


def _leaf(
    net: BitNetwork, members: list[int], holders: dict[int, int], split: dict[int, int]
) -> bool:
    """Add a tree of a part to ``split``: exact up to `_EXACT_MAX` operands, else greedy.

    Returns:
        False where the greedy path joins more than two at once (a part in pieces).
    """
    if len(members) <= _EXACT_MAX:
        _exact(net, members, holders, split)
        return True
    axes, legs = _legs(net, members, holders)
    name = net.axes
    sub = BitNetwork(
        [tuple(name[bit.bit_length() - 1] for bit in bits_of(net.inputs[op])) for op in members],
        tuple(name[bit.bit_length() - 1] for bit in bits_of(legs)),
        {name[bit.bit_length() - 1]: net.size(bit) for bit in bits_of(axes)},
        write_weight=net.write_weight,
    )
    plan_greedy(sub)
    tree = ContractionTree.from_path(sub)
    if tree is None:
        return False
    for s, a in tree.split.items():
        split[_local(s, members)] = _local(a, members)
    return True


def _exact(
    net: BitNetwork, members: list[int], holders: dict[int, int], split: dict[int, int]
) -> None:
    """Add the exact best tree of a few operands to ``split``."""
    if len(members) < 2:
        return
    inputs = [net.inputs[op] for op in members]
    legs = _legs(net, members, holders)[1]
    trees = optimize_subsets(net, inputs, [0] * len(inputs), legs)
    todo = [(1 << len(members)) - 1]
    while todo:
        s = todo.pop()
        if s & (s - 1):
            a = trees.split[s]
            split[_local(s, members)] = _local(a, members)
            todo += [a, s ^ a]


def _local(s: int, members: list[int]) -> int:
    return _bits([members[low.bit_length() - 1] for low in bits_of(s)])
