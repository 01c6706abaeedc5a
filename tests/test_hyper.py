"""Tests of the large-network search, its randomness, the partitioner, and ``hyper``.

Costs are deterministic (work is counted, not timed), so the bounds below are exact
assertions, not timings.
"""

from __future__ import annotations

import math
import string

import numpy as np
import pytest

from tensorops._einsum.planning._bitnet import BitNetwork
from tensorops._einsum.planning._cost import (
    contraction_steps,
    sliced_contraction_steps,
    total_flops,
)
from tensorops._einsum.planning._greedy import plan_greedy
from tensorops._einsum.planning._hyper import Effort, network_seed, random_scorer, search
from tensorops._einsum.planning._partition import Hypergraph, bisect, partition_tree
from tensorops._einsum.planning._paths import plan_contraction
from tensorops._einsum.planning._prng import FIXED, GUMBEL, Random, fingerprint, log2_fixed
from tensorops._einsum.planning._reconfigure import ContractionTree
from tests.test_paths import Network, find_path, grid, random_network, ring

# --- the random numbers ------------------------------------------------------------------


def test_splitmix64_matches_its_reference_sequence() -> None:
    rng = Random(0)
    assert [rng.next() for _ in range(3)] == [
        0xE220A8397B1DCDAF,
        0x6E789E6AA1B965F4,
        0x06C45D188009454F,
    ]


def test_draws_stay_in_range() -> None:
    rng = Random(7)
    draws = [rng.below(6) for _ in range(600)]
    assert set(draws) == set(range(6))
    assert all(80 <= draws.count(value) <= 120 for value in range(6))
    assert list(GUMBEL) == sorted(GUMBEL)


def test_fixed_point_logarithm() -> None:
    for x in (1, 2, 3, 5, 255, 256, 257, 1000, 12345, 10**12, 3**40):
        assert abs(log2_fixed(x) - FIXED * math.log2(x)) <= 2
    assert log2_fixed(0) == 0


def test_fingerprint_is_stable_and_tells_networks_apart() -> None:
    assert fingerprint([1, 2, 3]) == fingerprint([1, 2, 3])
    assert fingerprint([1, 2, 3]) != fingerprint([1, 3, 2])
    assert fingerprint([1 << 200]) != fingerprint([1 << 201])
    first = BitNetwork(*ring(10))
    assert network_seed(first) == network_seed(BitNetwork(*ring(10)))
    assert network_seed(first) != network_seed(BitNetwork(*ring(11)))


# --- the search ---------------------------------------------------------------------------


def cost(network: Network, path: list[tuple[int, ...]]) -> int:
    return total_flops(contraction_steps(*network, path))


def searched(network: Network, work: int, seed: int | None = None) -> list[tuple[int, ...]]:
    net = BitNetwork(*network)
    search(net, Effort(work), seed)
    return net.linear_path()


LARGE = [random_network(40, 1), random_network(60, 2, regularity=4), grid(6, 7), ring(50)]


@pytest.mark.parametrize("index", range(len(LARGE)))
def test_search_never_loses_to_greedy_and_is_deterministic(index: int) -> None:
    network = LARGE[index]
    greedy = cost(network, find_path(*network, "greedy"))
    path = searched(network, 20_000)
    assert cost(network, path) <= greedy
    assert searched(network, 20_000) == path
    more = searched(network, 60_000)
    assert cost(network, more) <= greedy


def test_search_respects_its_budget() -> None:
    net = BitNetwork(*random_network(40, 3))
    effort = Effort(5_000)
    search(net, effort)
    # each pass stops once over budget; the last greedy path or subset search may overshoot
    assert effort.spent <= 5_000 + 2 * 40 * 40 + 200


def test_randomised_greedy_paths_are_valid_and_differ() -> None:
    network = random_network(30, 4)
    paths = set()
    for seed in range(6):
        net = BitNetwork(*network)
        plan_greedy(net, scorer=random_scorer(Random(seed), 16, 16))
        path = net.linear_path()
        assert contraction_steps(*network, path)[-1].result == network[1]
        paths.add(tuple(path))
    assert len(paths) > 1


def test_searched_paths_run_in_numpy() -> None:
    inputs, output, sizes = random_network(24, 9)
    small = {axis: 1 + size % 3 for axis, size in sizes.items()}
    path = searched((inputs, output, small), 30_000)
    assert len(small) <= len(string.ascii_letters)
    letters = dict(zip(sorted(small), string.ascii_letters, strict=False))
    equation = ",".join("".join(letters[a] for a in t) for t in inputs)
    equation += "->" + "".join(letters[a] for a in output)
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(tuple(small[a] for a in t)) for t in inputs]
    expected = np.einsum(equation, *arrays, optimize="greedy")
    actual = np.einsum(equation, *arrays, optimize=["einsum_path", *path])
    np.testing.assert_allclose(actual, expected, rtol=1e-8, atol=1e-10)


