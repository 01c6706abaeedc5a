"""Contraction path planners for einsum.

Every strategy minimises the cost model of :mod:`tensorops._einsum._cost` over
paths of pairwise steps, where an input may first be summed on its own over axes
that no other operand and not the output has (opt_einsum's "single term"
reductions). Planners work on bitsets and build a path in static single
assignment form (input ``i`` is id ``i``, the result of step ``k`` is id
``n + k``), converted to the NumPy / opt_einsum convention at the end.

Strategies:
    ``optimal``: the exact minimum, by dynamic programming over all subsets of
        operands (outer products included), for up to :data:`OPTIMAL_MAX_OPERANDS`
        (:mod:`~tensorops._einsum._dp`).
    ``dp``: the minimum over paths without outer products inside each connected
        component (Pfeifer et al., Phys. Rev. E 90, 033315, 2014), searched
        cheapest subset first; components are then joined smallest first. Its
        time grows exponentially: fine to about 30 sparsely linked operands. Up
        to five operands it runs the exhaustive search of ``optimal``, faster there.
    ``greedy``: opt_einsum's greedy heuristic, for hundreds of operands
        (:mod:`~tensorops._einsum._greedy`).
    ``auto``: ``optimal`` up to five operands; up to twelve, ``dp`` if it
        finishes within a budget of about a millisecond. Otherwise the greedy
        path, each of its subtrees cut into five parts and re-planned by the
        cheapest order of those (:mod:`~tensorops._einsum._reconfigure`), which
        lands within a few percent of ``dp`` in one to two milliseconds up to
        twenty operands.
        Further effort is sized by the cost of the path so that planning stays
        around a tenth of the run: beyond twenty operands subtrees are re-planned
        only for costly paths, costly networks of up to twenty also re-plan a
        second greedy path, and ``dp`` is tried within a budget in proportion
        to the cost (at most about half a second) up to thirty operands. Each
        step only replaces a path by a cheaper one, so ``auto`` is never worse
        than ``greedy``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from tensorops._einsum._bitnet import BitNetwork
from tensorops._einsum._dp import OPTIMAL_MAX_OPERANDS, improve_by_dp, plan_dp, plan_optimal
from tensorops._einsum._greedy import plan_greedy
from tensorops._einsum._reconfigure import ContractionTree

__all__ = ["OPTIMAL_MAX_OPERANDS", "STRATEGIES", "find_path"]

STRATEGIES: tuple[str, ...] = ("auto", "optimal", "dp", "greedy")

_AUTO_OPTIMAL_MAX = 5
# dp within this many candidate pairs (about a millisecond) is tried first up to
# twelve operands: it fits most such networks and is then exact
_AUTO_DP_FIRST = (12, 10_000)
_AUTO_PARTS, _AUTO_ROUNDS = 5, 3  # re-planning a subtree over 5 parts takes ~50 µs
# Effort beyond that is sized by the path's cost, taking a FLOP to run in ~0.1 ns
# (10 GFLOP/s) and letting planning take about a tenth of the run. Re-planning
# the subtrees of a greedy path takes ~0.1 ms per operand: past twenty operands
# it is done, and up to twenty a second greedy path (smallest result first) is
# re-planned too, for paths of 1e7 FLOPs per operand and more. dp gets a
# candidate pair (~0.5 µs) per 50_000 FLOPs, if that makes 10_000 pairs, as a
# smaller budget seldom completes past twelve operands; pairs cost more as the
# search grows (~10 µs by 100_000 on dense networks), so 50_000 is the most.
_AUTO_RECONFIGURE_MAX, _AUTO_RECONFIGURE_FLOPS = 20, 10_000_000
_AUTO_DP_MAX, _AUTO_FLOPS_PER_PAIR = 30, 50_000
_AUTO_MIN_PAIRS, _AUTO_MAX_PAIRS = 10_000, 50_000

Path = list[tuple[int, ...]]


def _reconfigure(net: BitNetwork) -> int:
    """Re-plan the subtrees of the path planned in ``net``; return its cost."""
    tree = ContractionTree.from_path(net)
    if tree is None:  # the memory limit made one step of several
        return net.cost()
    tree.improve(_AUTO_PARTS, _AUTO_ROUNDS)
    tree.emit()
    return tree.cost()


def _auto(net: BitNetwork) -> None:
    """Plan exactly when that is cheap, else improve greedy paths as far as it pays."""
    n = len(net.inputs)
    if n <= _AUTO_OPTIMAL_MAX:
        plan_optimal(net)
        return
    plan_greedy(net)
    if n <= _AUTO_DP_FIRST[0] and improve_by_dp(net, _AUTO_DP_FIRST[1]):
        return
    worth = n * _AUTO_RECONFIGURE_FLOPS
    if n > _AUTO_RECONFIGURE_MAX:
        cost = net.cost()
        if cost >= worth:
            cost = _reconfigure(net)
    else:
        cost = _reconfigure(net)
        if cost >= worth:
            first, net.ssa = net.ssa, []
            plan_greedy(net, weight=0)
            second = _reconfigure(net)
            if second >= cost:
                net.ssa = first
            cost = min(cost, second)
    budget = min(cost // _AUTO_FLOPS_PER_PAIR, _AUTO_MAX_PAIRS)
    if n <= _AUTO_DP_MAX and budget >= _AUTO_MIN_PAIRS:
        improve_by_dp(net, budget)


_STRATEGIES: dict[str, Callable[[BitNetwork], None]] = {
    "auto": _auto,
    "optimal": plan_optimal,
    "dp": plan_dp,
    "greedy": plan_greedy,
}


def find_path(
    inputs: Sequence[tuple[str, ...]],
    output: tuple[str, ...],
    size_dict: Mapping[str, int],
    strategy: str = "auto",
    memory_limit: int | None = None,
) -> Path:
    """Plan the order in which to contract einsum operands.

    Args:
        inputs: Axes of each operand (distinct within an operand).
        output: Axes of the result.
        size_dict: Size of every axis.
        strategy: One of :data:`STRATEGIES`.
        memory_limit: Most elements any intermediate may have (None: no limit).
            When no pairwise step fits, the path ends with one step over all
            remaining operands.

    Returns:
        The path in the NumPy / opt_einsum convention: each tuple lists positions
        in the current operand list; those operands are removed and the result
        is appended.

    Raises:
        ValueError: For an unknown strategy, no operands, or ``optimal`` on more
            than :data:`OPTIMAL_MAX_OPERANDS` operands.

    Examples:
        Contract the last two matrices first, then the first with their product:

        >>> find_path([("i", "j"), ("j", "k"), ("k", "l")], ("i", "l"),
        ...           {"i": 30, "j": 40, "k": 20, "l": 2})
        [(1, 2), (0, 1)]
    """
    planner = _STRATEGIES.get(strategy)
    if planner is None:
        raise ValueError(f"unknown strategy {strategy!r}; valid strategies are {STRATEGIES}")
    if not inputs:
        raise ValueError("a contraction needs at least one operand")
    if len(inputs) <= 2:
        return [tuple(range(len(inputs)))]
    net = BitNetwork(inputs, output, size_dict, memory_limit)
    planner(net)
    return net.linear_path()
