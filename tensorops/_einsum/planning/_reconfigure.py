"""Improve a contraction tree by re-planning its subtrees exactly.

A pairwise path is a binary tree over the operands; each internal node is the set
of operands it contracts. Subtree reconfiguration (as in cotengra: Gray and
Kourtis, Quantum 5, 410, 2021) takes a node, cuts the tree below it into at most
``k`` parts, and replaces the steps that join those parts by the cheapest ones
without outer products (`optimize_subsets`). The
axes of a node do not depend on how it was made, so the rest of the tree keeps its
cost, and a replacement is taken only when it is cheaper: the path never gets worse.

Where to cut matters as much as ``k``: the passes over the tree alternate between
cutting below the largest intermediate first and cutting into the parts with the
most operands first, which reach different neighbouring trees. Passes that cut at
random (with a `Random`) reach many more: from one
start they keep finding cheaper trees long after the fixed cuts have settled,
which makes them the workhorse of the large-network search
(`_hyper`).
"""

from __future__ import annotations

import time

from tensorops._einsum.planning._bitnet import BitNetwork, bits_of
from tensorops._einsum.planning._prng import Random
from tensorops._einsum.planning._subsets import optimize_subsets

__all__ = ["ContractionTree", "reconfigure_work"]

# how the passes choose the part to cut next: by the size of its tensor, by how
# many operands it holds, or at random
_BY_SIZE, _BY_COUNT, _AT_RANDOM = 0, 1, 2


def _count(s: int) -> int:
    return s.bit_count()


def reconfigure_work(k: int) -> int:
    """Return the work of re-planning ``k`` parts: the splits the subset search tries."""
    return (int(3**k) + 1) // 2 - (1 << k)


