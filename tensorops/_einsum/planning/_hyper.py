"""A search for cheap contraction trees of large networks, within a budget of work.

Gray and Kourtis (Quantum 5, 410, 2021) reach far cheaper trees than one greedy
path on large networks by sampling many trees (greedy paths with randomised
scores, partitions of the network) and refining the best by subtree
reconfiguration. This search does the same in three phases:

1. **starts**: the greedy path, then within a quarter of the budget the greedy
   path by result size alone and greedy paths whose pair scores are perturbed
   (`random_scorer`), then within a quarter of the rest partition trees
   (`_partition`, bisected by KaHyPar when installed, `_kahypar`), which only
   budgets like ``hyper``'s afford;
2. **settle**: the cheapest greedy starts and the partition trees are
   reconfigured by the fixed cuts of
   `improve`;
3. **refine**: the best two get passes of reconfiguration with random cuts, into
   five to seven parts, the worse dropped after two passes, until the budget is
   spent or every cut has been tried.

Work is counted, not timed (`Effort`): the same network gets the same path on
every machine. The randomness comes from `_prng`, seeded by
the network. Only ``hyper`` with ``max_time`` also stops at a deadline.
"""

from __future__ import annotations

import time

from tensorops._einsum.planning._bitnet import BitNetwork
from tensorops._einsum.planning._greedy import Scorer, plan_greedy
from tensorops._einsum.planning._kahypar import bisector
from tensorops._einsum.planning._partition import partition_tree
from tensorops._einsum.planning._prng import GUMBEL, Random, fingerprint, log2_fixed
from tensorops._einsum.planning._reconfigure import ContractionTree

__all__ = [
    "Effort",
    "greedy_work",
    "network_seed",
    "partition_work",
    "plan_partitioned",
    "random_scorer",
    "search",
]

# Work units are splits tried by the subset search (reconfigure_work); a greedy path
# takes about as long as this many per operand, and a partition tree this many per
# operand and level.
_GREEDY_WORK_PER_OPERAND = 20
_START_SHARE = 4  # 1/4 of the budget goes to start trees
_MAX_STARTS = 64
_SETTLE = 3  # greedy starts settled by the fixed cuts
_PARTITION_SHARE = 4  # at most 1/4 of the budget goes to partition trees
_MAX_PARTITIONS = 32
_SETTLE_PARTITIONS = 4  # the cheapest partition trees settled beside the greedy starts
_IMBALANCES = (1, 3, 5, 10, 15, 20, 30, 45, 60)  # percent
_LEAF_SIZES = (3, 4, 5)
_PARTITION_WORK_PER_OPERAND = 40
_PARTITIONED_TREES = 16  # trees the "partition" strategy samples
_POPULATION = 2  # trees refined side by side at first
_RUNG = 2  # passes between two halvings of the population
_REFINE_PARTS = (5, 6, 5, 7)  # parts per random pass, in turn


