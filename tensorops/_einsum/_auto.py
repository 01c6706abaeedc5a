"""The ``auto`` and ``hyper`` strategies: effort sized by what the contraction costs.

``auto`` plans exactly when that is cheap and otherwise improves greedy paths as far
as it pays, pricing the run at 10 GFLOP/s and letting planning take about a tenth
of it:

* up to five operands, ``optimal``; up to twelve, ``dp`` if it finishes within
  10_000 candidate pairs;
* up to twenty, the greedy path with its subtrees re-planned five parts at a time;
  costly networks also re-plan a second greedy path (smallest result first);
* past twenty, the search of `_hyper` gets work in
  proportion to the greedy path's cost, up to 120_000 units;
  cheap networks keep today's greedy path, re-planned when it is costly;
* up to thirty operands, ``dp`` within a budget in proportion to the cost.

Each step only replaces a path by a cheaper one, so ``auto`` is never worse than
``greedy``. All effort is counted in work, never timed, so the path depends only on
the network. ``hyper`` runs the same search with a larger budget, or until a
deadline (``max_time``), and adds partition trees to its starts.
"""

from __future__ import annotations

import time

from tensorops._einsum._bitnet import BitNetwork
from tensorops._einsum._dp import improve_by_dp, plan_optimal
from tensorops._einsum._greedy import plan_greedy
from tensorops._einsum._hyper import Effort, greedy_work, search
from tensorops._einsum._reconfigure import ContractionTree

__all__ = ["HYPER_DEFAULT_WORK", "plan_auto", "plan_hyper"]

_AUTO_OPTIMAL_MAX = 5
# dp within this many candidate pairs is tried first up to twelve operands: it fits
# most such networks and is then exact
_AUTO_DP_FIRST = (12, 10_000)
_AUTO_PARTS, _AUTO_ROUNDS = 5, 3  # subtrees re-planned five parts at a time, 3 rounds
# Re-planning the subtrees of a greedy path costs in proportion to the operands: up
# to twenty operands it is always done, and a second greedy path (smallest result
# first) is re-planned too for paths of 1e7 FLOPs per operand and more; past twenty
# without a search, only for such paths. dp gets a candidate pair per 50_000 FLOPs,
# if that makes 10_000 pairs, as a smaller budget seldom completes past twelve
# operands; pairs cost more as the search grows, so 50_000 is the most.
_AUTO_RECONFIGURE_MAX, _AUTO_RECONFIGURE_FLOPS = 20, 10_000_000
_AUTO_DP_MAX, _AUTO_FLOPS_PER_PAIR = 30, 50_000
_AUTO_MIN_PAIRS, _AUTO_MAX_PAIRS = 10_000, 50_000
# The cost model: a unit of search work (a split tried by the subset search) is
# worth 250_000 FLOPs of the run, which keeps planning near a tenth of the run at
# 10 GFLOP/s (benchmarks/einsum_planning.py measures both); at most 120_000 units.
# A search is worth it from the work of a greedy path: it starts by re-planning the
# costliest subtrees of that one.
_AUTO_FLOPS_PER_WORK, _AUTO_MAX_WORK = 250_000, 120_000

_HYPER_DP_PAIRS = 500_000  # dp for up to thirty operands: seconds at most

HYPER_DEFAULT_WORK = 1_000_000
"""Work units of ``hyper`` without ``max_time`` (a few seconds), deterministic."""


def _reconfigure(net: BitNetwork) -> int:
    """Re-plan the subtrees of the path planned in ``net``; return its cost."""
    tree = ContractionTree.from_path(net)
    if tree is None:  # the memory limit made one step of several
        return net.cost()
    tree.improve(_AUTO_PARTS, _AUTO_ROUNDS)
    tree.emit()
    return tree.cost()


def _improve_small(net: BitNetwork, n: int) -> int:
    """Re-plan the greedy path of up to twenty operands, and a second one when costly."""
    cost = _reconfigure(net)
    if cost >= n * _AUTO_RECONFIGURE_FLOPS:
        first, net.ssa = net.ssa, []
        plan_greedy(net, weight=0)
        second = _reconfigure(net)
        if second >= cost:
            net.ssa = first
        cost = min(cost, second)
    return cost


def _improve_large(net: BitNetwork, n: int) -> int:
    """Search in proportion to the greedy path's cost past twenty operands."""
    cost = net.cost()
    work = min(cost // _AUTO_FLOPS_PER_WORK, _AUTO_MAX_WORK)
    if net.limit is None and work >= greedy_work(n):
        search(net, Effort(work))
        return net.cost()
    if cost >= n * _AUTO_RECONFIGURE_FLOPS:
        return _reconfigure(net)
    return cost


def plan_auto(net: BitNetwork) -> None:
    """Plan exactly when that is cheap, else improve greedy paths as far as it pays."""
    n = len(net.inputs)
    if n <= _AUTO_OPTIMAL_MAX:
        plan_optimal(net)
        return
    plan_greedy(net)
    if n <= _AUTO_DP_FIRST[0] and improve_by_dp(net, _AUTO_DP_FIRST[1]):
        return
    cost = _improve_small(net, n) if n <= _AUTO_RECONFIGURE_MAX else _improve_large(net, n)
    budget = min(cost // _AUTO_FLOPS_PER_PAIR, _AUTO_MAX_PAIRS)
    if n <= _AUTO_DP_MAX and budget >= _AUTO_MIN_PAIRS:
        improve_by_dp(net, budget)


def plan_hyper(net: BitNetwork, max_time: float | None = None) -> None:
    """Search for a cheap tree for a network contracted many times.

    Args:
        net: The network. Up to twenty operands, or under a memory limit (which
            the search does not check), ``auto``'s path improved by ``dp``.
        max_time: Seconds to search (wall time: the path then depends on the
            machine's speed); None: `HYPER_DEFAULT_WORK` units of work.
    """
    if len(net.inputs) <= _AUTO_RECONFIGURE_MAX or net.limit is not None:
        plan_auto(net)
        if len(net.inputs) <= _AUTO_DP_MAX:
            improve_by_dp(net, _HYPER_DP_PAIRS)
        return
    if max_time is None:
        effort = Effort(HYPER_DEFAULT_WORK)
    else:
        effort = Effort(1 << 62, time.perf_counter() + max_time)
    search(net, effort)