class ContractionTree:
    """A pairwise contraction tree over the operands of a network, on bitsets.

    Args:
        net: The network.
        split: For each internal node (a set of operands), one of its two parts.
        call_work: Work units counted for each subset search on top of its splits
            (`reconfigure_work`): its set-up, which dominates searches of few parts.

    Attributes:
        net: The network.
        split: The tree; its root is the set of all operands.
        work: Work units spent by the subset searches so far.
    """

    def __init__(self, net: BitNetwork, split: dict[int, int], call_work: int = 0) -> None:
        self.net, self.split, self.call_work = net, split, call_work
        self.work = 0
        self.full = (1 << len(net.inputs)) - 1
        self.holders = net.holders(range(len(net.inputs)))
        self.legs_of: dict[int, int] = {1 << i: mask for i, mask in enumerate(net.inputs)}
        self.step_costs: dict[int, int] = {}
        self.tried: set[tuple[int, ...]] = set()  # (node, *parts) that gained nothing
        # nodes whose subtree was re-planned from its operands: no cut can gain there
        self.settled: set[int] = set()
        for s in sorted(split, key=_count):  # parts before the nodes they make
            self.legs(s, split[s])

    @classmethod
    def from_path(cls, net: BitNetwork, call_work: int = 0) -> ContractionTree | None:
        """Read the tree of the path planned in ``net``; None if a step joins more than two."""
        sets = [1 << i for i in range(len(net.inputs))]
        split: dict[int, int] = {}
        for step in net.ssa:
            if len(step) > 2:
                return None
            if len(step) == 1:  # an input summed on its own: still that operand
                sets.append(sets[step[0]])
                continue
            a, b = sets[step[0]], sets[step[1]]
            split[a | b] = a
            sets.append(a | b)
        return cls(net, split, call_work)

    def legs(self, s: int, a: int) -> int:
        """Return (and remember) the axes of node ``s``, made of part ``a`` and the rest."""
        legs = self.legs_of.get(s)
        if legs is None:
            b, net = s ^ a, self.net
            legs_a, legs_b = self.legs_of[a], self.legs_of[b]
            # an axis can end at this step only if both parts have it, or if it is
            # an input's own axis that nothing else has
            ending = legs_a & legs_b & ~net.output
            ending |= 0 if a & (a - 1) else net.dangling[a.bit_length() - 1]
            ending |= 0 if b & (b - 1) else net.dangling[b.bit_length() - 1]
            closed = sum(bit for bit in bits_of(ending) if not self.holders[bit] & ~s)
            legs = self.legs_of[s] = (legs_a | legs_b) & ~closed
        return legs

    def step_cost(self, s: int) -> int:
        """Return the cost of the step that makes node ``s`` from its two parts."""
        cost = self.step_costs.get(s)
        if cost is not None:
            return cost
        net, a = self.net, self.split[s]
        b = s ^ a
        ua, ub, result = self.legs_of[a], self.legs_of[b], self.legs_of[s]
        da = 0 if a & (a - 1) else net.dangling[a.bit_length() - 1]
        db = 0 if b & (b - 1) else net.dangling[b.bit_length() - 1]
        if da or db:
            cost = net.pair_cost(ua, da, ub, db, result)[0]
        else:
            cost = net.pair_flops(ua, ub, result)
        if net.write_weight:
            cost += net.write_weight * net.size(result)
        self.step_costs[s] = cost
        return cost

    def cost(self) -> int:
        """Return the cost of the whole tree."""
        return sum(self.step_cost(s) for s in self.split)

    def cut(
        self, s: int, k: int, by: int, rng: Random | None = None
    ) -> tuple[list[int], list[int]]:
        """Cut the subtree at ``s`` into at most ``k`` parts; return them and the steps above."""
        split, size, legs_of = self.split, self.net.size, self.legs_of
        parts, above = [split[s], s ^ split[s]], [s]
        while len(parts) < k:
            best, pick = 0, -1
            if rng is not None:
                inner = [i for i, part in enumerate(parts) if part & (part - 1)]
                pick = inner[rng.below(len(inner))] if inner else -1
            for i, part in enumerate(parts if rng is None else ()):
                if part & (part - 1):
                    score = size(legs_of[part]) if by == _BY_SIZE else part.bit_count()
                    if score > best:
                        best, pick = score, i
            if pick < 0:
                break
            part = parts.pop(pick)
            above.append(part)
            parts += (split[part], part ^ split[part])
        return parts, above

    def reconfigure(self, s: int, k: int, by: int, rng: Random | None = None) -> bool:
        """Re-plan the steps of the subtree at ``s`` above a cut into ``k`` parts.

        Args:
            s: The node.
            k: Most parts.
            by: How to choose the part to cut next.
            rng: Randomness to cut at random instead.

        Returns:
            Whether the tree got cheaper.
        """
        parts, above = self.cut(s, k, by, rng)
        key = (s, *parts)
        if len(parts) < 3 or key in self.tried:
            return False
        self.tried.add(key)
        self.work += self.call_work + reconfigure_work(len(parts))
        current = sum(self.step_cost(p) for p in above)
        net, legs_of = self.net, self.legs_of
        legs = [legs_of[p] for p in parts]
        dangling = [0 if p & (p - 1) else net.dangling[p.bit_length() - 1] for p in parts]
        trees = optimize_subsets(net, legs, dangling, legs_of[s], outer=False)
        best_split, best_legs = trees.split, trees.legs
        local = (1 << len(parts)) - 1
        settled = all(not p & (p - 1) for p in parts)
        if trees.best[local] >= current:
            if settled:
                self.settled.add(s)
            return False
        for p in above:
            del self.split[p]
            self.step_costs.pop(p, None)

        def place(u: int) -> int:
            if not u & (u - 1):
                return parts[u.bit_length() - 1]
            a = best_split[u]
            ga, gb = place(a), place(u ^ a)
            self.split[ga | gb] = ga
            legs_of[ga | gb] = best_legs[u]
            if settled:
                self.settled.add(ga | gb)
            return ga | gb

        place(local)
        return True

    def improve(
        self, k: int, rounds: int, budget: int | None = None, deadline: float | None = None
    ) -> None:
        """Reconfigure every subtree, costliest step first, until nothing gains.

        Args:
            k: Most parts a subtree is cut into.
            rounds: Most passes over the tree.
            budget: Stop once `work` exceeds this.
            deadline: Stop at this `time.perf_counter` time.
        """
        modes, idle = (_BY_SIZE, _BY_COUNT), 0
        for number in range(rounds):
            if budget is not None and self.work > budget:
                return
            by = modes[number % len(modes)]
            changed = self.improve_pass(k, by, budget=budget, deadline=deadline)
            idle = 0 if changed else idle + 1
            if idle == len(modes):
                return

    def improve_pass(
        self,
        k: int,
        by: int = _AT_RANDOM,
        rng: Random | None = None,
        budget: int | None = None,
        deadline: float | None = None,
    ) -> bool:
        """Reconfigure every subtree once, costliest step first.

        Args:
            k: Most parts a subtree is cut into.
            by: How to choose the part to cut next (ignored with ``rng``).
            rng: Randomness to cut at random instead.
            budget: Stop once `work` exceeds this.
            deadline: Stop at this `time.perf_counter` time.

        Returns:
            Whether the tree got cheaper.
        """
        changed = False
        costs = {s: self.step_cost(s) for s in self.split}
        for s in sorted(costs, key=lambda s: (-costs[s], s)):
            if budget is not None and self.work > budget:
                break
            if deadline is not None and time.perf_counter() > deadline:
                break
            if s in self.split and s not in self.settled:
                changed |= self.reconfigure(s, k, by, rng)
        return changed

    def emit(self) -> None:
        """Replace the path planned in the network by this tree's."""
        self.net.ssa = []
        self.net.emit_tree(self.full, self.split, self.legs_of, range(len(self.net.inputs)))
