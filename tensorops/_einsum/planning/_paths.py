"""Contraction path planners for einsum: the entry points.

Every strategy minimises the cost model of `tensorops._einsum.planning._cost` over
paths of pairwise steps, where an input may first be summed on its own over axes
that no other operand and not the output has (opt_einsum's "single term"
reductions). Planners work on bitsets (`_bitnet`) and
build a path in static single assignment form, converted to the NumPy /
opt_einsum convention at the end.

Strategies:
    ``optimal``: the exact minimum, by dynamic programming over all subsets of
        operands (outer products included), for up to `OPTIMAL_MAX_OPERANDS`
        (`_dp`).
    ``dp``: the minimum over paths without outer products inside each connected
        component (Pfeifer et al., Phys. Rev. E 90, 033315, 2014), searched
        cheapest subset first; components are then joined smallest first. Its
        time grows exponentially: fine to about 30 sparsely linked operands. Up
        to five operands it runs the exhaustive search of ``optimal``, faster there.
    ``greedy``: opt_einsum's greedy heuristic, for hundreds of operands
        (`_greedy`).
    ``auto``: exact for a few operands, then greedy paths improved as far as the
        contraction's cost pays for; past twenty operands a search for
        hyper-optimised trees (`_auto`). Deterministic.
    ``hyper``: the same search with a larger budget or a time limit, for a large
        network contracted many times (`plan_hyper`).
    ``partition``: past twenty operands, the cheapest of a few trees by recursive
        bisection of the network's hypergraph, settled by subtree reconfiguration
        (`plan_partition`): between ``auto`` and ``hyper`` in cost and time.

``minimize="combo"`` makes the planners minimise FLOPs plus
`COMBO_WRITE_WEIGHT` times the elements written to intermediates.

Under a memory limit, the path is planned without one first; if some intermediate
does not fit, both a path planned under the limit and sliced paths
(`_slicing`) are considered, and the cheapest in total is
taken: a plan never falls back to one step over all operands.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

from tensorops._einsum.planning._auto import plan_auto, plan_hyper, plan_partition
from tensorops._einsum.planning._bitnet import BitNetwork
from tensorops._einsum.planning._dp import OPTIMAL_MAX_OPERANDS, plan_dp, plan_optimal
from tensorops._einsum.planning._greedy import plan_greedy
from tensorops._einsum.planning._slicing import (
    choose_slices,
    fits,
    is_pairwise,
    sliced_cost,
    steps_of,
)
from tensorops._types import PLANNERS

__all__ = [
    "COMBO_WRITE_WEIGHT",
    "MINIMIZE",
    "OPTIMAL_MAX_OPERANDS",
    "PLANNERS",
    "PlannedPath",
    "plan_contraction",
    "slice_path",
]

MINIMIZE: tuple[str, ...] = ("flops", "combo")

COMBO_WRITE_WEIGHT = 64
"""FLOPs that writing one element of an intermediate is worth under ``minimize="combo"``."""

Path = list[tuple[int, ...]]
Planner = Callable[[BitNetwork], object]


class PlannedPath(NamedTuple):
    """A contraction path, and the axes to slice so that it fits the memory limit.

    Attributes:
        path: The path in the NumPy / opt_einsum convention, for the network
            without the sliced axes (the positions are those of the full network).
        sliced_axes: Axes fixed to each of their values in turn (in order of first
            appearance); empty when the contraction runs in one piece. A sliced
            axis is removed from every operand that has it, and from the output:
            each slice contracts the operands indexed at one value; results of
            slices are summed over a summed axis and placed side by side along an
            output axis.
    """

    path: tuple[tuple[int, ...], ...]
    sliced_axes: tuple[str, ...]


_PLANNERS: dict[str, Planner] = {
    "auto": plan_auto,
    "optimal": plan_optimal,
    "dp": plan_dp,
    "greedy": plan_greedy,
}


def _planner(strategy: str, max_time: float | None, seed: int | None = None) -> Planner:
    if strategy == "hyper":
        return lambda net: plan_hyper(net, max_time, seed)
    if max_time is not None:
        raise ValueError(f"max_time applies to strategy 'hyper' only, not {strategy!r}")
    if strategy == "partition":
        return lambda net: plan_partition(net, seed)
    if seed is not None:
        raise ValueError(
            f"seed applies to strategies 'hyper' and 'partition' only, not {strategy!r}"
        )
    found = _PLANNERS.get(strategy)
    if found is None:
        raise ValueError(f"unknown strategy {strategy!r}; valid strategies are {PLANNERS}")
    return found


def _write_weight(minimize: str) -> int:
    if minimize not in MINIMIZE:
        raise ValueError(f"unknown objective {minimize!r}; valid values are {MINIMIZE}")
    return COMBO_WRITE_WEIGHT if minimize == "combo" else 0


def _sliced_network(
    inputs: Sequence[tuple[str, ...]], output: tuple[str, ...], sliced: frozenset[str]
) -> tuple[list[tuple[str, ...]], tuple[str, ...]]:
    kept_inputs = [tuple(a for a in axes if a not in sliced) for axes in inputs]
    return kept_inputs, tuple(a for a in output if a not in sliced)


def _names(net: BitNetwork, mask: int) -> tuple[str, ...]:
    return tuple(axis for i, axis in enumerate(net.axes) if mask >> i & 1)


def _cheapest_sliced(
    inputs: Sequence[tuple[str, ...]],
    output: tuple[str, ...],
    size_dict: Mapping[str, int],
    planner: Planner,
    limit: int,
    weight: int,
) -> tuple[int, Path, tuple[str, ...]]:
    """Plan under ``limit``: the cheapest of a limited path and sliced paths.

    The unlimited path is sliced until it fits; then the network sliced by each
    prefix of those axes is planned again under the limit, as a network with
    fewer axes often has a path that fits with fewer slices.

    Returns:
        The total cost, the path and the sliced axes.
    """
    free = BitNetwork(inputs, output, size_dict, None, weight)
    planner(free)
    steps = steps_of(free)
    if fits(free, steps, limit):
        return free.cost(), free.linear_path(), ()
    options: list[tuple[int, Path, tuple[str, ...]]] = []
    limited = BitNetwork(inputs, output, size_dict, limit, weight)
    planner(limited)
    limited_steps = steps_of(limited)
    if is_pairwise(limited_steps) and fits(limited, limited_steps, limit):
        options.append((limited.cost(), limited.linear_path(), ()))
    chosen = choose_slices(free, steps, limit)
    sliced = sum(chosen)
    options.append((sliced_cost(free, steps, sliced), free.linear_path(), _names(free, sliced)))
    prefix = 0
    for bit in chosen:
        prefix |= bit
        names = _names(free, prefix)
        smaller_inputs, smaller_output = _sliced_network(inputs, output, frozenset(names))
        smaller = BitNetwork(smaller_inputs, smaller_output, size_dict, limit, weight)
        planner(smaller)
        again = steps_of(smaller)
        if is_pairwise(again) and fits(smaller, again, limit):
            options.append((free.size(prefix) * smaller.cost(), smaller.linear_path(), names))
    options.sort(key=lambda option: option[0])  # stable: the first of equals wins
    return options[0]


def plan_contraction(
    inputs: Sequence[tuple[str, ...]],
    output: tuple[str, ...],
    size_dict: Mapping[str, int],
    strategy: str = "auto",
    memory_limit: int | None = None,
    *,
    max_time: float | None = None,
    minimize: str = "flops",
    seed: int | None = None,
    write_weight: int = 0,
    slicing: bool = True,
) -> PlannedPath:
    """Plan the order in which to contract einsum operands, and what to slice.

    Args:
        inputs: Axes of each operand (an axis repeated within an operand counts once).
        output: Axes of the result.
        size_dict: Size of every axis.
        strategy: One of `PLANNERS`.
        memory_limit: Most elements any intermediate but the final result may
            have, per slice (None: no limit). Axes are sliced only when no
            cheaper pairwise path fits.
        max_time: Seconds ``hyper`` may search (None: a fixed amount of work).
        minimize: ``"flops"``, or ``"combo"`` for FLOPs plus
            `COMBO_WRITE_WEIGHT` per element written.
        seed: Seed of ``hyper``'s search (None: derived from the network).
        write_weight: FLOPs each element of an intermediate costs on top of the
            objective's (a semiring's exp and log of it, `tensorops._einsum.equations._semiring`).
        slicing: Whether axes may be sliced. Without (the path opt_einsum's protocol
            asks for, where the caller cannot slice), every intermediate fits
            ``memory_limit`` where a path allows it; where none does, the operands
            that cannot be paired within it are contracted in one last step, as
            opt_einsum's own optimizers do.

    Returns:
        The path in the NumPy / opt_einsum convention (each tuple lists positions in
        the current operand list; those operands are removed and the result is
        appended) and the sliced axes. Under a memory limit that needs slicing, the
        path is that of each slice.

    Raises:
        ValueError: For an unknown strategy or objective, ``max_time`` with
            another strategy than ``hyper``, no operands, or ``optimal`` on more
            than `OPTIMAL_MAX_OPERANDS` operands.

    Examples:
        Contract the last two matrices first, then the first with their product:

        >>> plan_contraction([("i", "j"), ("j", "k"), ("k", "l")], ("i", "l"),
        ...                  {"i": 30, "j": 40, "k": 20, "l": 2}).path
        ((1, 2), (0, 1))

        A ring of matrices whose products do not fit: one axis is sliced.

        >>> ring = [("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")]
        >>> plan_contraction(ring, (), dict.fromkeys("abcd", 100), memory_limit=1000)
        PlannedPath(path=((0, 3), (1, 2), (0, 1)), sliced_axes=('b',))
    """
    if not slicing and memory_limit is not None and len(inputs) > 2:
        weight = _write_weight(minimize) + write_weight
        net = BitNetwork(inputs, output, size_dict, memory_limit, weight)
        _planner(strategy, max_time, seed)(net)
        return PlannedPath(tuple(net.linear_path()), ())
    path, sliced = _plan(
        inputs, output, size_dict, strategy, memory_limit if slicing else None,
        max_time, minimize, seed, write_weight,
    )  # fmt: skip
    return PlannedPath(tuple(path), sliced)


def _plan(
    inputs: Sequence[tuple[str, ...]],
    output: tuple[str, ...],
    size_dict: Mapping[str, int],
    strategy: str,
    memory_limit: int | None,
    max_time: float | None,
    minimize: str,
    seed: int | None = None,
    write_weight: int = 0,
) -> tuple[Path, tuple[str, ...]]:
    planner = _planner(strategy, max_time, seed)
    weight = _write_weight(minimize) + write_weight
    if not inputs:
        raise ValueError("a contraction needs at least one operand")
    if len(inputs) <= 2:
        return [tuple(range(len(inputs)))], ()
    if memory_limit is None:
        net = BitNetwork(inputs, output, size_dict, None, weight)
        planner(net)
        return net.linear_path(), ()
    _, path, sliced = _cheapest_sliced(inputs, output, size_dict, planner, memory_limit, weight)
    return path, sliced


def slice_path(
    inputs: Sequence[tuple[str, ...]],
    output: tuple[str, ...],
    size_dict: Mapping[str, int],
    path: Sequence[Sequence[int]],
    memory_limit: int,
    *,
    minimize: str = "flops",
    write_weight: int = 0,
) -> PlannedPath:
    """Choose axes to slice so that a given pairwise path fits a memory limit.

    Args:
        inputs: Axes of each operand.
        output: Axes of the result.
        size_dict: Size of every axis.
        path: A valid path in the NumPy / opt_einsum convention; it is kept.
        memory_limit: Most elements any intermediate but the last may have.
        minimize: As for `plan_contraction`.
        write_weight: As for `plan_contraction`.

    Returns:
        The path and the axes to slice (none if it fits already).
    """
    net = BitNetwork(inputs, output, size_dict, None, _write_weight(minimize) + write_weight)
    alive = list(range(len(inputs)))
    for number, entry in enumerate(path, len(inputs)):
        positions = sorted(entry, reverse=True)
        net.ssa.append(tuple(sorted(alive[p] for p in positions)))
        for p in positions:
            del alive[p]
        alive.append(number)
    sliced = sum(choose_slices(net, steps_of(net), memory_limit))
    return PlannedPath(tuple(tuple(entry) for entry in path), _names(net, sliced))