class Effort:
    """How much work a search may do, and optionally until when.

    Args:
        work: Work units (see `greedy_work`) the search may spend.
        deadline: A `time.perf_counter` time to stop at (None: none).
    """

    __slots__ = ("deadline", "spent", "work")

    def __init__(self, work: int, deadline: float | None = None) -> None:
        self.work, self.deadline, self.spent = work, deadline, 0

    def left(self) -> int:
        """Return the work units left (0 once the deadline has passed)."""
        if self.deadline is not None and time.perf_counter() >= self.deadline:
            return 0
        return max(0, self.work - self.spent)

    def found(self, cost: int) -> None:
        """Hear of a tree of ``cost`` (a progress bar shows the best); nothing here."""

    def share(self, part: int) -> Effort:
        """A budget of ``1 / part`` of what is left (work, and time to the deadline)."""
        deadline = self.deadline
        if deadline is not None:
            now = time.perf_counter()
            deadline = now + max(0.0, deadline - now) / part
        return Effort(self.left() // part, deadline)


def greedy_work(n: int) -> int:
    """Return the work units of one greedy path over ``n`` operands."""
    return _GREEDY_WORK_PER_OPERAND * n


def network_seed(net: BitNetwork) -> int:
    """A seed from the network itself: its operands, output and axis sizes."""
    sizes = [net.size_cache[1 << i] for i in range(len(net.axes))]
    return fingerprint([len(net.inputs), *net.inputs, net.output, *sizes])


def random_scorer(rng: Random, weight: int, temperature: int) -> Scorer:
    """A greedy pair score with random noise, for sampling many greedy paths.

    The score is ``size(ab) - weight / 16 * (size(a) + size(b))`` on a signed
    logarithmic scale, minus ``temperature / 16`` times a Gumbel sample: the pair
    picked is then drawn among the good ones with Boltzmann weights.

    Args:
        rng: The randomness.
        weight: Weight of the operands' sizes, in sixteenths.
        temperature: Spread of the noise, in sixteenths of a doubling.
    """
    draw = rng.next

    def score(result_size: int, operands_size: int) -> int:
        base = 16 * result_size - weight * operands_size
        key = log2_fixed(base) if base > 0 else -log2_fixed(-base)
        return 16 * key - temperature * GUMBEL[draw() >> 54]

    return score


def _sample_scorer(rng: Random) -> Scorer:
    # 0 to 6: lattices want a high weight (cotengra's search finds about 4 on the
    # 5x5x5 lattice, where weights up to 2 stay 4x costlier)
    weight = rng.below(97)
    temperature = (1, 2, 4, 8, 16, 32)[rng.below(6)]  # 1/16 to 2 doublings
    return random_scorer(rng, weight, temperature)


def _starts(
    net: BitNetwork, effort: Effort, rng: Random, again: bool
) -> list[tuple[int, list[tuple[int, ...]]]]:
    """Plan start paths: the greedy path, then by result size and randomised, by budget.

    The path already planned in ``net``, if any, is the greedy path. Other paths
    are planned while their share of the budget lasts; each costs the work of a
    greedy path plus a unit per pair it scored. ``again``: randomised paths only.
    """
    n = len(net.inputs)
    found: dict[tuple[tuple[int, ...], ...], int] = {}
    if not again:
        if not net.ssa:
            plan_greedy(net)
            effort.spent += greedy_work(n)
        found[tuple(net.ssa)] = net.cost()
    share = effort.share(_START_SHARE)
    for number in range(again, _MAX_STARTS + 1):
        if share.left() < greedy_work(n) and (found or not effort.left()):
            break
        net.ssa = []
        draws = rng.draws
        if number == 0:
            total = plan_greedy(net, weight=0)
        else:
            total = plan_greedy(net, scorer=_sample_scorer(rng))
        share.spent += greedy_work(n) + rng.draws - draws
        found.setdefault(tuple(net.ssa), net.cost() if total is None else total)
    effort.spent += share.spent
    ranked = sorted(found.items(), key=lambda item: (item[1], item[0]))
    return [(cost, list(ssa)) for ssa, cost in ranked]


def _partition_starts(net: BitNetwork, effort: Effort, rng: Random) -> list[ContractionTree]:
    """The cheapest trees by recursive bisection, within a share of the budget.

    Each tree samples the imbalance, the leaf size and the weights of the edges
    (logarithm of the size, or even); KaHyPar bisects when it is installed.
    """
    cost = partition_work(len(net.inputs))
    share = effort.share(_PARTITION_SHARE)
    split_by = bisector()
    trees: list[tuple[int, int, ContractionTree]] = []
    while len(trees) < _MAX_PARTITIONS and share.left() >= cost:
        imbalance = _IMBALANCES[rng.below(len(_IMBALANCES))]
        leaf_size = _LEAF_SIZES[rng.below(len(_LEAF_SIZES))]
        log_weights = rng.below(4) > 0
        split = partition_tree(
            net, rng, imbalance, leaf_size, split_by=split_by, log_weights=log_weights
        )
        tree = ContractionTree(net, split)
        trees.append((tree.cost(), len(trees), tree))
        share.spent += cost
    effort.spent += share.spent
    trees.sort(key=lambda item: item[:2])
    return [tree for *_, tree in trees[:_SETTLE_PARTITIONS]]


def partition_work(n: int) -> int:
    """Return the work units of one partition tree over ``n`` operands."""
    return _PARTITION_WORK_PER_OPERAND * n * max(1, n.bit_length())


def plan_partitioned(net: BitNetwork, seed: int | None = None) -> None:
    """The ``partition`` strategy: the cheapest of a few bisection trees, settled.

    `_PARTITIONED_TREES` trees by recursive bisection (sampled as the search's
    partition starts are), the cheapest four reconfigured by the fixed cuts
    within three times the work of sampling them. Deterministic for a seed.
    """
    rng = Random(network_seed(net) if seed is None else seed)
    sampling = partition_work(len(net.inputs)) * _PARTITIONED_TREES
    effort = Effort(sampling * _PARTITION_SHARE)  # a quarter samples, the rest settles
    settled = _settle([(0, tree) for tree in _partition_starts(net, effort, rng)], effort)
    settled.sort(key=lambda item: item[0])  # stable: the first of equals wins
    settled[0][1].emit()


def search(net: BitNetwork, effort: Effort, seed: int | None = None) -> None:
    """Plan ``net`` by sampling start trees and refining the best, within ``effort``.

    When the refined trees can gain nothing more before the budget is spent, the
    search starts again from new randomised starts, and keeps the cheapest tree.

    Args:
        net: The network (without a memory limit: trees are not checked against it),
            with its greedy path planned already or no path.
        effort: The budget; the path planned is the cheapest found when it runs out.
        seed: Seed of the randomness (None: from the network).
    """
    rng = Random(network_seed(net) if seed is None else seed)
    best: ContractionTree | None = None
    best_cost = 0
    again = False
    while not again or effort.left():
        spent = effort.spent
        starts = _starts(net, effort, rng, again)
        population: list[tuple[int, ContractionTree]] = []
        for _, ssa in starts[:_SETTLE]:
            net.ssa = ssa
            tree = ContractionTree.from_path(net)
            if tree is not None:
                population.append((0, tree))
        if not population:  # no pairwise start: keep the cheapest path as it is
            net.ssa = starts[0][1]
            return
        population += [(0, tree) for tree in _partition_starts(net, effort, rng)]
        tree = _refine(_settle(population, effort), effort, rng)
        cost = tree.cost()
        if best is None or cost < best_cost:
            best, best_cost = tree, cost
        if effort.spent == spent:  # nothing was affordable
            break
        again = True
    if best is not None:
        best.emit()


def _settle(
    population: list[tuple[int, ContractionTree]], effort: Effort
) -> list[tuple[int, ContractionTree]]:
    """Reconfigure each tree by the fixed cuts, within the budget; return them with costs."""
    settled = []
    for _, tree in population:
        before = tree.work
        tree.improve(5, 3, budget=before + effort.left(), deadline=effort.deadline)
        effort.spent += tree.work - before
        settled.append((tree.cost(), tree))
        effort.found(settled[-1][0])
    return settled


def _refine(
    population: list[tuple[int, ContractionTree]], effort: Effort, rng: Random
) -> ContractionTree:
    """Reconfigure trees with random cuts until the budget is spent; return the cheapest.

    Successive halving: every few passes the costlier half of the trees is dropped,
    so most of the budget goes to the most promising.
    """
    population.sort(key=lambda item: item[0])
    del population[_POPULATION:]
    number = 0
    while effort.left():
        worked = False
        k = _REFINE_PARTS[number % len(_REFINE_PARTS)]
        for i, (_, tree) in enumerate(population):
            before = tree.work
            tree.improve_pass(k, rng=rng, budget=before + effort.left(), deadline=effort.deadline)
            effort.spent += tree.work - before
            worked |= tree.work > before
            population[i] = (tree.cost(), tree)
            effort.found(population[i][0])
            if not effort.left():
                break
        if not worked:  # every cut of every tree was tried: nothing left to gain
            break
        number += 1
        if number % _RUNG == 0 and len(population) > 1:
            population.sort(key=lambda item: item[0])
            del population[(len(population) + 1) // 2 :]
    population.sort(key=lambda item: item[0])  # min(key=...) does not trace under Dynamo
    return population[0][1]
