"""Tests of the partition trees: both bisectors (KaHyPar and the own one), leaves, seeds.

A tree is checked by contracting along it with NumPy and comparing with
``np.einsum`` in one call; cuts are checked on graphs whose best cut is known.
"""

from __future__ import annotations

import string
import subprocess
import sys

import numpy as np
import pytest

from tensorops._einsum.planning import _kahypar
from tensorops._einsum.planning._bitnet import BitNetwork
from tensorops._einsum.planning._hyper import Effort, search
from tensorops._einsum.planning._partition import Hypergraph, bisect, partition_tree
from tensorops._einsum.planning._prng import Random
from tensorops._einsum.planning._reconfigure import ContractionTree
from tests.test_hyper import cost
from tests.test_paths import Network, find_path, grid, random_network

HAS_KAHYPAR = _kahypar.bisector() is not None
needs_kahypar = pytest.mark.skipif(not HAS_KAHYPAR, reason="kahypar is not installed")


def own(graph: Hypergraph, rng: Random, imbalance: int) -> list[int]:
    return bisect(graph, rng, imbalance, 2)


def bisectors() -> list[object]:
    found = _kahypar.bisector()
    return [None, own] + ([found] if found is not None else [])


def contract_along(network: Network, path: list[tuple[int, ...]], seed: int) -> np.ndarray:
    """Contract random operands step by step along ``path``, and check the result."""
    inputs, output, sizes = network
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal([sizes[a] for a in term]) for term in inputs]
    symbols: dict[str, str] = {}
    for axis in [a for t in inputs for a in t] + list(output):
        symbols.setdefault(axis, (string.ascii_letters + " " * len(symbols))[len(symbols)])
    if " " in symbols.values():
        pytest.skip("too many axes for one np.einsum call")
    terms = ["".join(symbols[a] for a in t) for t in inputs]
    equation = ",".join(terms) + "->" + "".join(symbols[a] for a in output)
    expected = np.einsum(equation, *arrays, optimize="greedy")
    live = list(zip(terms, arrays, strict=True))
    out = "".join(symbols[a] for a in output)
    for step in path:
        picked = [live[i] for i in step]
        for i in sorted(step, reverse=True):
            del live[i]
        rest = set("".join(t for t, _ in live) + out)
        kept = "".join(dict.fromkeys(c for t, _ in picked for c in t if c in rest))
        value = np.einsum(",".join(t for t, _ in picked) + "->" + kept, *(a for _, a in picked))
        live.append((kept, value))
    (term, value), *extra = live
    assert not extra
    np.testing.assert_allclose(np.einsum(term + "->" + out, value), expected, rtol=1e-9)
    return expected


def small_networks() -> list[Network]:
    triangles = [("a", "b"), ("b", "c"), ("c", "a"), ("a", "x"), ("x", "d", "e")]
    ring_of_cliques = [*triangles, ("d", "f"), ("e", "f"), ("f", "g"), ("g", "h"), ("h", "i", "o")]
    sizes = {name: 2 + i % 2 for i, name in enumerate("abcdefghiox")}

    def small_axes(network: Network) -> Network:  # intermediates of a bad tree stay small
        return network[0], network[1], dict.fromkeys(network[2], 2)

    return [
        small_axes(random_network(14, 3, regularity=3)),
        small_axes(random_network(16, 4, n_out=1, regularity=4)),
        grid(3, 4),
        (ring_of_cliques, ("o",), sizes),
    ]


@pytest.mark.parametrize("index", range(4))
@pytest.mark.parametrize("leaf_size", [2, 3, 8])
def test_every_contraction_of_a_partition_tree_is_right(index: int, leaf_size: int) -> None:
    network = small_networks()[index]
    for split_by in bisectors():
        for log_weights in (True, False):
            net = BitNetwork(*network)
            split = partition_tree(
                net, Random(index), 20, leaf_size, split_by=split_by, log_weights=log_weights
            )  # type: ignore[arg-type]
            assert len(split) == len(net.inputs) - 1
            ContractionTree(net, split).emit()
            contract_along(network, net.linear_path(), index)


def two_cliques(k: int) -> Hypergraph:
    """Two cliques of ``k`` vertices joined by one light edge: the best cut is that edge."""
    edges = [[i, j] for i in range(k) for j in range(i + 1, k)]
    edges += [[k + i, k + j] for i in range(k) for j in range(i + 1, k)]
    return Hypergraph([1] * (2 * k), [*edges, [k - 1, k]], [5] * len(edges) + [1])