def test_auto_searches_costly_large_networks() -> None:
    # 3-regular random networks of 40 tensors with bonds of 6 to 9: greedy paths of
    # 1e12 FLOPs and more, where a search is well worth its time
    improved = 0
    for seed in range(3):
        inputs, output, sizes = random_network(40, 20 + seed)
        network = (inputs, output, {axis: 6 + size % 4 for axis, size in sizes.items()})
        greedy = cost(network, find_path(*network, "greedy"))
        auto = cost(network, find_path(*network, "auto"))
        assert auto <= greedy
        improved += auto < greedy
    assert improved >= 2


def test_hyper_with_a_time_limit_gives_a_valid_path() -> None:
    network = random_network(45, 6)
    path = find_path(*network, "hyper", max_time=0.2)
    assert contraction_steps(*network, path)[-1].result == network[1]
    assert cost(network, path) <= cost(network, find_path(*network, "greedy"))


def test_hyper_on_small_networks_is_at_least_as_good_as_auto() -> None:
    for seed in range(3):
        network = random_network(14, 40 + seed)
        assert cost(network, find_path(*network, "hyper")) <= cost(
            network, find_path(*network, "auto")
        )


@pytest.mark.parametrize("index", range(len(LARGE)))
def test_partition_strategy_beats_greedy_and_is_deterministic(index: int) -> None:
    network = LARGE[index]
    path = find_path(*network, "partition")
    assert contraction_steps(*network, path)[-1].result == network[1]
    assert cost(network, path) <= cost(network, find_path(*network, "greedy"))
    assert find_path(*network, "partition") == path
    assert find_path(*network, "partition", seed=5) == find_path(*network, "partition", seed=5)


def test_partition_strategy_on_small_or_limited_networks_plans_as_auto() -> None:
    small = random_network(14, 41)
    assert find_path(*small, "partition") == find_path(*small, "auto")
    inputs, output, sizes = random_network(40, 12)
    limited = plan_contraction(inputs, output, sizes, "partition", memory_limit=10_000)
    steps = sliced_contraction_steps(
        inputs, output, sizes, limited.path, frozenset(limited.sliced_axes)
    )
    assert steps.largest_intermediate <= 10_000


def test_partition_trees_differ_by_seed() -> None:
    network = random_network(60, 13)
    paths = {tuple(find_path(*network, "partition", seed=seed)) for seed in range(4)}
    assert len(paths) > 1


def test_combo_objective_reaches_the_search() -> None:
    network = random_network(40, 11)
    flops_path = find_path(*network, "auto")
    combo_path = find_path(*network, "auto", minimize="combo")
    for path in (flops_path, combo_path):
        assert contraction_steps(*network, path)[-1].result == network[1]
    assert plan_contraction(*network, "greedy", minimize="combo").sliced_axes == ()


# --- the partitioner ----------------------------------------------------------------------


def test_bisection_of_a_ring_cuts_two_edges() -> None:
    n = 24
    graph = Hypergraph([1] * n, [[i, (i + 1) % n] for i in range(n)], [10] * n)
    for seed in range(4):
        side = bisect(graph, Random(seed), 10, 2)
        assert graph.cut(side) == 20
        assert 10 <= sum(side) <= 14  # 12, give or take 10 % (rounded out)


def test_bisection_keeps_the_balance() -> None:
    net = BitNetwork(*grid(8, 8))
    members = list(range(len(net.inputs)))
    from tensorops._einsum.planning._partition import _hypergraph

    graph = _hypergraph(net, members, net.holders(members))
    for imbalance in (5, 10, 40):
        side = bisect(graph, Random(imbalance), imbalance, 2)
        half = len(members) / 2
        assert abs(sum(side) - half) <= half * imbalance / 100 + 1  # one vertex of slack
        assert graph.cut(side) <= 10 * 256  # a straight cut of an 8 x 8 grid is 8 edges


def test_partition_trees_are_complete_trees() -> None:
    for network in (grid(5, 6), random_network(30, 5)):
        net = BitNetwork(*network)
        split = partition_tree(net, Random(1), 20, 4)
        assert len(split) == len(net.inputs) - 1
        tree = ContractionTree(net, split)
        tree.emit()
        path = net.linear_path()
        assert cost(network, path) == tree.cost()
