"""The ``auto`` and ``hyper`` strategies: effort sized by what the contraction costs.

``auto`` plans exactly when that is cheap and otherwise improves the greedy path as
far as it pays, pricing the run at 10 GFLOP/s and letting the improvement take about
a tenth of one run:

* up to five operands, ``optimal``; up to eight, ``dp`` if it finishes within
  10_000 candidate pairs (a few tenths of a millisecond);
* otherwise the greedy path, improved with work (see `_hyper.Effort`) in
  proportion to its cost, one unit per 250_000 FLOPs, up to 120_000 units. A
  path of about 2e7 FLOPs or less runs in a few milliseconds and keeps greedy's
  order: no improvement would repay its planning time in one run;
* up to twenty operands the work re-plans the costliest subtrees first (five
  parts at a time, at most three passes), and for paths of 1e7 FLOPs per operand
  a second greedy path (smallest result first) too; past twenty it goes to the
  search of `_hyper`;
* up to thirty operands, ``dp`` within a budget in proportion to the cost.

Each step only replaces a path by a cheaper one, so ``auto`` is never worse than
``greedy``. All effort is counted in work, never timed, so the path depends only on
the network. ``hyper`` runs the same search with a larger budget, or until a
deadline (``max_time``), and adds partition trees to its starts.
"""

from __future__ import annotations

import time

from tensorops._einsum.planning._bitnet import BitNetwork
from tensorops._einsum.planning._dp import improve_by_dp, plan_optimal
from tensorops._einsum.planning._greedy import greedy_cost, plan_greedy
from tensorops._einsum.planning._hyper import greedy_work, plan_partitioned, search
from tensorops._einsum.planning._progress import planning_effort
from tensorops._einsum.planning._reconfigure import ContractionTree, reconfigure_work

__all__ = ["HYPER_DEFAULT_WORK", "plan_auto", "plan_hyper", "plan_partition"]

_AUTO_OPTIMAL_MAX = 5
# dp within this many candidate pairs is tried first up to eight operands: it fits
# most such networks, is then exact, and takes a few tenths of a millisecond
_AUTO_DP_FIRST = (8, 10_000)
# The cost model: a unit of work (a split tried by the subset search, about a
# microsecond) is worth 250_000 FLOPs of the run, which keeps planning near a tenth
# of the run at 10 GFLOP/s (benchmarks/einsum_planning.py measures both); at most
# 120_000 units.
_AUTO_FLOPS_PER_WORK, _AUTO_MAX_WORK = 250_000, 120_000
_AUTO_PARTS, _AUTO_ROUNDS = 5, 3  # subtrees re-planned five parts at a time, 3 passes
# Re-planning subtrees costs, besides the splits tried, about 5 units per operand to
# read the tree, cost it and emit it, and about 15 per subset search to set it up:
# a search of two parts costs about as much as 15 splits of one of five
_TREE_WORK_PER_OPERAND, _CALL_WORK = 5, 15
# Up to twenty operands the work re-plans the greedy path's subtrees, and those of a
# second greedy path (smallest result first) for paths of 1e7 FLOPs per operand and
# more; past twenty it goes to the search, which starts by re-planning the costliest
# subtrees of the greedy path once it has the work of a greedy path. dp gets a
# candidate pair per 50_000 FLOPs, if that makes 10_000 pairs, as a smaller budget
# seldom completes past twelve operands; pairs cost more as the search grows, so
# 50_000 is the most.
_AUTO_RECONFIGURE_MAX, _AUTO_RECONFIGURE_FLOPS = 20, 10_000_000
_AUTO_DP_MAX, _AUTO_FLOPS_PER_PAIR = 30, 50_000
_AUTO_MIN_PAIRS, _AUTO_MAX_PAIRS = 10_000, 50_000

_HYPER_DP_PAIRS = 500_000  # dp for up to thirty operands: seconds at most

HYPER_DEFAULT_WORK = 1_000_000
"""Work units of ``hyper`` without ``max_time`` (a few seconds), deterministic."""


