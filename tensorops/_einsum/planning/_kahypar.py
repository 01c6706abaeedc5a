"""Bisection by KaHyPar, the optional partitioner of the ``partition`` extra.

KaHyPar (Schlag et al., ALENEX 2016; the n-level multilevel hypergraph
partitioner) finds smaller cuts than `_partition`'s own Fiduccia-Mattheyses
bisector on large lattices and random regular networks, where balanced cuts
decide the cost of a contraction tree. It is imported on first use, never by
``import tensorops``; without it, `bisector` returns None and trees come from the
pure-Python bisector.

Its settings are those of ``kahypar_bisect.ini`` (package data, beside this
module): multilevel recursive bisection with community-guided coarsening and
flow-based refinement, minimising the cut; the balance and the seed are set per
call.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

from tensorops._einsum.planning._partition import Hypergraph
from tensorops._einsum.planning._prng import Random
from tensorops._staging import constant_result

__all__ = ["CONFIG", "Bisector", "bisector"]

CONFIG = Path(__file__).with_name("kahypar_bisect.ini")
"""KaHyPar's settings for one bisection (package data)."""

Bisector = Callable[[Hypergraph, Random, int], list[int]]
"""A bisection: the hypergraph, randomness, the imbalance in percent; a side per vertex."""

_SEED_RANGE = (1 << 31) - 1  # KaHyPar's seed is a C int


def bisector() -> Bisector | None:
    """KaHyPar's bisection, or None if ``kahypar`` is not installed.

    Example:
        >>> from tensorops._einsum.planning._kahypar import bisector
        >>> from tensorops._einsum.planning._partition import Hypergraph
        >>> from tensorops._einsum.planning._prng import Random
        >>> split = bisector()
        >>> ring = Hypergraph([1] * 8, [[i, (i + 1) % 8] for i in range(8)], [1] * 8)
        >>> split is None or ring.cut(split(ring, Random(0), 10)) == 2
        True
    """
    if not _installed():
        return None

    def split(graph: Hypergraph, rng: Random, imbalance: int) -> list[int]:
        edges = tuple(tuple(pins) for pins in graph.edges)
        weights = (tuple(graph.vertex_weights), tuple(graph.edge_weights))
        return list(_bisect(edges, weights, rng.below(_SEED_RANGE), imbalance))

    return split


@constant_result
def _installed() -> bool:
    """Whether ``kahypar`` can be imported (run by Dynamo itself under torch.compile)."""
    try:
        importlib.import_module("kahypar")
    except ImportError:
        return False
    return True


@constant_result
def _bisect(
    edges: tuple[tuple[int, ...], ...],
    weights: tuple[tuple[int, ...], tuple[int, ...]],
    seed: int,
    imbalance: int,
) -> tuple[int, ...]:
    """Split a hypergraph in two by KaHyPar; a side (0 or 1) per vertex.

    Plain data in and out: under torch.compile (a traced planner) Dynamo runs this
    itself instead of tracing into KaHyPar's C++ extension.
    """
    kahypar = importlib.import_module("kahypar")
    vertex_weights, edge_weights = weights
    n = len(vertex_weights)
    if n < 2 or not edges:  # KaHyPar needs a net: halve a graph without any
        return (0,) * (n - n // 2) + (1,) * (n // 2)
    offsets, pins = [0], list[int]()
    for edge in edges:
        pins.extend(edge)
        offsets.append(len(pins))
    hypergraph = kahypar.Hypergraph(
        n, len(edges), offsets, pins, 2, list(edge_weights), list(vertex_weights)
    )
    context = kahypar.Context()
    context.loadINIconfiguration(str(CONFIG))
    context.setK(2)
    context.setSeed(seed)
    context.setEpsilon(max(imbalance, 1) / 100)
    context.suppressOutput(True)
    kahypar.partition(hypergraph, context)
    return tuple(hypergraph.blockID(v) for v in range(n))