@pytest.mark.parametrize("which", ["own", "kahypar"])
def test_bisections_find_the_known_best_cuts(which: str) -> None:
    if which == "kahypar" and not HAS_KAHYPAR:
        pytest.skip("kahypar is not installed")
    split_by = own if which == "own" else _kahypar.bisector()
    assert split_by is not None
    cliques = two_cliques(8)
    side = split_by(cliques, Random(1), 5)
    assert cliques.cut(side) == 1
    assert sum(side) == 8
    n = 32  # a ring: two edges
    ring = Hypergraph([1] * n, [[i, (i + 1) % n] for i in range(n)], [3] * n)
    side = split_by(ring, Random(2), 10)
    assert ring.cut(side) == 6
    assert 14 <= sum(side) <= 18
    k = 10  # a k x k grid: a straight cut of k edges, halves within 2 %
    edges = [[r * k + c, r * k + c + 1] for r in range(k) for c in range(k - 1)]
    edges += [[r * k + c, (r + 1) * k + c] for r in range(k - 1) for c in range(k)]
    mesh = Hypergraph([1] * k * k, edges, [1] * len(edges))
    side = split_by(mesh, Random(3), 2)
    assert mesh.cut(side) <= k + 2
    assert abs(sum(side) - k * k // 2) <= 1


@needs_kahypar
def test_kahypar_respects_vertex_weights_and_a_graph_without_edges() -> None:
    split_by = _kahypar.bisector()
    assert split_by is not None
    heavy = Hypergraph([6, 1, 1, 1, 1, 1, 1], [[0, 1], [1, 2], [2, 3], [4, 5, 6]], [1, 1, 1, 1])
    side = split_by(heavy, Random(0), 1)
    weights = heavy.vertex_weights
    assert sum(w for w, s in zip(weights, side, strict=True) if s) == 6
    assert split_by(Hypergraph([1] * 5, [], []), Random(0), 10) == [0, 0, 0, 1, 1]


def test_partition_trees_are_deterministic_under_a_seed() -> None:
    net = BitNetwork(*random_network(60, 5))
    for split_by in bisectors():
        trees = [
            partition_tree(net, Random(seed), 10, 4, split_by=split_by)  # type: ignore[arg-type]
            for seed in (7, 7, 8)
        ]
        assert trees[0] == trees[1]
        assert len(trees[2]) == len(net.inputs) - 1


def test_greedy_leaves_in_pieces_are_bisected_instead() -> None:
    # two disconnected chains: the greedy path of the whole joins them in one step,
    # so the part is bisected, and every step stays pairwise
    inputs = [(f"a{i}", f"a{i + 1}") for i in range(5)] + [(f"b{i}", f"b{i + 1}") for i in range(5)]
    sizes = {a: 3 for t in inputs for a in t}
    network: Network = (inputs, ("a0", "b0"), sizes)
    net = BitNetwork(*network)
    split = partition_tree(net, Random(0), 10, 16)
    assert len(split) == len(inputs) - 1
    ContractionTree(net, split).emit()
    contract_along(network, net.linear_path(), 0)


def searched_cost(network: Network, seed: int) -> tuple[list[tuple[int, ...]], int]:
    net = BitNetwork(*network)
    search(net, Effort(400_000), seed=seed)
    path = net.linear_path()
    return path, cost(network, path)


@pytest.mark.parametrize("installed", [False, True])
def test_search_with_and_without_kahypar(installed: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if installed and not HAS_KAHYPAR:
        pytest.skip("kahypar is not installed")
    if not installed:
        monkeypatch.setitem(sys.modules, "kahypar", None)  # import kahypar raises ImportError
        assert _kahypar.bisector() is None
    for network in (grid(6, 6), random_network(40, 6)):
        path, found = searched_cost(network, 3)
        assert searched_cost(network, 3) == (path, found)
        assert found <= cost(network, find_path(*network, "greedy"))
    network = random_network(24, 8, regularity=3)
    contract_along(network, searched_cost(network, 1)[0], 1)


def test_import_tensorops_does_not_import_kahypar() -> None:
    code = "import sys, tensorops; print('kahypar' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
