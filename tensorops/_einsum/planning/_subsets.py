"""The cheapest pairwise tree over every subset of a few tensors, by dynamic programming.

``optimal`` runs it over all operands; subtree reconfiguration
(`_reconfigure`) runs it over the handful of parts a
subtree is cut into. Vocabulary as in `_bitnet`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from tensorops._einsum.planning._bitnet import BitNetwork

__all__ = ["INF", "SubsetTrees", "cover", "optimize_subsets", "subset_tables"]

INF = 1 << 512  # an int sentinel keeps costs exact and comparable


class SubsetTrees(NamedTuple):
    """The best tree of every subset of some tensors, indexed by the subset's bitset.

    Attributes:
        best: Its cost (`INF` where the memory limit forbids it or, without
            outer products, where its tensors are not linked).
        split: The part holding its lowest tensor in its best split in two.
        legs: The axes it keeps (those of the output or of the other tensors).
        axes: The axes it is used with (its tensor's for one tensor, else its legs).
    """

    best: list[int]
    split: list[int]
    legs: list[int]
    axes: list[int]


def subset_tables(
    inputs: Sequence[int], dangling: Sequence[int], output: int
) -> tuple[list[int], list[int], list[int], list[int], list[int]]:
    """The starting tables of a search over all subsets of some tensors, indexed by bitset.

    Args:
        inputs: Axes of each tensor.
        dangling: Axes of each tensor that it may sum on its own first.
        output: Axes of the result of contracting all of them.

    Returns:
        Per subset: the axes it keeps (those of the output or of the other tensors),
        the axes it is used with (its tensor's for one tensor), its dangling axes,
        its best cost (0 for one tensor, else `INF`), and its best split (0).
    """
    full = (1 << len(inputs)) - 1
    axes = [0] * (full + 1)
    for s in range(1, full + 1):
        low = s & -s
        axes[s] = axes[s ^ low] | inputs[low.bit_length() - 1]
    legs = [axes[s] & (output | axes[full ^ s]) for s in range(full + 1)]
    used, dangling_of = legs[:], [0] * (full + 1)
    best, split = [INF] * (full + 1), [0] * (full + 1)
    for i, mask in enumerate(inputs):
        used[1 << i], dangling_of[1 << i], best[1 << i] = mask, dangling[i], 0
    return legs, used, dangling_of, best, split


def optimize_subsets(
    net: BitNetwork,
    inputs: Sequence[int],
    dangling: Sequence[int],
    output: int,
    outer: bool = True,
) -> SubsetTrees:
    """Find the cheapest pairwise tree over every subset of some tensors of ``net``.

    Subsets are visited in increasing order, so the parts of each are done before
    it; each split in two is tried once (the first part holds the lowest tensor).

    Args:
        net: The network, for axis sizes, the memory limit and the write weight.
        inputs: Axes of each tensor.
        dangling: Axes of each tensor that it may sum on its own first (0 for
            intermediate results).
        output: Axes of the result of contracting all of them.
        outer: Whether steps may multiply tensors that share no axis.

    Returns:
        The best tree of each subset.
    """
    full = (1 << len(inputs)) - 1
    legs, used, dangling_of, best, split = subset_tables(inputs, dangling, output)
    size, cache, limit, weight = net.size, net.size_cache, net.limit, net.write_weight
    sizes = [1] * (full + 1)
    for i, mask in enumerate(inputs):
        sizes[1 << i] = cache.get(mask) or size(mask)
    # without outer products, a subset whose tensors are not linked has no split
    # into two linked parts that share an axis, so it stays at INF
    for s in range(3, full + 1):
        if not s & (s - 1):
            continue
        result = legs[s]
        if s != full and limit is not None and size(result) > limit:
            continue
        low = s & -s
        rest = sub = s ^ low
        best_cost = INF
        while sub:
            sub = (sub - 1) & rest
            a = low | sub
            b = s ^ a
            cost = best[a] + best[b]
            if cost >= best_cost:  # also when a part is forbidden or not linked
                continue
            shared = used[a] & used[b]
            if not (outer or shared):
                continue
            if dangling_of[a] or dangling_of[b]:
                cost += net.pair_cost(used[a], dangling_of[a], used[b], dangling_of[b], result)[0]
            else:
                # inlined pair cost: hot loop, see benchmarks/einsum_planning.py
                flops = sizes[a] * sizes[b] // (cache.get(shared) or size(shared))
                cost += flops * 2 if used[a] | used[b] != result else flops
            if cost < best_cost:
                best_cost, split[s] = cost, a
        if best_cost < INF:
            # the result's size from its best split's: those of the few shared and
            # summed axes are mostly cached, a loop over the result's axes is not
            ua, ub = used[split[s]], used[s ^ split[s]]
            shared, gone = ua & ub, (ua | ub) & ~result
            divisor = (cache.get(shared) or size(shared)) * (cache.get(gone) or size(gone))
            sizes[s] = sizes[split[s]] * sizes[s ^ split[s]] // divisor
            best[s] = best_cost + weight * sizes[s] if weight else best_cost
    return SubsetTrees(best, split, legs, used)


def cover(costs: Mapping[int, int]) -> list[int]:
    """Pick disjoint feasible subsets from ``costs`` covering every operand, largest first."""
    chosen: list[int] = []
    taken = 0
    for part in sorted(costs, key=lambda s: (-s.bit_count(), costs[s], s)):
        if costs[part] < INF and part and not part & taken:
            chosen.append(part)
            taken |= part
    return chosen