def _reconfigure(net: BitNetwork, work: int | None = None) -> int:
    """Re-plan the subtrees of the path planned in ``net``, costliest first; return its cost.

    Args:
        net: The network, with a complete path.
        work: Most work units, reading the tree included (None: as many as the
            passes take).
    """
    tree = ContractionTree.from_path(net, _CALL_WORK)
    if tree is None:  # the memory limit made one step of several
        return net.cost()
    before = tree.cost()
    budget = None
    if work is not None:  # the last search may start just under the budget
        budget = work - _least_work(net)
    tree.improve(_AUTO_PARTS, _AUTO_ROUNDS, budget)
    after = tree.cost()
    if after < before:
        tree.emit()
    return after


def _least_work(net: BitNetwork) -> int:
    """Return the work of re-planning one subtree of ``net``'s path, reading the tree included."""
    return _TREE_WORK_PER_OPERAND * len(net.inputs) + _CALL_WORK + reconfigure_work(_AUTO_PARTS)


def _improve_trees(net: BitNetwork, cost: int, work: int | None) -> int:
    """Re-plan the greedy path's subtrees, and a second greedy path's when costly."""
    first = _reconfigure(net, work)
    n = len(net.inputs)
    if n > _AUTO_RECONFIGURE_MAX or cost < n * _AUTO_RECONFIGURE_FLOPS:
        return first
    path, net.ssa = net.ssa, []
    plan_greedy(net, weight=0)
    second = _reconfigure(net, work)
    if second >= first:
        net.ssa = path
    return min(first, second)


def plan_auto(net: BitNetwork) -> None:
    """Plan exactly when that is cheap, else improve the greedy path as far as it pays."""
    n = len(net.inputs)
    if n <= _AUTO_OPTIMAL_MAX:
        plan_optimal(net)
        return
    cost = greedy_cost(net)
    if n <= _AUTO_DP_FIRST[0] and improve_by_dp(net, _AUTO_DP_FIRST[1], cost):
        return
    work = min(cost // _AUTO_FLOPS_PER_WORK, _AUTO_MAX_WORK)
    if n > _AUTO_RECONFIGURE_MAX and net.limit is None and work >= greedy_work(n):
        with planning_effort(work, None, "auto") as effort:
            search(net, effort)
        cost = net.cost()
    elif work >= _least_work(net):
        cost = _improve_trees(net, cost, work)
    budget = min(cost // _AUTO_FLOPS_PER_PAIR, _AUTO_MAX_PAIRS)
    if n <= _AUTO_DP_MAX and budget >= _AUTO_MIN_PAIRS:
        improve_by_dp(net, budget, cost)


def plan_hyper(net: BitNetwork, max_time: float | None = None, seed: int | None = None) -> None:
    """Search for a cheap tree for a network contracted many times.

    Args:
        net: The network. Up to twenty operands, or under a memory limit (which
            the search does not check): the greedy path with every subtree
            re-planned, then ``dp`` within 500_000 candidate pairs.
        max_time: Seconds to search (wall time: the path then depends on the
            machine's speed); None: `HYPER_DEFAULT_WORK` units of work.
        seed: Seed of the search's randomness past twenty operands (None: one
            derived from the network, so a network always gets the same path).
    """
    n = len(net.inputs)
    if n <= _AUTO_OPTIMAL_MAX:
        plan_optimal(net)
        return
    if n <= _AUTO_RECONFIGURE_MAX or net.limit is not None:
        cost = _improve_trees(net, greedy_cost(net), None)
        if n <= _AUTO_DP_MAX:
            improve_by_dp(net, _HYPER_DP_PAIRS, cost)
        return
    work, deadline = HYPER_DEFAULT_WORK, None
    if max_time is not None:
        work, deadline = 1 << 62, time.perf_counter() + max_time
    with planning_effort(work, deadline, "hyper") as effort:
        search(net, effort, seed)


def plan_partition(net: BitNetwork, seed: int | None = None) -> None:
    """Trees by recursive bisection past twenty operands (`plan_partitioned`).

    Up to twenty operands, or under a memory limit (which bisection does not
    check), it plans as ``auto`` does.
    """
    if len(net.inputs) <= _AUTO_RECONFIGURE_MAX or net.limit is not None:
        plan_auto(net)
    else:
        plan_partitioned(net, seed)
